#include "server/model_run_service.h"

#include <limits>
#include <memory>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "base/printable.h"

namespace tunefleet::server {
namespace {

grpc::Status Error(grpc::StatusCode code, const std::string& message) {
  return grpc::Status(code, message);
}

}  // namespace

grpc::Status ModelRunRouter::Run(grpc::ServerContext* context,
                                 const tunefleet::v1::RunModelRequest& request,
                                 tunefleet::v1::RunModelResult* result) {
  return Run([context] { return context->IsCancelled(); }, request, result);
}

grpc::Status ModelRunRouter::Run(const std::function<bool()>& cancelled,
                                 const tunefleet::v1::RunModelRequest& request,
                                 tunefleet::v1::RunModelResult* result) {
  if (request.device_key().empty()) {
    return Error(grpc::StatusCode::INVALID_ARGUMENT,
                 "device_key: empty; name the key whose agent runs the model");
  }
  if (request.plan().empty()) {
    return Error(grpc::StatusCode::INVALID_ARGUMENT, "plan: empty");
  }
  if (request.runs() < 1) {
    return Error(grpc::StatusCode::INVALID_ARGUMENT,
                 "runs: must be at least 1");
  }
  const std::string key = base::EscapeUnprintable(request.device_key());
  // The agent of the key with the fewest runs in flight.
  std::vector<std::shared_ptr<AgentSession>> agents;
  bool older_agents = false;
  for (std::shared_ptr<AgentSession>& a : scheduler_->Agents()) {
    if (a->key() != request.device_key()) continue;
    if (!a->model_runs()) {
      older_agents = true;
      continue;
    }
    agents.push_back(std::move(a));
  }
  if (agents.empty()) {
    return Error(
        grpc::StatusCode::UNAVAILABLE,
        older_agents
            ? absl::StrCat("the agents of device key '", key,
                           "' connected to this server do not run models "
                           "(an older tunefleet-agent): update them")
            : absl::StrCat("no agent of device key '", key,
                           "' is connected to this server: start "
                           "tunefleet-agent --key ",
                           key, " on the device"));
  }
  const uint32_t timeout_ms = request.timeout_ms() > 0
                                  ? request.timeout_ms()
                                  : kDefaultModelRunTimeoutMs;
  int64_t run_id = 0;
  std::shared_ptr<AgentSession> agent;
  {
    absl::MutexLock lock(&mu_);
    if (stopping_) {
      return Error(grpc::StatusCode::UNAVAILABLE, "the server is stopping");
    }
    size_t fewest = std::numeric_limits<size_t>::max();
    for (const std::shared_ptr<AgentSession>& a : agents) {
      size_t runs = 0;
      for (const auto& [id, p] : pending_) runs += p.agent_id == a->id();
      if (runs < fewest) {
        fewest = runs;
        agent = a;
      }
    }
    run_id = next_run_id_++;
    Pending& p = pending_[run_id];
    p.agent_id = agent->id();
    p.agent_name = agent->name();
  }
  tunefleet::v1::ServerMessage message;
  *message.mutable_run_model() = request;
  message.mutable_run_model()->set_run_id(run_id);
  message.mutable_run_model()->set_timeout_ms(timeout_ms);
  if (!agent->Send(std::move(message))) {
    absl::MutexLock lock(&mu_);
    pending_.erase(run_id);
    return Error(
        grpc::StatusCode::UNAVAILABLE,
        absl::StrCat("the agent of device key '", key, "' (", agent->id(),
                     ") went away before the run was "
                     "sent; try again"));
  }
  const absl::Time deadline = absl::Now() + absl::Milliseconds(timeout_ms);
  absl::MutexLock lock(&mu_);
  Pending* p = &pending_[run_id];
  auto done = [p]() { return p->done; };
  while (!p->done) {
    // Woken by a result, the agent's end or Shutdown(); looks at the
    // client every second.
    mu_.AwaitWithDeadline(absl::Condition(&done),
                          std::min(deadline, absl::Now() + absl::Seconds(1)));
    if (p->done) break;
    if (cancelled()) {
      pending_.erase(run_id);
      return Error(grpc::StatusCode::CANCELLED, "the client went away");
    }
    if (absl::Now() >= deadline) {
      pending_.erase(run_id);
      return Error(
          grpc::StatusCode::DEADLINE_EXCEEDED,
          absl::StrCat("the agent of device key '", key, "' (", agent->id(),
                       ") did not answer the model run "
                       "within ",
                       timeout_ms, " ms"));
    }
  }
  grpc::Status status = p->status;
  if (status.ok()) {
    *result = std::move(p->result);
    result->set_agent_name(p->agent_name);
    if (!result->error().empty() || result->error_code() != 0) {
      const uint32_t code = result->error_code();
      status =
          Error(code > 0 && code <= 16 ? static_cast<grpc::StatusCode>(code)
                                       : grpc::StatusCode::UNKNOWN,
                result->error());
    }
  }
  pending_.erase(run_id);
  return status;
}

void ModelRunRouter::OnResult(const std::string& agent_id,
                              tunefleet::v1::RunModelResult result) {
  absl::MutexLock lock(&mu_);
  auto it = pending_.find(result.run_id());
  if (it == pending_.end() || it->second.agent_id != agent_id ||
      it->second.done) {
    return;
  }
  it->second.result = std::move(result);
  it->second.done = true;
}

void ModelRunRouter::OnAgentGone(const std::string& agent_id) {
  absl::MutexLock lock(&mu_);
  for (auto& [id, p] : pending_) {
    if (p.agent_id != agent_id || p.done) continue;
    p.done = true;
    p.status = Error(grpc::StatusCode::UNAVAILABLE,
                     absl::StrCat("the agent running the model (", agent_id,
                                  ", ", base::EscapeUnprintable(p.agent_name),
                                  ") disconnected before it answered"));
  }
}

void ModelRunRouter::Shutdown() {
  absl::MutexLock lock(&mu_);
  stopping_ = true;
  for (auto& [id, p] : pending_) {
    if (p.done) continue;
    p.done = true;
    p.status = Error(grpc::StatusCode::UNAVAILABLE, "the server is stopping");
  }
}

}  // namespace tunefleet::server
