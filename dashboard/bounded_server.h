// The dashboard's plain-HTTP server: cpp-httplib's routing and request
// parsing, with connections read under deadlines of our own, so that slow
// clients cannot hold its threads (docs/SERVER_LIMITS.md, "Slow clients").
//
// cpp-httplib serves each connection on a thread of its pool for as long
// as the client keeps it open, and bounds each read only (5 s): a client
// that sends a byte every few seconds holds a thread for good, and a few
// of them stall every other caller. Here:
// - a fixed pool of `threads` threads serves connections;
// - a connection waits at most `idle` for the first byte of its next
//   request, and must deliver a whole request (line, headers, body) within
//   `request` of that byte, whatever it trickles; each write of the answer
//   must progress within `write`;
// - at most `max_connections` connections are open (served or waiting for
//   a thread); one beyond is answered 503 and closed at once.
// With 20 slow connections and the default 32 threads, other callers are
// still served at once; beyond the pool, each slow connection holds a
// thread for at most idle + request.
//
// HTTPS (httplib::SSLServer) keeps cpp-httplib's own reading: the same
// pool, per-read and keep-alive timeouts, no whole-request deadline.
#ifndef TUNEFLEET_DASHBOARD_BOUNDED_SERVER_H_
#define TUNEFLEET_DASHBOARD_BOUNDED_SERVER_H_

#include <atomic>
#include <string>

#include "absl/strings/string_view.h"
#include "dashboard/connection_limits.h"
#include "httplib.h"

namespace tunefleet::dashboard {

// Sets `server`'s thread pool and cpp-httplib's own timeouts from
// `limits` (for an SSLServer; BoundedServer does it itself).
void ApplyLimits(const ConnectionLimits& limits, httplib::Server& server);

// Thread-safe as httplib::Server.
class BoundedServer : public httplib::Server {
 public:
  explicit BoundedServer(ConnectionLimits limits = {});

  // Serves `raw` (one or more requests, as a client would send them) as
  // one connection and returns everything written back, without a socket:
  // for tests and the fuzz target (tests/fuzz/http_fuzzer.cc). The remote
  // address is 127.0.0.1.
  std::string ServeForTest(absl::string_view raw);

  // Connections open now.
  int open_connections() const { return open_.load(); }

 private:
  bool process_and_close_socket(socket_t sock) override;

  const ConnectionLimits limits_;
  std::atomic<int> open_{0};
};

}  // namespace tunefleet::dashboard

#endif  // TUNEFLEET_DASHBOARD_BOUNDED_SERVER_H_
