// tunefleet-server assembled: the store, scheduler, job manager, trial
// ledger and both gRPC services on one listening port, behind token
// authentication and, optionally, TLS (auth/).
#ifndef TUNEFLEET_SERVER_SERVER_H_
#define TUNEFLEET_SERVER_SERVER_H_

#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
#include "auth/authorizer.h"
#include "auth/tls.h"
#include "auth/tokens.h"
#include "base/pass_key.h"
#include "base/time.h"
#include "bundle/keys.h"
#include "grpcpp/grpcpp.h"
#include "metrics/server_metrics.h"
#include "server/agent_service.h"
#include "server/auth_services.h"
#include "server/http_frontend.h"
#include "server/job_manager.h"
#include "server/lease_scheduler.h"
#include "server/model_run_service.h"
#include "server/trial_ledger.h"
#include "server/tuning_service.h"
#include "store/owner_lock.h"
#include "store/store.h"
#include "store/trial_writer.h"

namespace tunefleet::server {

struct ServerOptions {
  std::string listen = "127.0.0.1:7878";  // port 0: any free port
  std::string db_path = "tunefleet.db";
  bool verbose = true;  // log agent connections (logging/log.h, info)
  // Agents beat this often; one silent for heartbeat_misses intervals is
  // dropped and its leases requeued.
  int64_t heartbeat_interval_ms = 5000;
  int heartbeat_misses = 3;
  // Start again the jobs an earlier run left unfinished.
  bool resume_jobs = true;
  // Configs per task re-measured when an agent brings a new driver to a
  // device key (server/revalidation.h, docs/DRIVER_DRIFT.md); 0: none.
  int revalidate_top = 3;
  // Write each lease to its trial row as it is handed out (pending ->
  // leased, the agent named), not only with the result: for the embedded
  // fleet, whose killed command's jobs are found by the agents their trials
  // name (Store::InterruptAbandonedJobs). Off: leases live in the
  // scheduler's memory (LeaseScheduler).
  bool write_leases = false;
  // Who this server is in the database's owner lock (store/owner_lock.h),
  // which names it to a second would-be owner: "tunefleet-server", or the
  // embedded command's "tunefleet tune".
  std::string owner = "tunefleet-server";
  // What lease deadlines, agents' silence and job deadlines are measured
  // against; nullptr: the system clock (base::RealClock()). Must outlive
  // the server. Waits (the reaper's tick) stay in real time.
  const base::Clock* clock = nullptr;

  // Security (docs/SECURITY.md, "Authentication and TLS"). Start() refuses:
  // - no `tokens` unless `no_auth` (development: every caller may do
  //   everything);
  // - a listen address that is not loopback (IsLoopbackAddress) without
  //   TLS, or with `no_auth`, unless `insecure`.
  // The tokens callers must present; a tokens file is read with
  // TokenSet::Load.
  std::shared_ptr<const auth::TokenSet> tokens;
  bool no_auth = false;
  // Certificate and key (and optional client CA) for TLS; plaintext when
  // tls.cert_file is empty.
  auth::TlsServerFiles tls;
  // Allow plaintext or no authentication on a non-loopback address.
  bool insecure = false;
  // Bounds on the work one server takes (docs/SERVER_LIMITS.md): active
  // jobs, tasks per model job, the job executor's threads.
  JobLimits limits;
  // WatchJob streams one token (by name; all callers are one without
  // authentication) may hold open.
  int max_watch_streams = TuningServiceImpl::kDefaultMaxWatchStreams;

  // The web dashboard (server/http_frontend.h): HOST:PORT to serve it on
  // (port 0: any free port); empty: off. The same rules as `listen`: a
  // non-loopback address needs TLS (HTTPS with `tls`'s files) or
  // `insecure`; every API call needs a token of role reader or above.
  std::string http_listen;
  // Host names the dashboard is reached by besides http_listen's address
  // (dashboard/request_guard.h; a reverse proxy's, a DNS name).
  std::vector<std::string> http_hosts;
  // Record bundles (docs/BUNDLES.md): when set, ImportRecords accepts only
  // bundles signed by one of these keys (--bundle-trust FILE).
  std::shared_ptr<const bundle::TrustedKeys> bundle_trust;
};

// OK when `options` may be served as they are (the rules above). Errors:
// FAILED_PRECONDITION naming the flag that would allow it,
// INVALID_ARGUMENT for --tokens with --no-auth.
absl::Status CheckSecurityOptions(const ServerOptions& options);

// Start() returns a running server; Shutdown() (also run by the destructor)
// stops it. Thread-safe.
class Server {
 public:
  // Takes the database's owner lock, checks that the ports can be bound,
  // then opens the database and listens: a refused start leaves no file
  // behind. Errors: CheckSecurityOptions's and MakeServerCredentials's;
  // UNAVAILABLE naming the owner when another process owns the database
  // (store::OwnerLock), or base::ListenError's when --listen's or --http's
  // port is in use; from Store::Open.
  static absl::StatusOr<std::unique_ptr<Server>> Start(
      const ServerOptions& options);
  ~Server();

