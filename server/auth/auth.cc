#include "server/auth/auth.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <openssl/bio.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
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

// Deleters for OpenSSL handles.
struct BioFree {
  void operator()(BIO* bio) const { BIO_free(bio); }
};
struct X509Free {
  void operator()(X509* x509) const { X509_free(x509); }
};
struct PkeyFree {
  void operator()(EVP_PKEY* key) const { EVP_PKEY_free(key); }
};
using BioPtr = std::unique_ptr<BIO, BioFree>;
using X509Ptr = std::unique_ptr<X509, X509Free>;
using PkeyPtr = std::unique_ptr<EVP_PKEY, PkeyFree>;

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

// Loads one PEM certificate (the first of the file).
absl::StatusOr<X509Ptr> ParseCertificate(const std::string& pem,
                                         const std::string& path) {
  BioPtr bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
  if (bio == nullptr) return absl::InternalError("BIO_new_mem_buf failed");
  X509Ptr cert(PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr));
  if (cert == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, " holds no PEM certificate"));
  }
  return cert;
}

}  // namespace

absl::string_view RoleName(Role role) {
  switch (role) {
    case Role::kAgent:
      return "agent";
    case Role::kReader:
      return "reader";
    case Role::kTuner:
      return "tuner";
  }
  return "?";
}

absl::StatusOr<Role> ParseRole(absl::string_view name) {
  for (Role role : {Role::kAgent, Role::kReader, Role::kTuner}) {
    if (name == RoleName(role)) return role;
  }
  return absl::InvalidArgumentError(
      absl::StrCat("unknown role '", name, "'; roles: agent, tuner, reader"));
}

bool RoleAllows(Role held, Role needed) {
  return held == needed || (held == Role::kTuner && needed == Role::kReader);
}

std::optional<Role> RequiredRole(absl::string_view full_method) {
  if (full_method == kConnectMethod) return Role::kAgent;
  if (full_method == kSubmitJobMethod || full_method == kCancelJobMethod) {
    return Role::kTuner;
  }
  if (full_method == kWatchJobMethod || full_method == kListDevicesMethod ||
      full_method == kQueryRecordsMethod || full_method == kListJobsMethod) {
    return Role::kReader;
  }
  return std::nullopt;
}

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

Authorizer::Authorizer(std::shared_ptr<const TokenSet> tokens,
                       bool log_refusals)
    : enabled_(tokens != nullptr),
      log_refusals_(log_refusals),
      tokens_(std::move(tokens)) {}

absl::Status Authorizer::SetTokens(std::shared_ptr<const TokenSet> tokens) {
  if (!enabled_) {
    return absl::FailedPreconditionError(
        "authentication is off (--no-auth); restart with --tokens FILE");
  }
  if (tokens == nullptr) return absl::InvalidArgumentError("no token set");
  absl::MutexLock lock(&mu_);
  tokens_ = std::move(tokens);
  return absl::OkStatus();
}

absl::StatusOr<std::string> Authorizer::Authorize(
    absl::string_view full_method,
    const std::vector<absl::string_view>& authorization) const {
  if (!enabled_) return std::string();
  const std::optional<Role> needed = RequiredRole(full_method);
  if (!needed) {
    return absl::PermissionDeniedError(
        absl::StrCat("no role may call ", full_method));
  }
  if (authorization.empty()) {
    return absl::UnauthenticatedError(
        "no access token: pass --token-file FILE (or --token); the server "
        "expects 'authorization: Bearer <token>' metadata");
  }
  if (authorization.size() > 1) {
    return absl::UnauthenticatedError(
        "several 'authorization' metadata values; send one");
  }
  absl::string_view token = authorization.front();
  if (!absl::ConsumePrefix(&token, "Bearer ") || token.empty()) {
    return absl::UnauthenticatedError(
        "'authorization' metadata must be 'Bearer <token>'");
  }
  std::shared_ptr<const TokenSet> tokens;
  {
    absl::MutexLock lock(&mu_);
    tokens = tokens_;
  }
  const TokenEntry* entry = tokens->Find(token);
  if (entry == nullptr) {
    return absl::UnauthenticatedError(
        "unknown access token (not in the server's tokens file)");
  }
  if (!RoleAllows(entry->role, *needed)) {
    const absl::string_view method =
        full_method.substr(full_method.rfind('/') + 1);
    return absl::PermissionDeniedError(
        absl::StrCat(method, " needs a token of role ", RoleName(*needed),
                     *needed == Role::kReader ? " (or tuner)" : "", "; token '",
                     entry->name, "' has role ", RoleName(entry->role)));
  }
  return entry->name;
}

