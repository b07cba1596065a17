// A fault-injecting TCP proxy for link tests: it listens on a loopback port
// and forwards each accepted connection to an upstream HOST:PORT (a
// tunefleet-server), in user space since the test machine's kernel has no
// netem qdisc (and Debian 12 packages no toxiproxy). Per chunk read (at
// most 16 KiB) it can:
//   - delay it: latency +- jitter (uniform), keeping the byte order of each
//     direction (a chunk is never released before the one read before it);
//   - throttle it: at most bytes_per_second per direction per connection;
//   - reset the connection with probability reset_probability (both sides
//     closed with SO_LINGER 0, so both peers see an RST, not a FIN).
// A connection can also be reset once it has lived a time drawn uniformly
// from [reset_after_min, reset_after_max]. Stall() cuts the link as a Wi-Fi
// partition does: nothing moves either way, on open connections and on
// connections accepted meanwhile, yet every socket stays open; Restore()
// lets the held bytes through in order.
//
// One connection is one thread (poll over both sockets and a wake-up
// eventfd); every descriptor is owned by an Fd. Thread-safe.
#ifndef TUNEFLEET_TESTS_SUPPORT_FAULT_PROXY_H_
#define TUNEFLEET_TESTS_SUPPORT_FAULT_PROXY_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace tunefleet::testing {

// What the proxy does to the bytes it forwards; all faults off by default.
struct LinkFaults {
  absl::Duration latency = absl::ZeroDuration();  // added per chunk
  absl::Duration jitter = absl::ZeroDuration();   // latency +- jitter
  int64_t bytes_per_second = 0;  // per direction and connection; 0: no cap
  double reset_probability = 0;  // per chunk read, either direction
  // Reset each connection after a lifetime drawn in [min, max]; zero max:
  // never.
  absl::Duration reset_after_min = absl::ZeroDuration();
  absl::Duration reset_after_max = absl::ZeroDuration();
};

// Owns one file descriptor: closed when it goes away.
class ScopedFd {
 public:
  ScopedFd() = default;
  explicit ScopedFd(int fd) : fd_(fd) {}
  ~ScopedFd();
  ScopedFd(ScopedFd&& other) noexcept : fd_(other.fd_) { other.fd_ = -1; }
  ScopedFd& operator=(ScopedFd&& other) noexcept;
  int get() const { return fd_; }
  bool valid() const { return fd_ >= 0; }

 private:
  int fd_ = -1;
};

// Counts since Start().
struct LinkStats {
  int64_t accepted = 0;  // connections accepted
  int64_t resets = 0;    // connections ended by an injected RST
  int64_t bytes_to_upstream = 0;
  int64_t bytes_to_client = 0;
};

class FaultProxy {
 public:
  // Listens on 127.0.0.1 at an ephemeral port and forwards to
  // `upstream_host`:`upstream_port` (an IPv4 address). Errors: INTERNAL
  // when the listening socket cannot be set up (errno's text), or the
  // address does not parse (INVALID_ARGUMENT).
  static absl::StatusOr<std::unique_ptr<FaultProxy>> Start(
      const std::string& upstream_host, int upstream_port, LinkFaults faults,
      uint64_t seed);
  // Stops accepting, closes every connection (FIN) and joins its threads.
  ~FaultProxy();
  FaultProxy(const FaultProxy&) = delete;
  FaultProxy& operator=(const FaultProxy&) = delete;

  int port() const { return port_; }
  std::string address() const;  // "127.0.0.1:PORT", for --server

  // New faults, for chunks read from now on.
  void SetFaults(const LinkFaults& faults);
  // Holds every byte both ways, sockets open, until Restore().
  void Stall();
  void Restore();
  LinkStats stats() const;

  class Connection;  // fault_proxy.cc

 private:
  FaultProxy() = default;
  void AcceptLoop();
  void Wake();  // wakes the accept loop and every connection's poll

  int port_ = 0;
  uint32_t upstream_ip_ = 0;  // network order
  int upstream_port_ = 0;
  ScopedFd listen_fd_;
  ScopedFd wake_fd_;  // eventfd of the accept loop
  std::thread accept_thread_;

  mutable absl::Mutex mu_;
  LinkFaults faults_ ABSL_GUARDED_BY(mu_);
  bool stalled_ ABSL_GUARDED_BY(mu_) = false;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  uint64_t seed_ ABSL_GUARDED_BY(mu_) = 0;
  LinkStats stats_ ABSL_GUARDED_BY(mu_);
  std::vector<std::unique_ptr<Connection>> connections_ ABSL_GUARDED_BY(mu_);

  friend class Connection;
};

}  // namespace tunefleet::testing

#endif  // TUNEFLEET_TESTS_SUPPORT_FAULT_PROXY_H_
