// Whether a listening address can be bound, checked before a server opens
// anything else: tunefleet-server's --listen and --http and `tunefleet
// dashboard --http` refuse a port in use with one message, before they
// create or open a database, so a refused start leaves no file behind.
#ifndef TUNEFLEET_BASE_LISTEN_CHECK_H_
#define TUNEFLEET_BASE_LISTEN_CHECK_H_

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "base/host_port.h"

namespace tunefleet::base {

// Binds a TCP socket to `address` (SO_REUSEADDR, as the listeners set it,
// never SO_REUSEPORT) and closes it again. Port 0 and an empty host are not
// checked (any free port; the listener reports what it gets). Errors:
// UNAVAILABLE, ListenError()'s message where the port is in use
// (EADDRINUSE); saying so where the host is not an address of this machine
// (EADDRNOTAVAIL, a name that does not resolve) or the port is privileged
// (EACCES).
absl::Status CheckCanListen(const HostPort& address, absl::string_view flag);

// The refusal of a listener that cannot bind `address` (HOST:PORT) given as
// `flag` ("--listen", "--http"): UNAVAILABLE "cannot listen on ADDRESS
// (FLAG): the port is in use (another tunefleet-server or tunefleet
// dashboard? stop it or pick another FLAG port) or the host is not an
// address of this machine". `in_use`: the port is known to be in use (the
// second cause is left out); false: the cause is unknown (both are named).
absl::Status ListenError(absl::string_view address, absl::string_view flag,
                         bool in_use = false);

}  // namespace tunefleet::base

#endif  // TUNEFLEET_BASE_LISTEN_CHECK_H_
