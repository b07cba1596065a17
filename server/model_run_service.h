// TuningService.RunModel (proto/tunefleet/v1/tuning.proto): a model plan
// routed to a connected agent of the request's device key as a
// ServerMessage.run_model, and the call answered when that agent's
// AgentMessage.model_result arrives (docs/MODEL_RUNTIME.md). The agent
// service hands results and disconnects in (OnResult, OnAgentGone); the
// call's handler waits in Run().
#ifndef TUNEFLEET_SERVER_MODEL_RUN_SERVICE_H_
#define TUNEFLEET_SERVER_MODEL_RUN_SERVICE_H_

#include <cstdint>
#include <functional>
#include <map>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "grpcpp/grpcpp.h"
#include "server/lease_scheduler.h"
#include "tunefleet/v1/agent.pb.h"

namespace tunefleet::server {

// Waited for a run whose request names no timeout: 10 minutes.
inline constexpr uint32_t kDefaultModelRunTimeoutMs = 600000;

// Thread-safe. `scheduler` (the connected agents) must outlive it.
class ModelRunRouter {
 public:
  explicit ModelRunRouter(LeaseScheduler* scheduler) : scheduler_(scheduler) {}

  // Sends `request` (its run_id replaced by a fresh one) to the connected
  // agent of request.device_key that runs models (Hello.model_runs) and has
  // the fewest runs in flight, then waits for its result. Returns OK with
  // the result, or: INVALID_ARGUMENT for a request without a key, plan or
  // runs; UNAVAILABLE when no such agent is connected (naming the key),
  // when the agent disconnects before answering, or when the server stops;
  // DEADLINE_EXCEEDED when request.timeout_ms (0: the default) passes;
  // CANCELLED when the client goes away; the agent's own error
  // (RunModelResult.error, its error_code) otherwise.
  grpc::Status Run(grpc::ServerContext* context,
                   const tunefleet::v1::RunModelRequest& request,
                   tunefleet::v1::RunModelResult* result);
  // As Run, for a run of the server's own (a model job's measurement,
  // server/model_measure.h): CANCELLED once `cancelled` (asked about every
  // second) returns true.
  grpc::Status Run(const std::function<bool()>& cancelled,
                   const tunefleet::v1::RunModelRequest& request,
                   tunefleet::v1::RunModelResult* result);

  // A result from agent `agent_id`: ends the call waiting for its run_id
  // (a result for a run that is not that agent's, or no longer waited for,
  // is dropped).
  void OnResult(const std::string& agent_id,
                tunefleet::v1::RunModelResult result);
  // Agent `agent_id` is gone: its runs end with UNAVAILABLE.
  void OnAgentGone(const std::string& agent_id);
  // Ends every waiting call with UNAVAILABLE and refuses new ones (before
  // the gRPC server's Shutdown(), which waits for handlers).
  void Shutdown();

 private:
  struct Pending {
    std::string agent_id;
    std::string agent_name;
    bool done = false;
    grpc::Status status;
    tunefleet::v1::RunModelResult result;
  };

  LeaseScheduler* const scheduler_;
  absl::Mutex mu_;
  std::map<int64_t, Pending> pending_ ABSL_GUARDED_BY(mu_);
  int64_t next_run_id_ ABSL_GUARDED_BY(mu_) = 1;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace tunefleet::server

#endif  // TUNEFLEET_SERVER_MODEL_RUN_SERVICE_H_
