// How a client dials tunefleet-server: plaintext or TLS (verifying the
// server against a CA file, optionally presenting a client certificate), and
// a bearer token sent as "authorization: Bearer <token>" metadata on every
// call. Used by the agent and by the `tunefleet` CLI; it knows nothing of the
// server's side (auth/authorizer.h).
#ifndef TUNEFLEET_CLIENT_CHANNEL_H_
#define TUNEFLEET_CLIENT_CHANNEL_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "grpcpp/grpcpp.h"

namespace tunefleet::client {

// The metadata key and scheme a token travels in.
inline constexpr char kAuthorizationMetadataKey[] = "authorization";
inline constexpr char kBearerPrefix[] = "Bearer ";

// What a client needs to reach a server: file contents, not paths (see
// LoadChannelOptions), so creating a channel cannot fail.
struct ChannelOptions {
  std::string token;  // empty: no authorization metadata
  // TLS when set: PEM certificates of the CA(s) that signed the server's
  // certificate. Empty: plaintext.
  std::string ca_pem;
  // Client certificate chain and its private key (PEM); both or neither,
  // and only with TLS.
  std::string client_cert_pem;
  std::string client_key_pem;
  // Largest message the client accepts.
  int max_receive_message_bytes = 64 << 20;
};

// Paths as given on a command line; empty fields are unused.
struct ChannelFiles {
  std::string token;       // the token itself (prefer token_file)
  std::string token_file;  // a file holding the token (first line)
  std::string ca_file;
  std::string client_cert_file;
  std::string client_key_file;
  // --insecure: send the token in plaintext even to a server that is not on
  // this machine (CheckTokenTransport).
  bool insecure = false;
};

// Reads the files named in `files`. Errors: NOT_FOUND for a missing file,
// INVALID_ARGUMENT for both --token and --token-file, an empty token file,
// a client certificate without its key (or the reverse), or a client
// certificate without --ca.
absl::StatusOr<ChannelOptions> LoadChannelOptions(const ChannelFiles& files);

// Reads a token from `path`: its first line without surrounding
// whitespace. Errors: NOT_FOUND, INVALID_ARGUMENT when empty.
absl::StatusOr<std::string> ReadTokenFile(const std::string& path);

// `address` as --server gives it, checked (base::ParseHostPort) and
// written as gRPC takes it ("host:port", "[::1]:port"). Every client checks
// its --server with this before dialling, so a missing port is refused
// instead of gRPC dialling port 0 (or 443). Errors: INVALID_ARGUMENT naming
// --server, the value and the expected HOST:PORT form (an empty address, a
// scheme, a missing or out-of-range port).
absl::StatusOr<std::string> CheckServerAddress(absl::string_view address);

// Refuses to send a bearer token in clear text over the network: with a
// token, no TLS (options.ca_pem empty) and a server `address` (HOST:PORT,
// as CheckServerAddress returns it) whose host is not loopback
// (base::IsLoopbackHost), INVALID_ARGUMENT naming the address and saying to
// pass
// --ca CA.pem (TLS) or --insecure; OK when `insecure` is true. The same
// rule as tunefleet-server's for its --listen address.
absl::Status CheckTokenTransport(absl::string_view address,
                                 const ChannelOptions& options, bool insecure);

// A channel to `address` (HOST:PORT, as CheckServerAddress returns it) with
// TLS when options.ca_pem is set, attaching options.token to every call.
// Thread-safe, as grpc::Channel.
std::shared_ptr<grpc::Channel> CreateServerChannel(
    const std::string& address, const ChannelOptions& options);

// Where a server is and how to talk to it: TLS and the bearer token.
struct ServerConnection {
  std::string address;  // HOST:PORT
  ChannelOptions channel;

  bool tls() const { return !channel.ca_pem.empty(); }
};

// `address` (checked by CheckServerAddress) with the token and certificates
// `files` names, checked by CheckTokenTransport (files.insecure). Every
// client builds its connection with this before dialling. Errors:
// CheckServerAddress's, then LoadChannelOptions' (NOT_FOUND,
// INVALID_ARGUMENT), then CheckTokenTransport's (INVALID_ARGUMENT).
absl::StatusOr<ServerConnection> ConnectionTo(const std::string& address,
                                              const ChannelFiles& files);

// A channel to the server (CreateServerChannel of the connection).
std::shared_ptr<grpc::Channel> Dial(const ServerConnection& connection);

}  // namespace tunefleet::client

#endif  // TUNEFLEET_CLIENT_CHANNEL_H_
