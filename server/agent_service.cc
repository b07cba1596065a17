#include "server/agent_service.h"

#include <algorithm>
#include <cstdio>

#include "absl/strings/str_cat.h"
#include "server/auth/grpc_status.h"
#include "server/device_match.h"
#include "server/validation/validation.h"

namespace tunefleet::server {
namespace {

// The agent's gRPC stream as a session's channel. Lives for one Connect()
// call, which closes the session before returning.
class GrpcAgentChannel final : public AgentChannel {
 public:
  GrpcAgentChannel(AgentStream* stream, grpc::ServerContext* context)
      : stream_(stream), context_(context) {}

  bool Send(const tunefleet::v1::ServerMessage& message) override {
    return stream_->Write(message);
  }
  // The agent's pending Read() fails and its call cleans up as on a
  // disconnect.
  void Cancel() override { context_->TryCancel(); }

 private:
  AgentStream* const stream_;
  grpc::ServerContext* const context_;
};

tunefleet::v1::ServerMessage WelcomeMessage(const std::string& agent_id,
                                            int64_t heartbeat_interval_ms) {
  tunefleet::v1::ServerMessage welcome;
  welcome.mutable_welcome()->set_agent_id(agent_id);
  welcome.mutable_welcome()->set_heartbeat_interval_ms(
      static_cast<uint32_t>(heartbeat_interval_ms));
  return welcome;
}

}  // namespace

absl::Status AgentServiceImpl::Admit(const tunefleet::v1::AgentMessage& first) {
  if (!first.has_hello()) {
    return absl::InvalidArgumentError(
        "the first message on the stream must be Hello");
  }
  const tunefleet::v1::Hello& hello = first.hello();
  if (absl::Status s = validation::ValidateHello(hello); !s.ok()) {
    return absl::InvalidArgumentError(s.message());
  }
  for (const std::shared_ptr<AgentSession>& other : scheduler_->Agents()) {
    if (other->key() != hello.device_key()) continue;
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
  if (absl::Status s = store_->UpsertDevice(hello.device_key(), hello.device());
      !s.ok()) {
    return absl::InternalError(s.message());
  }
  return absl::OkStatus();
}

grpc::Status AgentServiceImpl::Connect(grpc::ServerContext* context,
                                       AgentStream* stream) {
  tunefleet::v1::AgentMessage first;
  if (!stream->Read(&first)) return grpc::Status::OK;
  if (absl::Status s = Admit(first); !s.ok()) return auth::ToGrpc(s);
  const tunefleet::v1::Hello& hello = first.hello();
  const std::string id = absl::StrCat("agent-", next_agent_.fetch_add(1));
  GrpcAgentChannel channel(stream, context);
  auto session = std::make_shared<AgentSession>(id, hello, &channel,
                                                scheduler_->clock().NowMs());
  if (!session->Send(WelcomeMessage(id, heartbeat_interval_ms_))) {
    return grpc::Status::OK;
  }
  if (verbose_) {
    std::fprintf(stderr, "[server] %s connected: key %s, %s (%s)\n", id.c_str(),
                 hello.device_key().c_str(), hello.agent_name().c_str(),
                 hello.device().device_name().c_str());
  }
  scheduler_->AddAgent(session);
  Serve(stream, *session);
  // Closes the session (nothing is sent on `channel` after this) and
  // requeues its leases.
  const LostLeases lost = scheduler_->RemoveAgent(id);
  jobs_->OnLostLeases(lost);
  if (verbose_) {
    std::fprintf(stderr,
                 "[server] %s disconnected; %zu trial(s) requeued, %zu given "
                 "up\n",
                 id.c_str(), lost.requeued.size(), lost.abandoned.size());
  }
  return grpc::Status::OK;
}

void AgentServiceImpl::Serve(AgentStream* stream, AgentSession& session) {
  tunefleet::v1::AgentMessage message;
  while (stream->Read(&message)) {
    session.Touch(scheduler_->clock().NowMs());
    if (!message.has_measurement()) continue;  // heartbeats: liveness only
    const tunefleet::v1::Measurement& m = message.measurement();
    std::optional<Lease> lease = scheduler_->EndLease(m.trial_id());
    if (!lease) continue;  // stale or repeated: already requeued or done
    jobs_->OnResult(lease->trial.job_id, m.trial_id(), m);
  }
}

}  // namespace tunefleet::server
