// One connected agent as the server sees it: its Hello and the stream to
// send it measure batches on.
#ifndef TUNEFLEET_SERVER_AGENT_SESSION_H_
#define TUNEFLEET_SERVER_AGENT_SESSION_H_

#include <string>

#include "absl/synchronization/mutex.h"
#include "grpcpp/grpcpp.h"
#include "proto/agent.grpc.pb.h"

namespace tunefleet::server {

using AgentStream = grpc::ServerReaderWriter<tunefleet::v1::ServerMessage,
                                             tunefleet::v1::AgentMessage>;

// Thread-safe. The stream belongs to the AgentService call that created the
// session; Close() must run before that call returns, after which Send()
// fails instead of touching the stream.
class AgentSession {
 public:
  AgentSession(std::string id, tunefleet::v1::Hello hello, AgentStream* stream)
      : id_(std::move(id)), hello_(std::move(hello)), stream_(stream) {}

  const std::string& id() const { return id_; }
  const std::string& key() const { return hello_.device_key(); }
  const std::string& name() const { return hello_.agent_name(); }
  const tunefleet::v1::DeviceInfo& device() const { return hello_.device(); }
  // Requests this agent accepts before answering (at least 1).
  uint32_t capacity() const { return std::max(1u, hello_.max_in_flight()); }

  // Writes one message; false when closed or the stream broke.
  bool Send(const tunefleet::v1::ServerMessage& message) {
    absl::MutexLock lock(&mu_);
    return stream_ != nullptr && stream_->Write(message);
  }
  void Close() {
    absl::MutexLock lock(&mu_);
    stream_ = nullptr;
  }

 private:
  const std::string id_;
  const tunefleet::v1::Hello hello_;
  absl::Mutex mu_;
  AgentStream* stream_ ABSL_GUARDED_BY(mu_);
};

}  // namespace tunefleet::server

#endif  // TUNEFLEET_SERVER_AGENT_SESSION_H_