  // The bound port (useful with port 0).
  int port() const { return port_; }
  // "127.0.0.1:<port>" style address to dial.
  std::string address() const;
  store::Store& store() { return *store_; }
  JobManager& jobs() { return *jobs_; }
  LeaseScheduler& scheduler() { return *scheduler_; }
  AgentServiceImpl& agent_service() { return *agent_service_; }
  // Where agents' results are stored and acknowledged, leases lost.
  TrialLedger& ledger() { return *ledger_; }
  // The server's Prometheus metrics (metrics().Text() is what GET /metrics
  // serves); valid as long as the server object.
  metrics::ServerMetrics& metrics() { return *metrics_; }

  // Stops jobs (left unfinished in the store, to resume on the next
  // start), ends agent and watch streams, stops listening.
  void Shutdown();
  // Blocks until Shutdown() has been called and completed.
  void Wait();

  // Replaces the accepted tokens (a reloaded tokens file); calls already
  // admitted go on. Errors: FAILED_PRECONDITION when started with no_auth.
  absl::Status SetTokens(std::shared_ptr<const auth::TokenSet> tokens) {
    if (http_) http_->SetTokens(tokens);
    return authorizer_->SetTokens(std::move(tokens));
  }
  // True when TLS is on.
  bool tls() const { return options_.tls.enabled(); }
  // The web dashboard's bound port; 0 when ServerOptions::http_listen is
  // empty.
  int http_port() const { return http_ ? http_->port() : 0; }

  // Use Start().
  explicit Server(base::PassKey<Server>) {}

 private:
  // UNAVAILABLE (base::CheckCanListen) when a port cannot be bound.
  absl::Status CheckPorts() const;

  ServerOptions options_;
  // Held from the start until the server is destroyed (declared first:
  // released last, after the database is closed).
  store::OwnerLock owner_;
  bool created_db_ = false;  // Start() found no database file there
  bool started_ = false;     // Start() completed
  std::unique_ptr<store::Store> store_;
  // Group commit of trial rows (results, requeues); stopped in Shutdown()
  // once no agent stream is left, before the parts its callbacks reach.
  std::unique_ptr<store::TrialWriter> trial_writer_;
  std::unique_ptr<LeaseScheduler> scheduler_;
  std::unique_ptr<JobManager> jobs_;
  // TuningService.RunModel's calls waiting for agents (model_run_service.h).
  std::unique_ptr<ModelRunRouter> model_runs_;
  std::unique_ptr<AgentServiceImpl> agent_service_;
  std::unique_ptr<TuningServiceImpl> tuning_service_;
  // Before grpc_server_: its interceptors record into it until it is gone.
  std::unique_ptr<metrics::ServerMetrics> metrics_;
  // A trial's life from its result to its acknowledgement, and lost
  // leases (trial_ledger.h); after metrics_ (it counts lost leases there),
  // reached by agent_service_ and trial_writer_'s callbacks.
  std::unique_ptr<TrialLedger> ledger_;
  // What gRPC serves: the services above behind the authorizer.
  std::unique_ptr<auth::Authorizer> authorizer_;
  std::unique_ptr<AuthorizedAgentService> authorized_agent_service_;
  std::unique_ptr<RecordBundles> record_bundles_;
  std::unique_ptr<AuthorizedTuningService> authorized_tuning_service_;
  std::unique_ptr<grpc::Server> grpc_server_;
  // The web dashboard, when http_listen is set; stopped first.
  std::unique_ptr<HttpFrontend> http_;
  // Runs Reap() every tick (real time) until shutdown.
  void ReapLoop();
  // Disconnects the agents silent for more than `silent_ms` by the
  // scheduler's clock and takes back the leases past their deadline.
  void Reap(int64_t silent_ms);
  std::thread reaper_;
  int port_ = 0;
  absl::Mutex mu_;
  bool shut_down_ ABSL_GUARDED_BY(mu_) = false;
  bool shutdown_complete_ ABSL_GUARDED_BY(mu_) = false;  // Shutdown() ended
};

}  // namespace tunefleet::server

#endif  // TUNEFLEET_SERVER_SERVER_H_
