#include "tests/support/fault_proxy.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <deque>
#include <optional>
#include <random>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"

namespace tunefleet::testing {
namespace {

constexpr size_t kMaxChunkBytes = 16 << 10;
// Read no more while this much waits in one direction's queue.
constexpr size_t kMaxQueuedBytes = 1 << 20;

absl::Status Errno(const std::string& what) {
  return absl::InternalError(absl::StrCat(what, ": ", std::strerror(errno)));
}

void SetNonBlocking(int fd) {
  fcntl(fd, F_SETFL, fcntl(fd, F_GETFL, 0) | O_NONBLOCK);
}

// The next close() of `fd` sends an RST instead of a FIN.
void ArmReset(int fd) {
  linger l{};
  l.l_onoff = 1;
  l.l_linger = 0;
  setsockopt(fd, SOL_SOCKET, SO_LINGER, &l, sizeof(l));
}

void Signal(int event_fd) {
  const uint64_t one = 1;
  (void)!write(event_fd, &one, sizeof(one));
}

void Drain(int event_fd) {
  uint64_t value = 0;
  (void)!read(event_fd, &value, sizeof(value));
}

// Milliseconds from `now` to `when` for poll(), rounded up; -1 for never.
int PollTimeoutMs(absl::Time now, absl::Time when) {
  if (when == absl::InfiniteFuture()) return -1;
  if (when <= now) return 0;
  return static_cast<int>(std::min<int64_t>(
      absl::ToInt64Milliseconds(absl::Ceil(when - now, absl::Milliseconds(1))),
      60000));
}

}  // namespace

ScopedFd::~ScopedFd() {
  if (fd_ >= 0) close(fd_);
}

ScopedFd& ScopedFd::operator=(ScopedFd&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) close(fd_);
    fd_ = other.fd_;
    other.fd_ = -1;
  }
  return *this;
}

