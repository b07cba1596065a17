#include "auth/tokens.h"

#include <fcntl.h>
#include <openssl/crypto.h>
#include <openssl/rand.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "base/files.h"
#include "base/hash.h"

namespace tunefleet::auth {
namespace {

constexpr char kTokensFileHeader[] =
    "# tunefleet-server tokens: \"<sha256 of the token, hex> <role> <name>\" "
    "per line.\n"
    "# Managed with `tunefleet token add|list|remove --tokens FILE`; reload "
    "a running server with SIGHUP.\n";

// OK when `mode` gives group and others no access.
absl::Status CheckPrivateMode(mode_t mode, const std::string& path) {
  if ((mode & 077) != 0) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "tokens file %s is accessible by group or others (mode %04o); run "
        "chmod 600 %s",
        path, static_cast<unsigned>(mode & 07777), path));
  }
  return absl::OkStatus();
}

absl::StatusOr<TokenDigest> ParseDigest(absl::string_view hex) {
  TokenDigest digest{};
  if (hex.size() != 2 * digest.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("expected a SHA-256 digest of 64 hex digits, got ",
                     hex.size(), " characters"));
  }
  for (char c : hex) {
    if (!absl::ascii_isxdigit(static_cast<unsigned char>(c))) {
      return absl::InvalidArgumentError(
          "the SHA-256 digest may hold only hex digits");
    }
  }
  const std::string bytes = absl::HexStringToBytes(hex);
  std::memcpy(digest.data(), bytes.data(), digest.size());
  return digest;
}

}  // namespace

TokenDigest DigestToken(absl::string_view token) {
  TokenDigest digest{};
  const std::string sha = base::Sha256(token);
  std::copy(sha.begin(), sha.end(), digest.begin());
  return digest;
}

std::string HashToken(absl::string_view token) {
  const TokenDigest digest = DigestToken(token);
  return absl::BytesToHexString(absl::string_view(
      reinterpret_cast<const char*>(digest.data()), digest.size()));
}

absl::StatusOr<std::string> GenerateToken() {
  unsigned char bytes[32];
  if (RAND_bytes(bytes, sizeof(bytes)) != 1) {
    return absl::InternalError("RAND_bytes failed: no randomness for a token");
  }
  std::string token;
  absl::WebSafeBase64Escape(
      absl::string_view(reinterpret_cast<const char*>(bytes), sizeof(bytes)),
      &token);
  OPENSSL_cleanse(bytes, sizeof(bytes));
  return token;
}

absl::Status ValidateTokenName(absl::string_view name) {
  if (name.empty() || name.size() > 64) {
    return absl::InvalidArgumentError(absl::StrCat(
        "token name: must be 1..64 characters, got ", name.size()));
  }
  for (char c : name) {
    if (!absl::ascii_isalnum(static_cast<unsigned char>(c)) && c != '.' &&
        c != '_' && c != '-' && c != '@') {
      return absl::InvalidArgumentError(
          absl::StrCat("token name: '", name,
                       "' may hold only letters, digits, '.', '_', '-', '@'"));
    }
  }
  return absl::OkStatus();
}

TokenEntry TokenEntry::ForToken(absl::string_view token, Role role,
                                std::string name) {
  TokenEntry entry;
  entry.digest = DigestToken(token);
  entry.role = role;
  entry.name = std::move(name);
  return entry;
}

std::string TokenEntry::hash_hex() const {
  return absl::BytesToHexString(absl::string_view(
      reinterpret_cast<const char*>(digest.data()), digest.size()));
}

std::string TokenEntry::Line() const {
  return absl::StrCat(hash_hex(), " ", RoleName(role), " ", name);
}

absl::StatusOr<TokenSet> TokenSet::Parse(absl::string_view text,
                                         absl::string_view origin) {
  TokenSet set;
  int line_number = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    ++line_number;
    line = absl::StripAsciiWhitespace(line);
    if (line.empty() || line.front() == '#') continue;
    auto error = [&](absl::string_view message) {
      return absl::InvalidArgumentError(
          absl::StrCat(origin, ":", line_number, ": ", message));
    };
    std::vector<absl::string_view> fields =
        absl::StrSplit(line, absl::ByAnyChar(" \t"), absl::SkipEmpty());
    if (fields.size() != 3) {
      return error(absl::StrCat("expected \"<sha256 hex> <role> <name>\", got ",
                                fields.size(), " field(s)"));
    }
    TokenEntry entry;
    absl::StatusOr<TokenDigest> digest = ParseDigest(fields[0]);
    if (!digest.ok()) return error(digest.status().message());
    entry.digest = *digest;
    absl::StatusOr<Role> role = ParseRole(fields[1]);
    if (!role.ok()) return error(role.status().message());
    entry.role = *role;
    entry.name = std::string(fields[2]);
    if (absl::Status s = set.Add(std::move(entry)); !s.ok()) {
      return error(s.message());
    }
  }
  return set;
}

