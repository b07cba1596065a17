#include "client/rpc_error.h"

#include <cstdlib>
#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace tunefleet::client {
namespace {

// Whether `text` contains `part`, ignoring ASCII case.
bool Contains(absl::string_view text, absl::string_view part) {
  return absl::StrContains(absl::AsciiStrToLower(text),
                           absl::AsciiStrToLower(part));
}

// A transport failure (no server, TLS trouble, DNS) as what to do; empty
// when `message` is none of the known kinds.
std::string TransportAdvice(absl::string_view message,
                            absl::string_view address, bool tls) {
  if (Contains(message, "DNS resolution failed")) {
    return absl::StrCat("cannot resolve the host of ", address,
                        " (check the --server name)");
  }
  if (tls && (Contains(message, "wrong version number") ||
              Contains(message, "WRONG_VERSION_NUMBER") ||
              Contains(message, "packet length too long"))) {
    return absl::StrCat(
        "the server at ", address,
        " does not speak TLS (it seems to be plaintext): leave out --ca "
        "(and TUNEFLEET_CA), or start the server with --tls-cert and "
        "--tls-key");
  }
  if (tls && (Contains(message, "certificate verify failed") ||
              Contains(message, "certificate_verify_failed"))) {
    // The CA may have come from the environment, not the command line.
    const char* env = std::getenv("TUNEFLEET_CA");
    if (env != nullptr && *env != '\0') {
      return absl::StrCat(
          "the TLS certificate of the server at ", address,
          " is not signed by the CA in TUNEFLEET_CA (", env,
          ", or --ca if given): set TUNEFLEET_CA (or pass --ca) to the "
          "ca.pem that signed the server's --tls-cert");
    }
    return absl::StrCat(
        "the TLS certificate of the server at ", address,
        " is not signed by the CA in --ca: pass the ca.pem that signed "
        "the server's --tls-cert");
  }
  if (tls && Contains(message, "not in peer certificate")) {
    return absl::StrCat("the TLS certificate of the server at ", address,
                        " does not name that host: dial a name it was made "
                        "for (deploy/make-certs.sh OUTDIR NAME...)");
  }
  const bool closed = Contains(message, "socket closed") ||
                      Contains(message, "connection reset") ||
                      Contains(message, "broken pipe");
  if (closed && !tls) {
    return absl::StrCat(
        "the server at ", address,
        " closed the connection at once: it seems to use TLS; pass --ca "
        "CA.pem (the CA that signed its certificate, "
        "deploy/make-certs.sh)");
  }
  if (closed && tls) {
    return absl::StrCat(
        "the server at ", address,
        " closed the connection during the TLS handshake: if it requires "
        "client certificates (--client-ca), pass --client-cert and "
        "--client-key signed by that CA");
  }
  if (Contains(message, "Connection refused") ||
      Contains(message, "Failed to connect to remote host") ||
      Contains(message, "failed to connect to all addresses") ||
      Contains(message, "No route to host") ||
      Contains(message, "Network is unreachable")) {
    return absl::StrCat(
        "no tunefleet-server answered at ", address,
        ": is it running? (start one with `tunefleet-server --listen ", address,
        " ...`)");
  }
  return "";
}

}  // namespace

absl::Status RpcError(const grpc::Status& status, absl::string_view address,
                      bool tls) {
  if (status.ok()) return absl::OkStatus();
  const auto code = static_cast<absl::StatusCode>(status.error_code());
  const std::string& message = status.error_message();
  switch (status.error_code()) {
    case grpc::StatusCode::UNAVAILABLE:
    case grpc::StatusCode::UNKNOWN: {
      const std::string advice = TransportAdvice(message, address, tls);
      if (!advice.empty()) {
        // UNKNOWN is how gRPC reports a failed handshake; to the user it is
        // a server that cannot be reached.
        return absl::UnavailableError(advice);
      }
      break;
    }
    case grpc::StatusCode::DEADLINE_EXCEEDED:
      return absl::DeadlineExceededError(
          absl::StrCat("the server at ", address, " did not answer in time (",
                       message, ")"));
    case grpc::StatusCode::UNAUTHENTICATED:
      return absl::UnauthenticatedError(absl::StrCat(
          "the server at ", address, " refused the access token: ", message,
          ". Pass a token from the server's tokens file with --token-file "
          "FILE (or TUNEFLEET_TOKEN_FILE); `tunefleet token add --role "
          "tuner --tokens TOKENS_FILE` on the server's machine makes one"));
    case grpc::StatusCode::PERMISSION_DENIED:
      return absl::PermissionDeniedError(absl::StrCat(
          message,
          ". Use a token of a role that may do this (tuner submits and "
          "cancels jobs, reader only reads): `tunefleet token add --role "
          "tuner --tokens TOKENS_FILE` on the server's machine"));
    default:
      break;
  }
  return absl::Status(code, message);
}

}  // namespace tunefleet::client