// One proxied connection: client <-> upstream, run by its own thread.
class FaultProxy::Connection {
 public:
  Connection(FaultProxy* proxy, ScopedFd client, ScopedFd upstream,
             uint64_t seed)
      : proxy_(proxy),
        client_(std::move(client)),
        upstream_(std::move(upstream)),
        wake_(eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)),
        rng_(seed) {
    SetNonBlocking(client_.get());
    SetNonBlocking(upstream_.get());
    const int one = 1;
    setsockopt(client_.get(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    setsockopt(upstream_.get(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    thread_ = std::thread([this] { Run(); });
  }
  ~Connection() {
    Wake();
    if (thread_.joinable()) thread_.join();
  }

  void Wake() { Signal(wake_.get()); }
  bool finished() const { return finished_.load(); }

 private:
  struct Chunk {
    std::string bytes;
    size_t sent = 0;
    absl::Time release;
  };
  // One direction of the connection.
  struct Pipe {
    int in = -1;
    int out = -1;
    bool to_upstream = false;
    std::deque<Chunk> queue;
    size_t queued_bytes = 0;
    absl::Time last_release = absl::InfinitePast();
    absl::Time next_write = absl::InfinitePast();  // the throttle's
    bool eof = false;                              // `in` said end of stream
    bool shut = false;  // `out` was shut for writing after the queue drained

    // When the front chunk may be written; InfiniteFuture when none.
    absl::Time Due() const {
      if (queue.empty()) return absl::InfiniteFuture();
      return std::max(queue.front().release, next_write);
    }
  };
  enum class End { kClose, kReset };

  void Run();
  // Reads one chunk from p.in; kReset when the peer reset or a reset was
  // drawn, kClose never (end of stream only marks p.eof).
  std::optional<End> ReadChunk(Pipe& p, const LinkFaults& faults,
                               absl::Time now);
  std::optional<End> WriteFront(Pipe& p, const LinkFaults& faults,
                                absl::Time now);

  FaultProxy* const proxy_;
  ScopedFd client_;
  ScopedFd upstream_;
  ScopedFd wake_;
  std::mt19937_64 rng_;
  std::atomic<bool> finished_{false};
  std::thread thread_;
};

std::optional<FaultProxy::Connection::End> FaultProxy::Connection::ReadChunk(
    Pipe& p, const LinkFaults& faults, absl::Time now) {
  size_t limit = kMaxChunkBytes;
  if (faults.bytes_per_second > 0) {
    // About 50 ms of the allowance per chunk, so that the throttle is smooth.
    limit = std::clamp<size_t>(faults.bytes_per_second / 20, 1, limit);
  }
  std::string buffer(limit, '\0');
  const ssize_t n = read(p.in, buffer.data(), buffer.size());
  if (n == 0) {
    p.eof = true;
    return std::nullopt;
  }
  if (n < 0) {
    if (errno == EAGAIN || errno == EINTR) return std::nullopt;
    return End::kReset;  // the peer reset: pass it on
  }
  buffer.resize(n);
  if (faults.reset_probability > 0 &&
      std::uniform_real_distribution<double>(0, 1)(rng_) <
          faults.reset_probability) {
    absl::MutexLock lock(&proxy_->mu_);
    ++proxy_->stats_.resets;
    return End::kReset;
  }
  absl::Duration delay = faults.latency;
  if (faults.jitter > absl::ZeroDuration()) {
    delay +=
        faults.jitter * std::uniform_real_distribution<double>(-1, 1)(rng_);
  }
  delay = std::max(delay, absl::ZeroDuration());
  // Byte order per direction: never released before the previous chunk.
  const absl::Time release = std::max(now + delay, p.last_release);
  p.last_release = release;
  p.queued_bytes += buffer.size();
  p.queue.push_back(Chunk{std::move(buffer), 0, release});
  return std::nullopt;
}

std::optional<FaultProxy::Connection::End> FaultProxy::Connection::WriteFront(
    Pipe& p, const LinkFaults& faults, absl::Time now) {
  Chunk& c = p.queue.front();
  const ssize_t n = send(p.out, c.bytes.data() + c.sent,
                         c.bytes.size() - c.sent, MSG_NOSIGNAL);
  if (n < 0) {
    if (errno == EAGAIN || errno == EINTR) return std::nullopt;
    return End::kReset;
  }
  c.sent += n;
  p.queued_bytes -= n;
  if (faults.bytes_per_second > 0) {
    p.next_write = std::max(now, p.next_write) +
                   absl::Seconds(static_cast<double>(n) /
                                 static_cast<double>(faults.bytes_per_second));
  }
  {
    absl::MutexLock lock(&proxy_->mu_);
    (p.to_upstream ? proxy_->stats_.bytes_to_upstream
                   : proxy_->stats_.bytes_to_client) += n;
  }
  if (c.sent == c.bytes.size()) p.queue.pop_front();
  return std::nullopt;
}

void FaultProxy::Connection::Run() {
  std::array<Pipe, 2> pipes;
  pipes[0].in = client_.get();
  pipes[0].out = upstream_.get();
  pipes[0].to_upstream = true;
  pipes[1].in = upstream_.get();
  pipes[1].out = client_.get();
  absl::Time reset_at = absl::InfiniteFuture();
  {
    absl::MutexLock lock(&proxy_->mu_);
    const LinkFaults& f = proxy_->faults_;
    if (f.reset_after_max > absl::ZeroDuration()) {
      const double lo = absl::ToDoubleSeconds(f.reset_after_min);
      const double hi = std::max(lo, absl::ToDoubleSeconds(f.reset_after_max));
      reset_at =
          absl::Now() + absl::Seconds(std::uniform_real_distribution<double>(
                            lo, std::nextafter(hi, hi + 1))(rng_));
    }
  }
  End end = End::kClose;
  while (true) {
    LinkFaults faults;
    bool stalled = false;
    {
      absl::MutexLock lock(&proxy_->mu_);
      if (proxy_->stopping_) break;
      faults = proxy_->faults_;
      stalled = proxy_->stalled_;
    }
    absl::Time now = absl::Now();
    if (stalled) {
      // A partition: nothing read, nothing written, nothing closed.
      pollfd w{wake_.get(), POLLIN, 0};
      poll(&w, 1, -1);
      Drain(wake_.get());
      continue;
    }
    if (now >= reset_at) {
      absl::MutexLock lock(&proxy_->mu_);
      ++proxy_->stats_.resets;
      end = End::kReset;
      break;
    }
    std::array<pollfd, 3> fds{};
    fds[0] = {wake_.get(), POLLIN, 0};
    absl::Time wake_at = reset_at;
    for (int i = 0; i < 2; ++i) {
      Pipe& p = pipes[i];
      const bool pipe_out = !p.queue.empty() && p.Due() <= now;
      // The out socket of pipe i is the in socket of the other pipe, so
      // both wishes go on one pollfd per socket.
      fds[1 + i].fd = p.in;
      if (!p.eof && p.queued_bytes < kMaxQueuedBytes)
        fds[1 + i].events |= POLLIN;
      if (pipe_out) fds[2 - i].events |= POLLOUT;
      if (!p.queue.empty()) wake_at = std::min(wake_at, p.Due());
    }
    // A socket nothing is wanted of is left out (a hung-up one would
    // otherwise wake poll() at once, over and over).
    for (int i = 1; i < 3; ++i) {
      if (fds[i].events == 0) fds[i].fd = -1;
    }
    poll(fds.data(), fds.size(), PollTimeoutMs(now, wake_at));
    if (fds[0].revents & POLLIN) Drain(wake_.get());
    {
      absl::MutexLock lock(&proxy_->mu_);
      if (proxy_->stalled_ || proxy_->stopping_) continue;
    }
    now = absl::Now();
    std::optional<End> ended;
    for (int i = 0; i < 2 && !ended; ++i) {
      Pipe& p = pipes[i];
      if (fds[1 + i].revents & (POLLIN | POLLHUP | POLLERR)) {
        if (!p.eof && p.queued_bytes < kMaxQueuedBytes) {
          ended = ReadChunk(p, faults, now);
        }
      }
      if (!ended && !p.queue.empty() && p.Due() <= now &&
          (fds[2 - i].revents & (POLLOUT | POLLERR | POLLHUP))) {
        ended = WriteFront(p, faults, now);
      }
      if (!ended && p.eof && p.queue.empty() && !p.shut) {
        shutdown(p.out, SHUT_WR);
        p.shut = true;
      }
    }
    if (ended) {
      end = *ended;
      break;
    }
    if (pipes[0].shut && pipes[1].shut) break;
  }
  if (end == End::kReset) {
    ArmReset(client_.get());
    ArmReset(upstream_.get());
  }
  client_ = ScopedFd();
  upstream_ = ScopedFd();
  finished_.store(true);
  proxy_->Wake();
}

absl::StatusOr<std::unique_ptr<FaultProxy>> FaultProxy::Start(
    const std::string& upstream_host, int upstream_port, LinkFaults faults,
    uint64_t seed) {
  std::unique_ptr<FaultProxy> proxy(new FaultProxy());  // private constructor
  in_addr upstream{};
  if (inet_pton(AF_INET, upstream_host.c_str(), &upstream) != 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("not an IPv4 address: ", upstream_host));
  }
  proxy->upstream_ip_ = upstream.s_addr;
  proxy->upstream_port_ = upstream_port;
  proxy->faults_ = faults;
  proxy->seed_ = seed;
  proxy->listen_fd_ = ScopedFd(socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!proxy->listen_fd_.valid()) return Errno("socket");
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  if (bind(proxy->listen_fd_.get(), reinterpret_cast<sockaddr*>(&addr),
           sizeof(addr)) != 0) {
    return Errno("bind");
  }
  if (listen(proxy->listen_fd_.get(), 64) != 0) return Errno("listen");
  socklen_t len = sizeof(addr);
  getsockname(proxy->listen_fd_.get(), reinterpret_cast<sockaddr*>(&addr),
              &len);
  proxy->port_ = ntohs(addr.sin_port);
  SetNonBlocking(proxy->listen_fd_.get());
  proxy->wake_fd_ = ScopedFd(eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC));
  if (!proxy->wake_fd_.valid()) return Errno("eventfd");
  FaultProxy* raw = proxy.get();
  proxy->accept_thread_ = std::thread([raw] { raw->AcceptLoop(); });
  return proxy;
}

FaultProxy::~FaultProxy() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  Wake();
  if (accept_thread_.joinable()) accept_thread_.join();
  std::vector<std::unique_ptr<Connection>> connections;
  {
    absl::MutexLock lock(&mu_);
    connections.swap(connections_);
  }
  connections.clear();  // each joins its thread
}

