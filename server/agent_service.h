// AgentService: the server end of the agent stream
// (proto/tunefleet/v1/agent.proto), on gRPC's callback API: one reactor per
// agent stream (AgentServiceImpl::Stream) with its own write queue, and no
// thread per stream. Sends to an agent (Welcome, measure batches) are
// queued and written by gRPC in the background, so the scheduler and the
// jobs' steps never block on a slow agent.
#ifndef TUNEFLEET_SERVER_AGENT_SERVICE_H_
#define TUNEFLEET_SERVER_AGENT_SERVICE_H_

#include <atomic>
#include <functional>
#include <memory>
#include <string>

#include "absl/synchronization/mutex.h"
#include "grpcpp/grpcpp.h"
#include "server/agent_session.h"
#include "server/job_manager.h"
#include "server/lease_scheduler.h"
#include "server/model_run_service.h"
#include "server/revalidation.h"
#include "server/trial_ledger.h"
#include "store/store.h"
#include "tunefleet/v1/agent.grpc.pb.h"

namespace tunefleet::server {

using AgentReactor = grpc::ServerBidiReactor<tunefleet::v1::AgentMessage,
                                             tunefleet::v1::ServerMessage>;

// Thread-safe: gRPC runs each stream's reactions on its callback threads.
// Times (when an agent was last heard from) come from the scheduler's
// clock. `store`, `scheduler`, `jobs` and `ledger` must outlive the gRPC
// server.
class AgentServiceImpl final
    : public tunefleet::v1::AgentService::CallbackService {
 public:
  AgentServiceImpl(store::Store* store, LeaseScheduler* scheduler,
                   JobManager* jobs, TrialLedger* ledger, bool verbose,
                   int64_t heartbeat_interval_ms)
      : store_(store),
        scheduler_(scheduler),
        jobs_(jobs),
        ledger_(ledger),
        verbose_(verbose),
        heartbeat_interval_ms_(heartbeat_interval_ms) {}

  // Expects Hello first (else INVALID_ARGUMENT), registers the agent, then
  // hands its results to the ledger until the stream ends; its leases are
  // lost then (TrialLedger::AgentGone). The reactor deletes itself when
  // gRPC is done with the call.
  AgentReactor* Connect(grpc::CallbackServerContext* context) override;
  // Where the agents' model-run results and disconnects go (may stay
  // unset: model results are then dropped). Set before serving; must
  // outlive the gRPC server.
  void set_model_runs(ModelRunRouter* model_runs) { model_runs_ = model_runs; }
  // Configs per task re-measured when an agent brings a new driver to a
  // key (server/revalidation.h); 0: no re-validation. Set before serving.
  void set_revalidate_top(int top) { revalidate_top_ = top; }

  // Tests: called in the admission of every agent once its device is
  // checked and stored, before it joins, with the admission lock held.
  void SetAdmitHookForTest(
      std::function<void(const tunefleet::v1::Hello&)> hook) {
    admit_hook_for_test_ = std::move(hook);
  }

 private:
  class Stream;

  // Checks that the stream's first message is a valid Hello, records its
  // device (fields its revision cannot fill kept as stored) and its driver
  // (a driver the key never had is a new driver revision, whose
  // re-validation jobs start once the agent joined) and runs `join`
  // (which registers the agent), all under one lock. Errors:
  // INVALID_ARGUMENT; FAILED_PRECONDITION when a connected agent of the
  // same key has a different device (device_match.h); INTERNAL (the
  // store).
  absl::Status Admit(const tunefleet::v1::AgentMessage& first,
                     const std::function<void()>& join);
  // Routes one message of a registered agent: a result goes to the ledger
  // (TrialLedger::Receive: stored, then acknowledged), a model run's result
  // to the model runs, a heartbeat only proves it alive. A
  // MeasurementBatch is routed result by result.
  void Route(const tunefleet::v1::AgentMessage& message, AgentSession& session);
  // The agent's stream ended: its leases are lost (TrialLedger::AgentGone),
  // its model runs told.
  void Disconnected(const std::string& agent_id);

  store::Store* store_;
  LeaseScheduler* scheduler_;
  JobManager* jobs_;
  TrialLedger* ledger_;
  ModelRunRouter* model_runs_ = nullptr;
  bool verbose_;
  int64_t heartbeat_interval_ms_;  // asked of agents in Welcome
  int revalidate_top_ = kDefaultRevalidateTop;
  std::atomic<int64_t> next_agent_{1};
  // Held from an agent's device check to its joining (Admit()).
  absl::Mutex admission_mu_;
  std::function<void(const tunefleet::v1::Hello&)> admit_hook_for_test_;
};

// A reactor that ends its call at once with `status` (a refused call).
AgentReactor* RefusedAgentStream(grpc::Status status);

}  // namespace tunefleet::server

#endif  // TUNEFLEET_SERVER_AGENT_SERVICE_H_
