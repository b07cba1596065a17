#include "server/agent_service.h"

#include <algorithm>
#include <deque>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "auth/grpc_status.h"
#include "base/printable.h"
#include "logging/log.h"
#include "server/device_match.h"
#include "server/refused_call.h"
#include "validation/validation.h"

namespace tunefleet::server {
namespace {

tunefleet::v1::ServerMessage WelcomeMessage(const std::string& agent_id,
                                            int64_t heartbeat_interval_ms) {
  tunefleet::v1::ServerMessage welcome;
  welcome.mutable_welcome()->set_agent_id(agent_id);
  welcome.mutable_welcome()->set_heartbeat_interval_ms(
      static_cast<uint32_t>(heartbeat_interval_ms));
  welcome.mutable_welcome()->set_result_batches(true);  // Route() takes both
  return welcome;
}

}  // namespace

AgentReactor* RefusedAgentStream(grpc::Status status) {
  return RefusedCall<AgentReactor>(std::move(status));
}

// One agent's stream: reads Hello, then its messages, one read at a time;
// writes the session's messages from a queue, one write at a time. gRPC
// runs the read and write reactions on its own threads, never inline in
// the StartRead/StartWrite call (grpcpp's callback handlers schedule them
// with can_inline=false), so a sender (LeaseScheduler::Send, holding the
// session's lock) cannot re-enter the stream; no lock of the stream is
// held across a Start call either. Lifetime: created by Connect(), deleted in
// OnDone() once gRPC is done with the call; the session's channel pointer
// (this) is detached by LeaseScheduler::RemoveAgent before Finish(), so nothing
// reaches it after.
class AgentServiceImpl::Stream final : public AgentReactor,
                                       public AgentChannel {
 public:
  Stream(AgentServiceImpl* service, grpc::CallbackServerContext* context)
      : service_(service), context_(context) {
    StartRead(&in_);
  }

  // AgentChannel: queues the message; false once the stream is ending.
  bool Send(const tunefleet::v1::ServerMessage& message) override {
    return Post(tunefleet::v1::ServerMessage(message));
  }
  bool Post(tunefleet::v1::ServerMessage&& message) override {
    const tunefleet::v1::ServerMessage* next = nullptr;
    {
      absl::MutexLock lock(&mu_);
      if (ending_ || broken_) return false;
      out_.push_back(std::move(message));
      if (writing_) return true;
      writing_ = true;
      next = &out_.front();  // a deque keeps it in place on push_back
    }
    StartWrite(next);
    return true;
  }
  // The pending read fails and the stream ends as on a disconnect.
  void Cancel() override { context_->TryCancel(); }

  void OnReadDone(bool ok) override {
    if (!ok) {
      End(grpc::Status::OK);
      return;
    }
    if (session_ == nullptr) {
      Hello();
      return;
    }
    session_->Touch(service_->scheduler_->clock().NowMs());
    service_->Route(in_, *session_);
    StartRead(&in_);
  }

  void OnWriteDone(bool ok) override {
    bool finish = false;
    const tunefleet::v1::ServerMessage* next = nullptr;
    {
      absl::MutexLock lock(&mu_);
      out_.pop_front();
      // A failed write: the agent is going away; its read fails too.
      if (!ok) broken_ = true;
      if (broken_ || ending_) out_.clear();
      if (out_.empty()) {
        writing_ = false;
        finish = ending_ && !finished_;
        finished_ |= finish;
      } else {
        next = &out_.front();
      }
    }
    if (next != nullptr) StartWrite(next);
    if (finish) Finish(status_);
  }

  void OnDone() override { delete this; }

 private:
  // The first message: Hello, or the call ends with Admit()'s error.
  void Hello() {
    // Registered inside Admit(), under its lock: no other agent of the key
    // is checked between this one's check and its joining.
    absl::Status admitted = service_->Admit(in_, [this] {
      const tunefleet::v1::Hello& hello = in_.hello();
      const std::string id =
          absl::StrCat("agent-", service_->next_agent_.fetch_add(1));
      session_ = std::make_shared<AgentSession>(
          id, hello, this, service_->scheduler_->clock().NowMs());
      session_->Send(WelcomeMessage(id, service_->heartbeat_interval_ms_));
      if (service_->verbose_) {
        // (Validated as printable already; escaped all the same, as a log
        // line must stay one line.)
        logging::Info("[server] {} connected: key {}, {} ({})", id,
                      base::EscapeUnprintable(hello.device_key()),
                      base::EscapeUnprintable(hello.agent_name()),
                      base::EscapeUnprintable(hello.device().device_name()));
      }
      service_->scheduler_->AddAgent(session_);
    });
    if (!admitted.ok()) {
      End(auth::ToGrpc(admitted));
      return;
    }
    StartRead(&in_);
  }

  // Reading is over (disconnect, cancel) or the call is refused: requeues
  // the agent's leases, then finishes the call once no write is in flight.
  void End(grpc::Status status) {
    // Closes the session first: nothing is queued on this stream after.
    if (session_ != nullptr) service_->Disconnected(session_->id());
    bool finish = false;
    {
      absl::MutexLock lock(&mu_);
      ending_ = true;
      status_ = std::move(status);
      finish = !writing_;
      finished_ |= finish;
    }
    if (finish) Finish(status_);
  }

  AgentServiceImpl* const service_;
  grpc::CallbackServerContext* const context_;
  tunefleet::v1::AgentMessage in_;         // owned by the one pending read
  std::shared_ptr<AgentSession> session_;  // set once, by Hello()
  absl::Mutex mu_;
  std::deque<tunefleet::v1::ServerMessage> out_ ABSL_GUARDED_BY(mu_);
  bool writing_ ABSL_GUARDED_BY(mu_) = false;  // out_.front() in flight
  bool broken_ ABSL_GUARDED_BY(mu_) = false;   // a write failed
  bool ending_ ABSL_GUARDED_BY(mu_) = false;   // End() ran
  bool finished_ ABSL_GUARDED_BY(mu_) = false;
  grpc::Status status_;  // set by End(), before ending_
};

AgentReactor* AgentServiceImpl::Connect(grpc::CallbackServerContext* context) {
  return new Stream(this, context);  // deletes itself in OnDone()
}

absl::Status AgentServiceImpl::Admit(const tunefleet::v1::AgentMessage& first,
                                     const std::function<void()>& join) {
  if (!first.has_hello()) {
    return absl::InvalidArgumentError(
        "the first message on the stream must be Hello");
  }
  const tunefleet::v1::Hello& hello = first.hello();
  if (absl::Status s = validation::ValidateHello(hello); !s.ok()) {
    return absl::InvalidArgumentError(s.message());
  }
  // The check against the connected agents and the joining are one step:
  // two unlike agents connecting at once cannot both pass the check.
  absl::MutexLock admission(&admission_mu_);
  // The agents of a key are mostly identical: those whose DeviceInfo has
  // the same bytes need no field-by-field comparison (which, against every
  // connected agent, made 1,000 agents connecting quadratic in text
  // formatting).
  const std::string device_bytes = hello.device().SerializeAsString();
  for (const std::shared_ptr<AgentSession>& other : scheduler_->Agents()) {
    if (other->key() != hello.device_key()) continue;
    if (other->device_bytes() == device_bytes) continue;
    const std::string difference = DeviceDifference(
        hello.device(), other->device(),
        std::min(hello.device_info_revision(), other->device_info_revision()));
    if (!difference.empty()) {
      return absl::FailedPreconditionError(absl::StrCat(
          "device key ", hello.device_key(), " is served by ", other->id(),
          " (", other->name(), ") whose device differs: ", difference,
          "; agents of one key must be interchangeable: give this agent its "
          "own --key"));
    }
  }
  // An agent of an older build leaves the fields it cannot fill (the
  // image fields, the libraries) as a newer agent of the key stored them.
  tunefleet::v1::DeviceInfo device = hello.device();
  if (hello.device_info_revision() < contract::kDeviceInfoRevision) {
    if (absl::StatusOr<tunefleet::v1::DeviceInfo> stored =
            store_->GetDevice(hello.device_key());
        stored.ok()) {
      device =
          WithUnreportedFields(device, *stored, hello.device_info_revision());
    }
  }
  if (absl::Status s = store_->UpsertDevice(hello.device_key(), device);
      !s.ok()) {
    return absl::InternalError(s.message());
  }
  // Another driver than the key's agents had: a new driver revision.
  bool new_driver = false;
  absl::StatusOr<int> revision = store_->NoteDriver(
      hello.device_key(), device.driver_version(), &new_driver);
  if (!revision.ok()) return absl::InternalError(revision.status().message());
  if (admit_hook_for_test_) admit_hook_for_test_(hello);
  join();
  if (new_driver && *revision > 1) {
    // The key's best records measured again on this driver (an agent of
    // it is there now to take the trials).
    absl::StatusOr<std::vector<int64_t>> started =
        StartRevalidation(*store_, *jobs_, hello.device_key(),
                          device.driver_version(), *revision, revalidate_top_);
    if (!started.ok()) {
      logging::Error("[server] key {}: driver revision {} ({}): {}",
                     base::EscapeUnprintable(hello.device_key()), *revision,
                     base::EscapeUnprintable(device.driver_version()),
                     std::string(started.status().message()));
    } else if (verbose_) {
      logging::Info(
          "[server] key {}: driver revision {} ({}): {} "
          "re-validation job(s)",
          base::EscapeUnprintable(hello.device_key()), *revision,
          base::EscapeUnprintable(device.driver_version()), started->size());
    }
  }
  return absl::OkStatus();
}

void AgentServiceImpl::Route(const tunefleet::v1::AgentMessage& message,
                             AgentSession& session) {
  // A result the ledger refuses (stale, repeated) is dropped: the agent
  // gets no answer either way.
  if (message.has_measurement()) {
    (void)ledger_->Receive(message.measurement(), session.id(),
                           session.device().driver_version());
  } else if (message.has_measurements()) {
    for (const tunefleet::v1::Measurement& m :
         message.measurements().measurements()) {
      (void)ledger_->Receive(m, session.id(),
                             session.device().driver_version());
    }
  } else if (message.has_model_result()) {
    if (model_runs_ != nullptr) {
      model_runs_->OnResult(session.id(), message.model_result());
    }
  }
  // Heartbeats: liveness only (the stream touched the session).
}

void AgentServiceImpl::Disconnected(const std::string& agent_id) {
  const LostLeases lost = ledger_->AgentGone(agent_id);
  if (model_runs_ != nullptr) model_runs_->OnAgentGone(agent_id);
  if (verbose_) {
    logging::Info("[server] {} disconnected; {} trial(s) requeued, {} given up",
                  agent_id, lost.requeued.size(), lost.abandoned.size());
  }
}

}  // namespace tunefleet::server