std::string FaultProxy::address() const {
  return absl::StrCat("127.0.0.1:", port_);
}

void FaultProxy::SetFaults(const LinkFaults& faults) {
  {
    absl::MutexLock lock(&mu_);
    faults_ = faults;
  }
  Wake();
}

void FaultProxy::Stall() {
  {
    absl::MutexLock lock(&mu_);
    stalled_ = true;
  }
  Wake();
}

void FaultProxy::Restore() {
  {
    absl::MutexLock lock(&mu_);
    stalled_ = false;
  }
  Wake();
}

LinkStats FaultProxy::stats() const {
  absl::MutexLock lock(&mu_);
  return stats_;
}

void FaultProxy::Wake() {
  Signal(wake_fd_.get());
  absl::MutexLock lock(&mu_);
  for (const auto& c : connections_) c->Wake();
}

void FaultProxy::AcceptLoop() {
  while (true) {
    std::array<pollfd, 2> fds{};
    fds[0] = {wake_fd_.get(), POLLIN, 0};
    fds[1] = {listen_fd_.get(), POLLIN, 0};
    poll(fds.data(), fds.size(), -1);
    if (fds[0].revents & POLLIN) Drain(wake_fd_.get());
    std::vector<std::unique_ptr<Connection>> finished;
    {
      absl::MutexLock lock(&mu_);
      if (stopping_) return;
      for (auto it = connections_.begin(); it != connections_.end();) {
        if ((*it)->finished()) {
          finished.push_back(std::move(*it));
          it = connections_.erase(it);
        } else {
          ++it;
        }
      }
    }
    finished.clear();  // joins the ended connections' threads, unlocked
    if (!(fds[1].revents & POLLIN)) continue;
    ScopedFd client(accept4(listen_fd_.get(), nullptr, nullptr, SOCK_CLOEXEC));
    if (!client.valid()) continue;
    ScopedFd upstream(socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = upstream_ip_;
    addr.sin_port = htons(static_cast<uint16_t>(upstream_port_));
    if (!upstream.valid() ||
        connect(upstream.get(), reinterpret_cast<sockaddr*>(&addr),
                sizeof(addr)) != 0) {
      ArmReset(client.get());  // no server: the client sees a reset
      continue;
    }
    absl::MutexLock lock(&mu_);
    ++stats_.accepted;
    connections_.push_back(std::make_unique<Connection>(
        this, std::move(client), std::move(upstream), seed_++));
  }
}

}  // namespace tunefleet::testing
