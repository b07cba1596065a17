// The server's TLS credentials, checked with OpenSSL before gRPC sees
// them, and whether a listen address is loopback-only.
#ifndef TUNEFLEET_AUTH_TLS_H_
#define TUNEFLEET_AUTH_TLS_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "grpcpp/grpcpp.h"

namespace tunefleet::auth {

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

#endif  // TUNEFLEET_AUTH_TLS_H_
