// AgentService: the server end of the agent stream
// (proto/tunefleet/v1/agent.proto).
#ifndef TUNEFLEET_SERVER_AGENT_SERVICE_H_
#define TUNEFLEET_SERVER_AGENT_SERVICE_H_

#include <atomic>
#include <memory>
#include <string>

#include "grpcpp/grpcpp.h"
#include "server/agent_session.h"
#include "server/job_manager.h"
#include "server/scheduler.h"
#include "store/store.h"
#include "tunefleet/v1/agent.grpc.pb.h"

namespace tunefleet::server {

using AgentStream = grpc::ServerReaderWriter<tunefleet::v1::ServerMessage,
                                             tunefleet::v1::AgentMessage>;

// Thread-safe: gRPC runs one Connect() per agent on its own thread. Times
// (when an agent was last heard from) come from the scheduler's clock.
class AgentServiceImpl final : public tunefleet::v1::AgentService::Service {
 public:
  AgentServiceImpl(store::Store* store, Scheduler* scheduler, JobManager* jobs,
                   bool verbose, int64_t heartbeat_interval_ms)
      : store_(store),
        scheduler_(scheduler),
        jobs_(jobs),
        verbose_(verbose),
        heartbeat_interval_ms_(heartbeat_interval_ms) {}

  // Expects Hello first (else INVALID_ARGUMENT), registers the agent, then
  // routes its results until the stream ends; its leases are requeued then.
  grpc::Status Connect(grpc::ServerContext* context,
                       AgentStream* stream) override;

 private:
  // Checks that the stream's first message is a valid Hello and records
  // its device. Errors: INVALID_ARGUMENT; FAILED_PRECONDITION when a
  // connected agent of the same key has a different device
  // (device_match.h); INTERNAL (the store).
  absl::Status Admit(const tunefleet::v1::AgentMessage& first);
  // Routes the agent's results until its stream ends.
  void Serve(AgentStream* stream, AgentSession& session);

  store::Store* store_;
  Scheduler* scheduler_;
  JobManager* jobs_;
  bool verbose_;
  int64_t heartbeat_interval_ms_;  // asked of agents in Welcome
  std::atomic<int64_t> next_agent_{1};
};

}  // namespace tunefleet::server

#endif  // TUNEFLEET_SERVER_AGENT_SERVICE_H_
