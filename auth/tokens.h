// Bearer tokens and the tokens file. The server keeps only SHA-256
// digests, one per line of its tokens file ("<sha256 hex> <role> <name>",
// mode 0600, written by `tunefleet token add`).
#ifndef TUNEFLEET_AUTH_TOKENS_H_
#define TUNEFLEET_AUTH_TOKENS_H_

#include <array>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "auth/roles.h"

namespace tunefleet::auth {

// A token's SHA-256 digest.
using TokenDigest = std::array<unsigned char, 32>;
TokenDigest DigestToken(absl::string_view token);
// The digest as 64 lowercase hex digits (what the tokens file holds).
std::string HashToken(absl::string_view token);

// A new random token: 32 bytes from RAND_bytes, base64url without padding
// (43 characters). Errors: INTERNAL when OpenSSL has no randomness.
absl::StatusOr<std::string> GenerateToken();

// OK for 1..64 characters of [A-Za-z0-9._@-]; else INVALID_ARGUMENT.
absl::Status ValidateTokenName(absl::string_view name);

// One line of the tokens file.
struct TokenEntry {
  TokenDigest digest{};
  Role role = Role::kReader;
  std::string name;

  // The entry for a plaintext token.
  static TokenEntry ForToken(absl::string_view token, Role role,
                             std::string name);
  std::string hash_hex() const;
  // "<sha256 hex> <role> <name>"
  std::string Line() const;
};

// The tokens a server accepts. Add() is not thread-safe; a built set is
// shared read-only (std::shared_ptr<const TokenSet>) and safe to read from
// any thread.
class TokenSet {
 public:
  // Parses the tokens file format: one "<sha256 hex> <role> <name>" per
  // line; blank lines and lines starting with '#' are skipped. `origin`
  // names the text in errors. Errors: INVALID_ARGUMENT naming the line.
  static absl::StatusOr<TokenSet> Parse(absl::string_view text,
                                        absl::string_view origin);
  // Reads and parses a tokens file. Errors: NOT_FOUND; FAILED_PRECONDITION
  // when the file is not a regular file or group/others may access it
  // (it must be mode 0600 or stricter); Parse's errors.
  static absl::StatusOr<TokenSet> Load(const std::string& path);

  // Adds an entry. Errors: INVALID_ARGUMENT for a bad name, a name or
  // digest already present.
  absl::Status Add(TokenEntry entry);

  // The entry whose digest matches `token`'s, or null. Compares against
  // every entry in constant time (CRYPTO_memcmp).
  const TokenEntry* Find(absl::string_view token) const;

  const std::vector<TokenEntry>& entries() const { return entries_; }
  // The file text: a header comment and one line per entry.
  std::string Serialize() const;

 private:
  std::vector<TokenEntry> entries_;
};

// Appends `entry` to the tokens file at `path`, creating it with mode 0600
// (and a header comment) when missing. Errors: FAILED_PRECONDITION when the
// existing file is accessible by group/others; INVALID_ARGUMENT for a name
// or digest already in the file; INTERNAL for I/O failures.
absl::Status AppendTokenToFile(const std::string& path,
                               const TokenEntry& entry);

// Rewrites the tokens file without the entries named `name` (atomically,
// mode 0600) and returns how many were removed. Errors: as Load; NOT_FOUND
// when no entry has that name.
absl::StatusOr<int> RemoveTokenFromFile(const std::string& path,
                                        absl::string_view name);

}  // namespace tunefleet::auth

#endif  // TUNEFLEET_AUTH_TOKENS_H_
