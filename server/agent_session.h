// One connected agent as the server sees it: its Hello, the stream to send
// it measure batches on, and when it was last heard from.
#ifndef TUNEFLEET_SERVER_AGENT_SESSION_H_
#define TUNEFLEET_SERVER_AGENT_SESSION_H_

#include <algorithm>
#include <atomic>
#include <string>

#include "absl/synchronization/mutex.h"
#include "grpcpp/grpcpp.h"
#include "proto/agent.grpc.pb.h"

namespace tunefleet::server {

using AgentStream = grpc::ServerReaderWriter<tunefleet::v1::ServerMessage,
                                             tunefleet::v1::AgentMessage>;

// Thread-safe. The stream and context belong to the AgentService call that
// created the session; Close() must run before that call returns, after
// which Send() and Disconnect() do nothing.
class AgentSession {
 public:
  AgentSession(std::string id, tunefleet::v1::Hello hello, AgentStream* stream,
               grpc::ServerContext* context, int64_t now_ms)
      : id_(std::move(id)),
        hello_(std::move(hello)),
        last_seen_ms_(now_ms),
        stream_(stream),
        context_(context) {}

  const std::string& id() const { return id_; }
  const std::string& key() const { return hello_.device_key(); }
  const std::string& name() const { return hello_.agent_name(); }
  const tunefleet::v1::DeviceInfo& device() const { return hello_.device(); }
  // Requests this agent accepts before answering (at least 1).
  uint32_t capacity() const { return std::max(1u, hello_.max_in_flight()); }

  // Any message from the agent (heartbeat or result) proves it alive.
  void Touch(int64_t now_ms) { last_seen_ms_.store(now_ms); }
  int64_t last_seen_ms() const { return last_seen_ms_.load(); }

  // Writes one message; false when closed or the stream broke.
  bool Send(const tunefleet::v1::ServerMessage& message) {
    absl::MutexLock lock(&mu_);
    return stream_ != nullptr && stream_->Write(message);
  }
  // Ends the agent's call from the server side (a silent agent): its
  // pending Read() fails and the call cleans up as on a disconnect.
  void Disconnect() {
    absl::MutexLock lock(&mu_);
    if (context_ != nullptr) context_->TryCancel();
  }
  void Close() {
    absl::MutexLock lock(&mu_);
    stream_ = nullptr;
    context_ = nullptr;
  }

 private:
  const std::string id_;
  const tunefleet::v1::Hello hello_;
  std::atomic<int64_t> last_seen_ms_;
  absl::Mutex mu_;
  AgentStream* stream_ ABSL_GUARDED_BY(mu_);
  grpc::ServerContext* context_ ABSL_GUARDED_BY(mu_);
};

}  // namespace tunefleet::server

#endif  // TUNEFLEET_SERVER_AGENT_SESSION_H_
