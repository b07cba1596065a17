// How the dashboard's HTTP server bounds its connections (threads, open
// connections, deadlines); bounded_server.h says how each is used.
#ifndef TUNEFLEET_DASHBOARD_CONNECTION_LIMITS_H_
#define TUNEFLEET_DASHBOARD_CONNECTION_LIMITS_H_

#include "absl/time/time.h"

namespace tunefleet::dashboard {

struct ConnectionLimits {
  // Threads serving connections (one each while it is served).
  int threads = 32;
  // Connections open at once (served or waiting for a thread); one more
  // is answered 503.
  int max_connections = 256;
  // Silence allowed before a request's first byte; a whole request must
  // arrive within `request` of it; each write must progress within `write`.
  absl::Duration idle = absl::Seconds(5);
  absl::Duration request = absl::Seconds(10);
  absl::Duration write = absl::Seconds(10);
  // Requests served on one connection before it is closed.
  int max_requests = 100;
};

}  // namespace tunefleet::dashboard

#endif  // TUNEFLEET_DASHBOARD_CONNECTION_LIMITS_H_
