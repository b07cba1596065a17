// A device agent without gRPC: the channel of a real AgentSession that
// records what the server sends it, for tests of the scheduler and jobs to
// read and answer.
#ifndef TUNEFLEET_TESTS_UNIT_SERVER_FAKE_AGENT_H_
#define TUNEFLEET_TESTS_UNIT_SERVER_FAKE_AGENT_H_

#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "server/agent_session.h"
#include "tunefleet/v1/agent.pb.h"

namespace tunefleet::testing {

// Thread-safe: the scheduler sends from job and test threads while the
// test reads. Must outlive its session's use (until the scheduler removes
// the agent, or is destroyed).
class FakeAgent final : public server::AgentChannel {
 public:
  // An agent of device `key` accepting `capacity` requests at a time,
  // connected at `now_ms` (Unix ms of the scheduler's clock).
  // `driver_version`: its DeviceInfo's (empty: none).
  FakeAgent(const std::string& id, const std::string& key, uint32_t capacity,
            int64_t now_ms, const std::string& driver_version = "") {
    tunefleet::v1::Hello hello;
    hello.set_device_key(key);
    hello.mutable_device()->set_driver_version(driver_version);
    hello.set_agent_name(id + "-host");
    hello.set_max_in_flight(capacity);
    session_ = std::make_shared<server::AgentSession>(id, std::move(hello),
                                                      this, now_ms);
  }

  // The session to give LeaseScheduler::AddAgent().
  const std::shared_ptr<server::AgentSession>& session() const {
    return session_;
  }
  const std::string& id() const { return session_->id(); }

  // Records the message; its measure requests join the unanswered ones.
  bool Send(const tunefleet::v1::ServerMessage& message) override {
    absl::MutexLock lock(&mu_);
    ++messages_;
    for (const tunefleet::v1::MeasureRequest& r : message.batch().requests()) {
      received_.push_back(r);
      unanswered_.push_back(r);
    }
    return true;
  }
  void Cancel() override {
    absl::MutexLock lock(&mu_);
    cancelled_ = true;
  }

  // Every measure request received so far, in order.
  std::vector<tunefleet::v1::MeasureRequest> Received() const {
    absl::MutexLock lock(&mu_);
    return received_;
  }
  // Messages received (of any kind).
  int messages() const {
    absl::MutexLock lock(&mu_);
    return messages_;
  }
  bool cancelled() const {
    absl::MutexLock lock(&mu_);
    return cancelled_;
  }
  // Takes the oldest request not yet taken, waiting up to `timeout` for
  // one; nullopt when none came.
  std::optional<tunefleet::v1::MeasureRequest> Next(absl::Duration timeout) {
    absl::MutexLock lock(&mu_);
    auto has_one = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      return !unanswered_.empty();
    };
    if (!mu_.AwaitWithTimeout(absl::Condition(&has_one), timeout)) {
      return std::nullopt;
    }
    tunefleet::v1::MeasureRequest next = std::move(unanswered_.front());
    unanswered_.pop_front();
    return next;
  }
  // Requests received but not taken by Next().
  size_t pending() const {
    absl::MutexLock lock(&mu_);
    return unanswered_.size();
  }

 private:
  std::shared_ptr<server::AgentSession> session_;
  mutable absl::Mutex mu_;
  int messages_ ABSL_GUARDED_BY(mu_) = 0;
  bool cancelled_ ABSL_GUARDED_BY(mu_) = false;
  std::vector<tunefleet::v1::MeasureRequest> received_ ABSL_GUARDED_BY(mu_);
  std::deque<tunefleet::v1::MeasureRequest> unanswered_ ABSL_GUARDED_BY(mu_);
};

}  // namespace tunefleet::testing

#endif  // TUNEFLEET_TESTS_UNIT_SERVER_FAKE_AGENT_H_
