// Network addresses as users type them: "HOST:PORT" (a name or IPv4
// address) or "[IPV6]:PORT". One parser for the server's --listen and every
// client's --server, so a missing port or a URL scheme is refused the same
// way everywhere instead of gRPC picking port 443 or dialling port 0.
#ifndef TUNEFLEET_BASE_HOST_PORT_H_
#define TUNEFLEET_BASE_HOST_PORT_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace tunefleet::base {

struct HostPort {
  std::string host;  // without brackets for IPv6
  int port = 0;      // 1 to 65535 (0 only where allowed, see below)

  // "host:port", with brackets around an IPv6 host: what gRPC takes.
  std::string ToString() const;
};

// Parses `address` as given for `flag` (e.g. "--listen"; used in messages).
// `allow_port_zero`: a listening address may ask for any free port.
// INVALID_ARGUMENT, naming the flag, the value and the expected form, for
// an empty address, a scheme ("http://", "dns:///"), a missing or
// non-numeric port, a port out of range, or an empty host.
absl::StatusOr<HostPort> ParseHostPort(absl::string_view address,
                                       absl::string_view flag,
                                       bool allow_port_zero = false);

// Whether `host` (a name or address, without port or brackets) is this
// machine's loopback: "localhost" (any case), 127.0.0.0/8, ::1 or an
// IPv4-mapped 127.x address. Names other than localhost are not resolved.
bool IsLoopbackHost(absl::string_view host);

}  // namespace tunefleet::base

#endif  // TUNEFLEET_BASE_HOST_PORT_H_
