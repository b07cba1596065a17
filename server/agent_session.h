// One connected agent as the server sees it: its Hello, the channel to send
// it measure batches on, and when it was last heard from.
#ifndef TUNEFLEET_SERVER_AGENT_SESSION_H_
#define TUNEFLEET_SERVER_AGENT_SESSION_H_

#include <algorithm>
#include <atomic>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "tunefleet/v1/agent.pb.h"

namespace tunefleet::server {

// Where a session's messages go: the agent's gRPC stream in the server
// (AgentServiceImpl), a recording fake agent in tests. The session calls
// it one call at a time, under the session's lock, and never after Close():
// an implementation must not call back into the session or the scheduler.
class AgentChannel {
 public:
  virtual ~AgentChannel() = default;
  // Writes one message to the agent; false when it cannot be delivered
  // (the stream broke).
  virtual bool Send(const tunefleet::v1::ServerMessage& message) = 0;
  // Ends the agent's connection from the server side (a silent agent): the
  // connection then cleans up as on a disconnect (RemoveAgent()).
  virtual void Cancel() = 0;
};

// Thread-safe. `channel` is not owned and must stay valid until Close(),
// which the owner of the connection (the AgentService call that created
// the session, through Scheduler::RemoveAgent) runs before the channel
// goes away; after it Send() and Disconnect() do nothing.
class AgentSession {
 public:
  // `now_ms`: when the agent connected, Unix ms of the scheduler's clock.
  AgentSession(std::string id, tunefleet::v1::Hello hello,
               AgentChannel* channel, int64_t now_ms)
      : id_(std::move(id)),
        hello_(std::move(hello)),
        last_seen_ms_(now_ms),
        channel_(channel) {}

  const std::string& id() const { return id_; }
  const std::string& key() const { return hello_.device_key(); }
  const std::string& name() const { return hello_.agent_name(); }
  const tunefleet::v1::DeviceInfo& device() const { return hello_.device(); }
  uint32_t device_info_revision() const {
    return hello_.device_info_revision();
  }
  // Requests this agent accepts before answering (at least 1).
  uint32_t capacity() const { return std::max(1u, hello_.max_in_flight()); }

  // Any message from the agent (heartbeat or result) proves it alive.
  // `now_ms`: Unix ms of the scheduler's clock.
  void Touch(int64_t now_ms) { last_seen_ms_.store(now_ms); }
  int64_t last_seen_ms() const { return last_seen_ms_.load(); }

  // Writes one message; false when closed or the channel broke.
  bool Send(const tunefleet::v1::ServerMessage& message) {
    absl::MutexLock lock(&mu_);
    return channel_ != nullptr && channel_->Send(message);
  }
  // Ends the agent's connection from the server side (a silent agent).
  void Disconnect() {
    absl::MutexLock lock(&mu_);
    if (channel_ != nullptr) channel_->Cancel();
  }
  // Detaches the channel: nothing is sent on it afterwards.
  void Close() {
    absl::MutexLock lock(&mu_);
    channel_ = nullptr;
  }

 private:
  const std::string id_;
  const tunefleet::v1::Hello hello_;
  std::atomic<int64_t> last_seen_ms_;
  absl::Mutex mu_;
  AgentChannel* channel_ ABSL_GUARDED_BY(mu_);
};

}  // namespace tunefleet::server

#endif  // TUNEFLEET_SERVER_AGENT_SESSION_H_
