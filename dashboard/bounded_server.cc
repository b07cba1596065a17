#include "dashboard/bounded_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"

namespace tunefleet::dashboard {
namespace {

// Milliseconds to wait in poll() until `deadline`, at most `cap`; 0 once
// it has passed.
int PollMs(absl::Time deadline, absl::Duration cap) {
  const absl::Duration left = std::min(deadline - absl::Now(), cap);
  if (left <= absl::ZeroDuration()) return 0;
  return static_cast<int>(
      std::max<int64_t>(1, absl::ToInt64Milliseconds(left)));
}

bool WaitFor(int fd, short events, int ms) {
  pollfd p{fd, events, 0};
  int r;
  do {
    r = poll(&p, 1, ms);
  } while (r < 0 && errno == EINTR);
  return r > 0;
}

void AddressOf(const sockaddr_storage& addr, std::string& ip, int& port) {
  char text[INET6_ADDRSTRLEN] = {};
  if (addr.ss_family == AF_INET) {
    const auto* a = reinterpret_cast<const sockaddr_in*>(&addr);
    inet_ntop(AF_INET, &a->sin_addr, text, sizeof(text));
    port = ntohs(a->sin_port);
  } else if (addr.ss_family == AF_INET6) {
    const auto* a = reinterpret_cast<const sockaddr_in6*>(&addr);
    inet_ntop(AF_INET6, &a->sin6_addr, text, sizeof(text));
    port = ntohs(a->sin6_port);
  }
  ip = text;
}

// A connection's socket read under the request's deadline (ConnectionLimits)
// and written under the write timeout; buffered, since cpp-httplib reads
// request lines a byte at a time.
class DeadlineStream final : public httplib::Stream {
 public:
  DeadlineStream(int fd, const ConnectionLimits& limits)
      : fd_(fd), limits_(limits) {}

  void set_deadline(absl::Time deadline) { deadline_ = deadline; }

  // Waits until a byte of the next request is there (true), the client
  // closed or stayed silent for `idle` (false), or `stop()` says so
  // (checked every 100 ms).
  template <typename Stop>
  bool WaitForRequest(absl::Duration idle, Stop stop) {
    if (begin_ < end_) return true;
    const absl::Time give_up = absl::Now() + idle;
    while (!stop()) {
      const int ms = PollMs(give_up, absl::Milliseconds(100));
      if (ms == 0) return false;
      if (WaitFor(fd_, POLLIN, ms)) return Fill() > 0;
    }
    return false;
  }

  bool is_readable() const override {
    return begin_ < end_ ||
           WaitFor(fd_, POLLIN, PollMs(deadline_, absl::InfiniteDuration()));
  }
  bool is_writable() const override {
    return WaitFor(fd_, POLLOUT,
                   static_cast<int>(absl::ToInt64Milliseconds(limits_.write)));
  }

  ssize_t read(char* ptr, size_t size) override {
    if (begin_ == end_) {
      const int ms = PollMs(deadline_, absl::InfiniteDuration());
      if (ms == 0 || !WaitFor(fd_, POLLIN, ms)) return -1;  // too slow
      const ssize_t n = Fill();
      if (n <= 0) return n;
    }
    const size_t n = std::min(size, end_ - begin_);
    std::memcpy(ptr, buffer_ + begin_, n);
    begin_ += n;
    return static_cast<ssize_t>(n);
  }

  ssize_t write(const char* ptr, size_t size) override {
    if (!is_writable()) return -1;
    ssize_t n;
    do {
      n = ::send(fd_, ptr, size, MSG_NOSIGNAL);
    } while (n < 0 && errno == EINTR);
    return n;
  }

  void get_remote_ip_and_port(std::string& ip, int& port) const override {
    sockaddr_storage addr{};
    socklen_t len = sizeof(addr);
    if (getpeername(fd_, reinterpret_cast<sockaddr*>(&addr), &len) == 0) {
      AddressOf(addr, ip, port);
    }
  }
  void get_local_ip_and_port(std::string& ip, int& port) const override {
    sockaddr_storage addr{};
    socklen_t len = sizeof(addr);
    if (getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len) == 0) {
      AddressOf(addr, ip, port);
    }
  }
  socket_t socket() const override { return fd_; }

 private:
  // Reads what the socket has into the (empty) buffer.
  ssize_t Fill() {
    ssize_t n;
    do {
      n = ::recv(fd_, buffer_, sizeof(buffer_), 0);
    } while (n < 0 && errno == EINTR);
    begin_ = 0;
    end_ = n > 0 ? static_cast<size_t>(n) : 0;
    return n;
  }

