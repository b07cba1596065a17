#include "bundle/keys.h"

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "base/files.h"
#include "base/openssl.h"
#include "base/status_macros.h"

namespace tunefleet::bundle {
namespace {

using base::BioPtr;
using base::MdCtxPtr;
using base::MemoryBio;
using base::PkeyPtr;

// The raw public key of an Ed25519 key; empty if it is not one.
std::string RawPublicKey(EVP_PKEY* key) {
  if (EVP_PKEY_id(key) != EVP_PKEY_ED25519) return "";
  std::string raw(kPublicKeyBytes, '\0');
  size_t size = raw.size();
  if (EVP_PKEY_get_raw_public_key(
          key, reinterpret_cast<unsigned char*>(raw.data()), &size) != 1 ||
      size != kPublicKeyBytes) {
    return "";
  }
  return raw;
}

absl::StatusOr<std::string> ReadKeyFile(const std::string& path) {
  return base::ReadWholeFile(path, "key file");
}

}  // namespace

absl::StatusOr<SigningKey> SigningKey::FromPemFile(const std::string& path) {
  TUNEFLEET_ASSIGN_OR_RETURN(std::string text, ReadKeyFile(path));
  return FromPem(text, path);
}

absl::StatusOr<SigningKey> SigningKey::FromPem(absl::string_view pem,
                                               absl::string_view what) {
  BioPtr bio = MemoryBio(pem);
  PkeyPtr key(
      bio ? PEM_read_bio_PrivateKey(bio.get(), nullptr, nullptr, nullptr)
          : nullptr);
  ERR_clear_error();
  if (key == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat(what,
                     ": no PEM private key (make one with `openssl "
                     "genpkey -algorithm ed25519 -out KEY.pem`)"));
  }
  std::string public_key = RawPublicKey(key.get());
  if (public_key.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(what,
                     ": not an Ed25519 key (bundles are signed with "
                     "Ed25519: `openssl genpkey -algorithm ed25519`)"));
  }
  return SigningKey(std::move(key), std::move(public_key));
}

absl::StatusOr<std::string> SigningKey::Sign(absl::string_view message) const {
  MdCtxPtr ctx(EVP_MD_CTX_new());
  std::string signature(kSignatureBytes, '\0');
  size_t size = signature.size();
  if (ctx == nullptr ||
      EVP_DigestSignInit(ctx.get(), nullptr, nullptr, nullptr, key_.get()) !=
          1 ||
      EVP_DigestSign(ctx.get(),
                     reinterpret_cast<unsigned char*>(signature.data()), &size,
                     reinterpret_cast<const unsigned char*>(message.data()),
                     message.size()) != 1 ||
      size != kSignatureBytes) {
    ERR_clear_error();
    return absl::InternalError("Ed25519 signing failed (OpenSSL)");
  }
  return signature;
}

bool VerifySignature(absl::string_view public_key, absl::string_view message,
                     absl::string_view signature) {
  if (public_key.size() != kPublicKeyBytes ||
      signature.size() != kSignatureBytes) {
    return false;
  }
  PkeyPtr key(EVP_PKEY_new_raw_public_key(
      EVP_PKEY_ED25519, nullptr,
      reinterpret_cast<const unsigned char*>(public_key.data()),
      public_key.size()));
  MdCtxPtr ctx(EVP_MD_CTX_new());
  const bool ok =
      key != nullptr && ctx != nullptr &&
      EVP_DigestVerifyInit(ctx.get(), nullptr, nullptr, nullptr, key.get()) ==
          1 &&
      EVP_DigestVerify(ctx.get(),
                       reinterpret_cast<const unsigned char*>(signature.data()),
                       signature.size(),
                       reinterpret_cast<const unsigned char*>(message.data()),
                       message.size()) == 1;
  ERR_clear_error();
  return ok;
}

absl::StatusOr<TrustedKeys> TrustedKeys::FromPemFile(const std::string& path) {
  TUNEFLEET_ASSIGN_OR_RETURN(std::string text, ReadKeyFile(path));
  return FromPem(text, path);
}

absl::StatusOr<TrustedKeys> TrustedKeys::FromPem(absl::string_view pem,
                                                 absl::string_view what) {
  TrustedKeys trusted;
  BioPtr bio = MemoryBio(pem);
  while (bio != nullptr) {
    PkeyPtr key(PEM_read_bio_PUBKEY(bio.get(), nullptr, nullptr, nullptr));
    if (key == nullptr) break;
    std::string raw = RawPublicKey(key.get());
    if (raw.empty()) {
      ERR_clear_error();
      return absl::InvalidArgumentError(absl::StrCat(
          what, ": key ", trusted.keys_.size() + 1, " is not an Ed25519 key"));
    }
    trusted.keys_.push_back(std::move(raw));
  }
  ERR_clear_error();
  if (trusted.keys_.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        what,
        ": no PEM public key (write one with `openssl pkey -in KEY.pem "
        "-pubout`)"));
  }
  return trusted;
}

bool TrustedKeys::Contains(absl::string_view public_key) const {
  return std::find(keys_.begin(), keys_.end(), public_key) != keys_.end();
}

}  // namespace tunefleet::bundle