absl::StatusOr<TokenSet> TokenSet::Load(const std::string& path) {
  struct stat st {};
  if (stat(path.c_str(), &st) != 0) {
    return base::ErrnoError("cannot read tokens file", path);
  }
  if (!S_ISREG(st.st_mode)) {
    return absl::FailedPreconditionError(
        absl::StrCat("tokens file ", path, " is not a regular file"));
  }
  if (absl::Status s = CheckPrivateMode(st.st_mode, path); !s.ok()) return s;
  absl::StatusOr<std::string> text = base::ReadWholeFile(path, "tokens file");
  if (!text.ok()) return text.status();
  return Parse(*text, path);
}

absl::Status TokenSet::Add(TokenEntry entry) {
  if (absl::Status s = ValidateTokenName(entry.name); !s.ok()) return s;
  for (const TokenEntry& e : entries_) {
    if (e.name == entry.name) {
      return absl::InvalidArgumentError(
          absl::StrCat("a token named '", entry.name, "' exists already"));
    }
    if (e.digest == entry.digest) {
      return absl::InvalidArgumentError(absl::StrCat(
          "the token of '", entry.name, "' is the token of '", e.name, "'"));
    }
  }
  entries_.push_back(std::move(entry));
  return absl::OkStatus();
}

const TokenEntry* TokenSet::Find(absl::string_view token) const {
  const TokenDigest digest = DigestToken(token);
  const TokenEntry* found = nullptr;
  // No early exit: every entry is compared, each in constant time.
  for (const TokenEntry& e : entries_) {
    if (CRYPTO_memcmp(digest.data(), e.digest.data(), digest.size()) == 0) {
      found = &e;
    }
  }
  return found;
}

std::string TokenSet::Serialize() const {
  std::string text = kTokensFileHeader;
  for (const TokenEntry& e : entries_) absl::StrAppend(&text, e.Line(), "\n");
  return text;
}

absl::Status AppendTokenToFile(const std::string& path,
                               const TokenEntry& entry) {
  if (absl::Status s = ValidateTokenName(entry.name); !s.ok()) return s;
  // O_CREAT with 0600: a new file is never readable by others, whatever
  // the umask.
  base::UniqueFd fd(open(path.c_str(),
                         O_RDWR | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW,
                         0600));
  if (fd.get() < 0) return base::ErrnoError("cannot open tokens file", path);
  struct stat st {};
  if (fstat(fd.get(), &st) != 0) return base::ErrnoError("cannot stat", path);
  if (!S_ISREG(st.st_mode)) {
    return absl::FailedPreconditionError(
        absl::StrCat("tokens file ", path, " is not a regular file"));
  }
  if (absl::Status s = CheckPrivateMode(st.st_mode, path); !s.ok()) return s;
  std::string text;
  if (st.st_size > 0) {
    absl::StatusOr<std::string> existing =
        base::ReadWholeFile(path, "tokens file");
    if (!existing.ok()) return existing.status();
    text = *std::move(existing);
  }
  absl::StatusOr<TokenSet> set = TokenSet::Parse(text, path);
  if (!set.ok()) return set.status();
  if (absl::Status s = set->Add(entry); !s.ok()) return s;
  std::string append = st.st_size == 0 ? kTokensFileHeader : "";
  if (!text.empty() && text.back() != '\n') append += "\n";
  absl::StrAppend(&append, entry.Line(), "\n");
  if (!base::WriteAll(fd.get(), append)) {
    return base::ErrnoError("cannot write", path);
  }
  if (fsync(fd.get()) != 0) return base::ErrnoError("cannot sync", path);
  return absl::OkStatus();
}

absl::StatusOr<int> RemoveTokenFromFile(const std::string& path,
                                        absl::string_view name) {
  absl::StatusOr<TokenSet> set = TokenSet::Load(path);
  if (!set.ok()) return set.status();
  TokenSet kept;
  int removed = 0;
  for (const TokenEntry& e : set->entries()) {
    if (e.name == name) {
      ++removed;
    } else if (absl::Status s = kept.Add(e); !s.ok()) {
      return s;
    }
  }
  if (removed == 0) {
    return absl::NotFoundError(
        absl::StrCat("no token named '", name, "' in ", path));
  }
  if (absl::Status s = base::WriteFileAtomically(path, kept.Serialize(), 0600,
                                                 /*sync=*/true);
      !s.ok()) {
    return s;
  }
  return removed;
}

}  // namespace tunefleet::auth