  const int fd_;
  const ConnectionLimits& limits_;
  absl::Time deadline_ = absl::InfiniteFuture();
  char buffer_[4096];
  size_t begin_ = 0, end_ = 0;
};

// ServeForTest's connection: reads `in`, collects what is written.
class MemoryStream final : public httplib::Stream {
 public:
  explicit MemoryStream(absl::string_view in) : in_(in) {}
  const std::string& out() const { return out_; }
  bool at_end() const { return in_.empty(); }

  bool is_readable() const override { return !in_.empty(); }
  bool is_writable() const override { return true; }
  ssize_t read(char* ptr, size_t size) override {
    const size_t n = std::min(size, in_.size());
    std::memcpy(ptr, in_.data(), n);
    in_.remove_prefix(n);
    return static_cast<ssize_t>(n);
  }
  ssize_t write(const char* ptr, size_t size) override {
    out_.append(ptr, size);
    return static_cast<ssize_t>(size);
  }
  void get_remote_ip_and_port(std::string& ip, int& port) const override {
    ip = "127.0.0.1";
    port = 40000;
  }
  void get_local_ip_and_port(std::string& ip, int& port) const override {
    ip = "127.0.0.1";
    port = 8080;
  }
  socket_t socket() const override { return INVALID_SOCKET; }

 private:
  absl::string_view in_;
  std::string out_;
};

// cpp-httplib's pool, counting the connections it is given: a connection
// counts from its accept (queued for a thread) until it is closed.
class CountingPool final : public httplib::TaskQueue {
 public:
  CountingPool(int threads, std::atomic<int>* open)
      : pool_(static_cast<size_t>(threads)), open_(open) {}
  void enqueue(std::function<void()> fn) override {
    open_->fetch_add(1);
    pool_.enqueue(std::move(fn));
  }
  void shutdown() override { pool_.shutdown(); }

 private:
  httplib::ThreadPool pool_;
  std::atomic<int>* open_;
};

}  // namespace

void ApplyLimits(const ConnectionLimits& limits, httplib::Server& server) {
  const int threads = limits.threads;
  server.new_task_queue = [threads] {
    return new httplib::ThreadPool(static_cast<size_t>(threads));
  };
  const int64_t idle_s =
      std::max<int64_t>(1, absl::ToInt64Seconds(limits.idle));
  server.set_keep_alive_timeout(idle_s);
  server.set_keep_alive_max_count(static_cast<size_t>(limits.max_requests));
  server.set_read_timeout(idle_s, 0);
  server.set_write_timeout(
      std::max<int64_t>(1, absl::ToInt64Seconds(limits.write)), 0);
}

BoundedServer::BoundedServer(ConnectionLimits limits)
    : limits_(std::move(limits)) {
  const int threads = limits_.threads;
  new_task_queue = [threads, open = &open_] {
    return new CountingPool(threads, open);
  };
  set_keep_alive_max_count(static_cast<size_t>(limits_.max_requests));
}

bool BoundedServer::process_and_close_socket(socket_t sock) {
  struct Close {
    socket_t sock;
    std::atomic<int>* open;
    ~Close() {
      ::shutdown(sock, SHUT_RDWR);
      ::close(sock);
      open->fetch_sub(1);
    }
  } close{sock, &open_};
  if (open_.load() > limits_.max_connections) {
    // Over the cap: a short answer, never waited on.
    const std::string body =
        absl::StrCat("{\"error\":\"too many connections (",
                     limits_.max_connections, " open); try again\"}");
    const std::string answer = absl::StrCat(
        "HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json"
        "\r\nConnection: close\r\nRetry-After: 1\r\nContent-Length: ",
        body.size(), "\r\n\r\n", body);
    (void)::send(sock, answer.data(), answer.size(),
                 MSG_NOSIGNAL | MSG_DONTWAIT);
    return false;
  }
  DeadlineStream stream(sock, limits_);
  auto stopping = [this] { return svr_sock_ == INVALID_SOCKET; };
  bool ok = true;
  for (int n = 0; n < limits_.max_requests; ++n) {
    if (!stream.WaitForRequest(limits_.idle, stopping)) break;
    stream.set_deadline(absl::Now() + limits_.request);
    bool closed = false;
    ok =
        process_request(stream, n + 1 == limits_.max_requests, closed, nullptr);
    if (!ok || closed) break;
  }
  return ok;
}

std::string BoundedServer::ServeForTest(absl::string_view raw) {
  MemoryStream stream(raw);
  for (int n = 0; n < limits_.max_requests && !stream.at_end(); ++n) {
    bool closed = false;
    if (!process_request(stream, n + 1 == limits_.max_requests, closed,
                         nullptr) ||
        closed) {
      break;
    }
  }
  return stream.out();
}

}  // namespace tunefleet::dashboard
