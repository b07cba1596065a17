// Who may call the server: bearer tokens with roles, kept hashed in a
// tokens file, checked per RPC method; and the server's TLS credentials.
//
// A token travels as "authorization: Bearer <token>" call metadata
// (device_agent/channel.h sends it). The server keeps only SHA-256 digests,
// one per line of its tokens file ("<sha256 hex> <role> <name>", mode 0600,
// written by `tunefleet token add`). Roles:
//   agent   AgentService/Connect;
//   reader  WatchJob, ListDevices, QueryRecords, ListJobs;
//   tuner   SubmitJob, CancelJob and everything a reader may do.
// A missing, malformed or unknown token is UNAUTHENTICATED; a known token
// of the wrong role is PERMISSION_DENIED.
#ifndef TUNEFLEET_SERVER_AUTH_AUTH_H_
#define TUNEFLEET_SERVER_AUTH_AUTH_H_

#include <array>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "grpcpp/grpcpp.h"

namespace tunefleet::auth {

enum class Role { kAgent, kReader, kTuner };

// "agent", "reader", "tuner".
absl::string_view RoleName(Role role);
// The role named `name`. Errors: INVALID_ARGUMENT listing the roles.
absl::StatusOr<Role> ParseRole(absl::string_view name);
// True when a token of role `held` may call a method needing `needed`
// (tuner includes reader; agent is only agent).
bool RoleAllows(Role held, Role needed);

// Full gRPC method names ("/package.Service/Method") the server serves.
inline constexpr char kConnectMethod[] = "/tunefleet.v1.AgentService/Connect";
inline constexpr char kSubmitJobMethod[] =
    "/tunefleet.v1.TuningService/SubmitJob";
inline constexpr char kCancelJobMethod[] =
    "/tunefleet.v1.TuningService/CancelJob";
inline constexpr char kWatchJobMethod[] =
    "/tunefleet.v1.TuningService/WatchJob";
inline constexpr char kListDevicesMethod[] =
    "/tunefleet.v1.TuningService/ListDevices";
inline constexpr char kQueryRecordsMethod[] =
    "/tunefleet.v1.TuningService/QueryRecords";
inline constexpr char kListJobsMethod[] =
    "/tunefleet.v1.TuningService/ListJobs";

// The role a method needs; nullopt for a method no token may call.
std::optional<Role> RequiredRole(absl::string_view full_method);

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

// Decides, per call, whether the caller's token allows the method.
// Thread-safe; SetTokens() may run while calls are checked.
class Authorizer {
 public:
  // `tokens` null: authentication is off (tunefleet-server --no-auth) and
  // every call is allowed. Refusals are logged to stderr when
  // `log_refusals`.
  Authorizer(std::shared_ptr<const TokenSet> tokens, bool log_refusals);

  bool enabled() const { return enabled_; }
  // Replaces the accepted tokens (a reloaded tokens file). Errors:
  // FAILED_PRECONDITION when authentication is off, INVALID_ARGUMENT for
  // null.
  absl::Status SetTokens(std::shared_ptr<const TokenSet> tokens);

  // `authorization` holds the call's "authorization" metadata values.
  // Returns the caller's entry's name ("" when authentication is off).
  // Errors: UNAUTHENTICATED for none, several, one not "Bearer <token>",
  // or an unknown token; PERMISSION_DENIED for a token whose role may not
  // call `full_method` (naming the role needed), or an unknown method.
  absl::StatusOr<std::string> Authorize(
      absl::string_view full_method,
      const std::vector<absl::string_view>& authorization) const;

  // Authorize() on the call's metadata, as a gRPC status.
  grpc::Status Check(const grpc::ServerContext& context,
                     absl::string_view full_method) const;

 private:
  const bool enabled_;
  const bool log_refusals_;
  mutable absl::Mutex mu_;
  std::shared_ptr<const TokenSet> tokens_ ABSL_GUARDED_BY(mu_);
};

// The server's TLS files (PEM). Plaintext when cert_file is empty.
struct TlsServerFiles {
  std::string cert_file;       // certificate chain, leaf first
  std::string key_file;        // its private key
  std::string client_ca_file;  // set: require client certificates it signed

  bool enabled() const { return !cert_file.empty(); }
};

// grpc::SslServerCredentials from the files (insecure credentials when TLS
// is off), after checking with OpenSSL that they parse and that the key
// matches the certificate. Errors: INVALID_ARGUMENT for a certificate
// without a key (or the reverse), a client CA without TLS, a file that is
// not PEM, a key that does not match; NOT_FOUND for a missing file.
absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> MakeServerCredentials(
    const TlsServerFiles& tls);

// True when the listen address HOST:PORT only accepts local connections:
// 127.0.0.0/8, ::1, localhost, or a unix: socket. "0.0.0.0", "[::]", an
// empty host and other names are not.
bool IsLoopbackAddress(absl::string_view listen);

}  // namespace tunefleet::auth

#endif  // TUNEFLEET_SERVER_AUTH_AUTH_H_
