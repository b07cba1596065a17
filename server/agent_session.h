// One connected agent as the server sees it: its Hello, the channel to send
// it measure batches on, and when it was last heard from.
#ifndef TUNEFLEET_SERVER_AGENT_SESSION_H_
#define TUNEFLEET_SERVER_AGENT_SESSION_H_

#include <algorithm>
#include <atomic>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "trial/trial_request.h"
#include "tunefleet/v1/agent.pb.h"

namespace tunefleet::server {

// Where a session's messages go: the agent's gRPC stream in the server
// (AgentServiceImpl::Stream, which queues them), a recording fake agent in
// tests. The session calls
// it one call at a time, under the session's lock, and never after Close():
// an implementation must not call back into the session or the scheduler.
class AgentChannel {
 public:
  virtual ~AgentChannel() = default;
  // Writes one message to the agent; false when it cannot be delivered
  // (the stream broke).
  virtual bool Send(const tunefleet::v1::ServerMessage& message) = 0;
  // Send() of a message the channel may take instead of copying; a channel
  // that queues its writes (the server's) overrides it.
  virtual bool Post(tunefleet::v1::ServerMessage&& message) {
    return Send(message);
  }
  // Ends the agent's connection from the server side (a silent agent): the
  // connection then cleans up as on a disconnect (RemoveAgent()).
  virtual void Cancel() = 0;
};

// Thread-safe. `channel` is not owned and must stay valid until Close(),
// which the owner of the connection (the AgentService call that created
// the session, through LeaseScheduler::RemoveAgent) runs before the channel
// goes away; after it Send() and Disconnect() do nothing.
class AgentSession {
 public:
  // `now_ms`: when the agent connected, Unix ms of the scheduler's clock.
  AgentSession(std::string id, tunefleet::v1::Hello hello,
               AgentChannel* channel, int64_t now_ms)
      : id_(std::move(id)),
        hello_(std::move(hello)),
        device_bytes_(hello_.device().SerializeAsString()),
        last_seen_ms_(now_ms),
        channel_(channel) {}

  const std::string& id() const { return id_; }
  const std::string& key() const { return hello_.device_key(); }
  const std::string& name() const { return hello_.agent_name(); }
  const tunefleet::v1::DeviceInfo& device() const { return hello_.device(); }
  // device() serialized: an agent whose DeviceInfo has the same bytes
  // cannot differ from this one (AgentServiceImpl::Admit skips comparing
  // them field by field).
  const std::string& device_bytes() const { return device_bytes_; }
  uint32_t device_info_revision() const {
    return hello_.device_info_revision();
  }
  // Whether the agent caches sources by KernelLaunch.source_hash
  // (Hello.source_cache): SendBatch() then sends each source in full once
  // per session and afterwards its hash alone.
  bool source_cache() const { return hello_.source_cache(); }
  // Whether the agent runs model plans (Hello.model_runs).
  bool model_runs() const { return hello_.model_runs(); }
  // Requests this agent accepts before answering (at least 1).
  uint32_t capacity() const { return std::max(1u, hello_.max_in_flight()); }

  // Any message from the agent (heartbeat or result) proves it alive.
  // `now_ms`: Unix ms of the scheduler's clock.
  void Touch(int64_t now_ms) { last_seen_ms_.store(now_ms); }
  int64_t last_seen_ms() const { return last_seen_ms_.load(); }

  // Writes one message (the server's channel queues it: this does not wait
  // for the agent); false when closed or the channel broke. A measure batch
  // goes as by SendBatch() with no source texts.
  bool Send(tunefleet::v1::ServerMessage message) {
    if (message.has_batch()) return SendBatch(std::move(message), {});
    absl::MutexLock lock(&mu_);
    return channel_ != nullptr && channel_->Post(std::move(message));
  }
  // A measure batch: request i's launches that name their source by hash
  // alone get it from `sources[i]` (may be null: the request is whole)
  // unless this agent caches sources and was sent it earlier in this
  // session; for such an agent a source already sent goes as its hash
  // alone, the others in full (the decision and the write happen under one
  // lock, so the agent always receives a source before a request that
  // names it by hash). false when closed or the channel broke.
  bool SendBatch(tunefleet::v1::ServerMessage message,
                 const std::vector<const trial::SourceTexts*>& sources) {
    absl::MutexLock lock(&mu_);
    if (channel_ == nullptr) return false;
    auto& requests = *message.mutable_batch()->mutable_requests();
    for (int i = 0; i < requests.size(); ++i) {
      const trial::SourceTexts* texts =
          static_cast<size_t>(i) < sources.size() ? sources[i] : nullptr;
      tunefleet::v1::MeasureRequest& r = requests[i];
      PrepareSource(r.mutable_kernel(), texts);
      if (r.has_verification()) {
        PrepareSource(r.mutable_verification()->mutable_reference(), texts);
      }
    }
    return channel_->Post(std::move(message));
  }
  // The agent lacks the sources of `request` (it answered
  // Measurement.SOURCE_UNKNOWN): the next request naming them carries them
  // in full again.
  void ForgetSources(const tunefleet::v1::MeasureRequest& request) {
    absl::MutexLock lock(&mu_);
    sent_sources_.erase(request.kernel().source_hash());
    sent_sources_.erase(request.verification().reference().source_hash());
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
  // Leaves launch->source out when the agent caches sources and was sent
  // it before in this session, else fills it in from `texts` (when given)
  // and remembers it as sent.
  void PrepareSource(tunefleet::v1::KernelLaunch* launch,
                     const trial::SourceTexts* texts)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    const std::string& hash = launch->source_hash();
    if (hash.empty()) return;
    if (source_cache() && sent_sources_.contains(hash)) {
      launch->clear_source();
      return;
    }
    if (launch->source().empty() && texts != nullptr) {
      auto it = texts->find(hash);
      if (it != texts->end()) launch->set_source(it->second);
    }
    if (source_cache() && !launch->source().empty()) {
      sent_sources_.insert(hash);
    }
  }

  const std::string id_;
  const tunefleet::v1::Hello hello_;
  const std::string device_bytes_;
  std::atomic<int64_t> last_seen_ms_;
  absl::Mutex mu_;
  AgentChannel* channel_ ABSL_GUARDED_BY(mu_);
  // Source hashes sent in full on this session (a few per job).
  std::set<std::string> sent_sources_ ABSL_GUARDED_BY(mu_);
};

}  // namespace tunefleet::server

#endif  // TUNEFLEET_SERVER_AGENT_SESSION_H_
