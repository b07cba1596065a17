// tunefleet-server assembled: the store, scheduler, job manager and both
// gRPC services on one listening port.
#ifndef TUNEFLEET_SERVER_SERVER_H_
#define TUNEFLEET_SERVER_SERVER_H_

#include <memory>
#include <string>
#include <thread>

#include "absl/status/statusor.h"
#include "grpcpp/grpcpp.h"
#include "server/agent_service.h"
#include "server/job_manager.h"
#include "server/scheduler.h"
#include "server/store.h"
#include "server/tuning_service.h"

namespace tunefleet::server {

struct ServerOptions {
  std::string listen = "127.0.0.1:7878";  // port 0: any free port
  std::string db_path = "tunefleet.db";
  bool verbose = true;  // log agent connections to stderr
  // Agents beat this often; one silent for heartbeat_misses intervals is
  // dropped and its leases requeued.
  int64_t heartbeat_interval_ms = 5000;
  int heartbeat_misses = 3;
  // Start again the jobs an earlier run left unfinished.
  bool resume_jobs = true;
};

// Start() returns a running server; Shutdown() (also run by the destructor)
// stops it. Thread-safe.
class Server {
 public:
  // Errors: from Store::Open, or UNAVAILABLE when the address cannot be
  // bound.
  static absl::StatusOr<std::unique_ptr<Server>> Start(
      const ServerOptions& options);
  ~Server();

  // The bound port (useful with port 0).
  int port() const { return port_; }
  // "127.0.0.1:<port>" style address to dial.
  std::string address() const;
  Store& store() { return *store_; }
  JobManager& jobs() { return *jobs_; }
  Scheduler& scheduler() { return *scheduler_; }

  // Stops jobs (left unfinished in the store, to resume on the next
  // start), ends agent and watch streams, stops listening.
  void Shutdown();
  // Blocks until Shutdown() has been called and completed.
  void Wait();

 private:
  struct PrivateTag {
    explicit PrivateTag() = default;
  };

 public:
  // Use Start().
  explicit Server(PrivateTag) {}

 private:
  ServerOptions options_;
  std::unique_ptr<Store> store_;
  std::unique_ptr<Scheduler> scheduler_;
  std::unique_ptr<JobManager> jobs_;
  std::unique_ptr<AgentServiceImpl> agent_service_;
  std::unique_ptr<TuningServiceImpl> tuning_service_;
  std::unique_ptr<grpc::Server> grpc_server_;
  // Drops silent agents and expired leases until shutdown.
  void ReapLoop();
  std::thread reaper_;
  int port_ = 0;
  absl::Mutex mu_;
  bool shut_down_ ABSL_GUARDED_BY(mu_) = false;
  int resumed_jobs_ = 0;

 public:
  // Jobs ResumeJobs() started at Start().
  int resumed_jobs() const { return resumed_jobs_; }
};

}  // namespace tunefleet::server

#endif  // TUNEFLEET_SERVER_SERVER_H_