grpc::Status Authorizer::Check(const grpc::ServerContext& context,
                               absl::string_view full_method) const {
  if (!enabled_) return grpc::Status::OK;
  std::vector<absl::string_view> authorization;
  const auto range = context.client_metadata().equal_range("authorization");
  for (auto it = range.first; it != range.second; ++it) {
    authorization.emplace_back(it->second.data(), it->second.size());
  }
  absl::StatusOr<std::string> caller = Authorize(full_method, authorization);
  if (caller.ok()) return grpc::Status::OK;
  if (log_refusals_) {
    std::fprintf(stderr, "[server] refused %s from %s: %s\n",
                 std::string(full_method).c_str(), context.peer().c_str(),
                 std::string(caller.status().message()).c_str());
  }
  return grpc::Status(static_cast<grpc::StatusCode>(caller.status().code()),
                      std::string(caller.status().message()));
}

absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> MakeServerCredentials(
    const TlsServerFiles& tls) {
  if (tls.cert_file.empty() != tls.key_file.empty()) {
    return absl::InvalidArgumentError("--tls-cert and --tls-key go together");
  }
  if (!tls.enabled()) {
    if (!tls.client_ca_file.empty()) {
      return absl::InvalidArgumentError(
          "--client-ca needs TLS: pass --tls-cert and --tls-key too");
    }
    return grpc::InsecureServerCredentials();
  }
  absl::StatusOr<std::string> cert_pem =
      base::ReadWholeFile(tls.cert_file, "TLS certificate");
  if (!cert_pem.ok()) return cert_pem.status();
  absl::StatusOr<std::string> key_pem =
      base::ReadWholeFile(tls.key_file, "TLS key");
  if (!key_pem.ok()) return key_pem.status();
  absl::StatusOr<X509Ptr> cert = ParseCertificate(*cert_pem, tls.cert_file);
  if (!cert.ok()) return cert.status();
  {
    BioPtr bio(
        BIO_new_mem_buf(key_pem->data(), static_cast<int>(key_pem->size())));
    if (bio == nullptr) return absl::InternalError("BIO_new_mem_buf failed");
    PkeyPtr key(PEM_read_bio_PrivateKey(bio.get(), nullptr, nullptr, nullptr));
    if (key == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat(
          tls.key_file, " holds no PEM private key (or it is encrypted)"));
    }
    if (X509_check_private_key(cert->get(), key.get()) != 1) {
      return absl::InvalidArgumentError(
          absl::StrCat("the key in ", tls.key_file,
                       " does not match the certificate in ", tls.cert_file));
    }
  }
  grpc::SslServerCredentialsOptions ssl(
      tls.client_ca_file.empty()
          ? GRPC_SSL_DONT_REQUEST_CLIENT_CERTIFICATE
          : GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY);
  if (!tls.client_ca_file.empty()) {
    absl::StatusOr<std::string> ca_pem =
        base::ReadWholeFile(tls.client_ca_file, "client CA");
    if (!ca_pem.ok()) return ca_pem.status();
    absl::StatusOr<X509Ptr> ca = ParseCertificate(*ca_pem, tls.client_ca_file);
    if (!ca.ok()) return ca.status();
    ssl.pem_root_certs = *std::move(ca_pem);
  }
  ssl.pem_key_cert_pairs.push_back({*std::move(key_pem), *std::move(cert_pem)});
  return grpc::SslServerCredentials(ssl);
}

bool IsLoopbackAddress(absl::string_view listen) {
  if (absl::StartsWith(listen, "unix:") ||
      absl::StartsWith(listen, "unix-abstract:")) {
    return true;
  }
  for (absl::string_view scheme : {"ipv4:", "ipv6:"}) {
    if (absl::ConsumePrefix(&listen, scheme)) break;
  }
  const size_t colon = listen.rfind(':');
  absl::string_view host =
      colon == absl::string_view::npos ? listen : listen.substr(0, colon);
  if (absl::ConsumePrefix(&host, "[")) absl::ConsumeSuffix(&host, "]");
  if (host == "localhost") return true;
  const std::string h(host);
  in_addr v4{};
  if (inet_pton(AF_INET, h.c_str(), &v4) == 1) {
    return (ntohl(v4.s_addr) >> 24) == 127;
  }
  in6_addr v6{};
  if (inet_pton(AF_INET6, h.c_str(), &v6) == 1) {
    if (IN6_IS_ADDR_LOOPBACK(&v6)) return true;
    if (IN6_IS_ADDR_V4MAPPED(&v6)) return v6.s6_addr[12] == 127;
  }
  return false;
}

}  // namespace tunefleet::auth
