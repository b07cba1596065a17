// What a failed call to tunefleet-server means for the person who made it:
// gRPC's transport errors ("failed to connect to all addresses; last
// error: UNAVAILABLE: ipv4:...: Socket closed") turned into what to do
// (start the server, pass --ca, leave out --ca, pass a token). One
// translator for the CLI and the agent.
#ifndef TUNEFLEET_CLIENT_RPC_ERROR_H_
#define TUNEFLEET_CLIENT_RPC_ERROR_H_

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "grpcpp/support/status.h"

namespace tunefleet::client {

// `status` of a call to the server at `address` (HOST:PORT), made over TLS
// when `tls`, as an absl::Status of the same code whose message says what
// went wrong and what to do:
//   - nothing listens at the address: "no tunefleet-server answered at
//     HOST:PORT: is it running? ...";
//   - a plaintext client and a TLS server: the server seems to use TLS,
//     pass --ca;
//   - a TLS client and a plaintext server: leave out --ca;
//   - a server certificate the CA does not vouch for, a client
//     certificate the server requires, a host name that does not resolve;
//   - UNAUTHENTICATED and PERMISSION_DENIED: the server's reason and how to
//     get a token of the right role.
// Any other status keeps the server's message. OK stays OK.
absl::Status RpcError(const grpc::Status& status, absl::string_view address,
                      bool tls);

}  // namespace tunefleet::client

#endif  // TUNEFLEET_CLIENT_RPC_ERROR_H_
