// Ed25519 keys of record bundles (docs/BUNDLES.md): the key a site signs
// its bundles with, and the public keys an importer trusts. Through
// OpenSSL's EVP API (RFC 8032 Ed25519, "pure" mode: the message itself is
// signed, no pre-hash), every OpenSSL object held by an RAII owner.
#ifndef TUNEFLEET_BUNDLE_KEYS_H_
#define TUNEFLEET_BUNDLE_KEYS_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "base/openssl.h"

namespace tunefleet::bundle {

// Raw Ed25519 public key size (RFC 8032): 32 bytes; a signature is 64.
inline constexpr size_t kPublicKeyBytes = 32;
inline constexpr size_t kSignatureBytes = 64;

// A private Ed25519 key, as `openssl genpkey -algorithm ed25519` writes it
// (PEM, PKCS#8, unencrypted).
class SigningKey {
 public:
  // Errors: NOT_FOUND when the file cannot be opened; INVALID_ARGUMENT
  // when it holds no PEM private key or one that is not Ed25519.
  static absl::StatusOr<SigningKey> FromPemFile(const std::string& path);
  // As FromPemFile, from PEM text.
  static absl::StatusOr<SigningKey> FromPem(absl::string_view pem,
                                            absl::string_view what = "key");

  // The 64-byte Ed25519 signature of `message`. Errors: INTERNAL.
  absl::StatusOr<std::string> Sign(absl::string_view message) const;
  // The raw 32-byte public key.
  const std::string& public_key() const { return public_key_; }

 private:
  SigningKey(base::PkeyPtr key, std::string public_key)
      : key_(std::move(key)), public_key_(std::move(public_key)) {}
  base::PkeyPtr key_;
  std::string public_key_;
};

// True when `signature` is the Ed25519 signature of `message` under the raw
// 32-byte `public_key`; false for a bad signature or a malformed key.
bool VerifySignature(absl::string_view public_key, absl::string_view message,
                     absl::string_view signature);

// The public keys an importer trusts: a file of one or more PEM public keys
// ("-----BEGIN PUBLIC KEY-----", as `openssl pkey -pubout` writes them).
class TrustedKeys {
 public:
  // Errors: NOT_FOUND when the file cannot be opened; INVALID_ARGUMENT when
  // it holds no public key, or one that is not Ed25519.
  static absl::StatusOr<TrustedKeys> FromPemFile(const std::string& path);
  static absl::StatusOr<TrustedKeys> FromPem(absl::string_view pem,
                                             absl::string_view what = "keys");

  // Whether the raw 32-byte `public_key` is one of them.
  bool Contains(absl::string_view public_key) const;
  size_t size() const { return keys_.size(); }

 private:
  std::vector<std::string> keys_;  // raw 32-byte keys
};

}  // namespace tunefleet::bundle

#endif  // TUNEFLEET_BUNDLE_KEYS_H_
