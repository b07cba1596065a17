#include "server/agent_service.h"

#include <cctype>
#include <cstdio>

#include "absl/strings/str_cat.h"
#include "base/time.h"
#include "server/validation/validation.h"

namespace tunefleet::server {

grpc::Status AgentServiceImpl::Connect(grpc::ServerContext* context,
                                       AgentStream* stream) {
  tunefleet::v1::AgentMessage first;
  if (!stream->Read(&first)) return grpc::Status::OK;
  if (!first.has_hello()) {
    return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                        "the first message on the stream must be Hello");
  }
  const tunefleet::v1::Hello& hello = first.hello();
  if (absl::Status s = validation::ValidateHello(hello); !s.ok()) {
    return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                        std::string(s.message()));
  }
  if (absl::Status s = store_->UpsertDevice(hello.device_key(), hello.device());
      !s.ok()) {
    return grpc::Status(grpc::StatusCode::INTERNAL, std::string(s.message()));
  }
  const std::string id = absl::StrCat("agent-", next_agent_.fetch_add(1));
  auto session = std::make_shared<AgentSession>(id, hello, stream, context,
                                                scheduler_->clock().NowMs());
  tunefleet::v1::ServerMessage welcome;
  welcome.mutable_welcome()->set_agent_id(id);
  welcome.mutable_welcome()->set_heartbeat_interval_ms(
      static_cast<uint32_t>(heartbeat_interval_ms_));
  if (!session->Send(welcome)) return grpc::Status::OK;
  if (verbose_) {
    std::fprintf(stderr, "[server] %s connected: key %s, %s (%s)\n", id.c_str(),
                 hello.device_key().c_str(), hello.agent_name().c_str(),
                 hello.device().device_name().c_str());
  }
  scheduler_->AddAgent(session);

  tunefleet::v1::AgentMessage message;
  while (stream->Read(&message)) {
    session->Touch(scheduler_->clock().NowMs());
    if (!message.has_measurement()) continue;  // heartbeats: liveness only
    const tunefleet::v1::Measurement& m = message.measurement();
    std::optional<Lease> lease = scheduler_->EndLease(m.trial_id());
    if (!lease) continue;  // stale or repeated: already requeued or done
    jobs_->OnResult(lease->trial.job_id, m.trial_id(), m);
  }
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

}  // namespace tunefleet::server
