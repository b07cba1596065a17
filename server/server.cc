#include "server/server.h"

#include <algorithm>
#include <filesystem>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "base/host_port.h"
#include "base/keepalive.h"
#include "base/listen_check.h"
#include "base/status_macros.h"
#include "base/time.h"
#include "grpcpp/ext/proto_server_reflection_plugin.h"
#include "grpcpp/health_check_service_interface.h"
#include "logging/log.h"
#include "metrics/rpc_interceptor.h"
#include "server/server_snapshot.h"

namespace tunefleet::server {

// Largest gRPC message accepted (a measure request carries kernel source; a
// RunModelRequest carries a model plan's weights, rec's about 11 MB, and a
// RunModelResult its outputs).
constexpr int kMaxMessageBytes = 64 << 20;

absl::Status CheckSecurityOptions(const ServerOptions& options) {
  TUNEFLEET_RETURN_IF_ERROR(
      base::ParseHostPort(options.listen, "--listen", /*allow_port_zero=*/true)
          .status());
  if (options.no_auth && options.tokens != nullptr) {
    return absl::InvalidArgumentError(
        "--no-auth and --tokens: give one of them, not both");
  }
  if (!options.no_auth && options.tokens == nullptr) {
    return absl::FailedPreconditionError(
        "no tokens: start with --tokens FILE (make one with `tunefleet token "
        "add --role agent --tokens FILE`), or with --no-auth for "
        "development on a loopback address");
  }
  if (!options.http_listen.empty()) {
    TUNEFLEET_RETURN_IF_ERROR(
        base::ParseHostPort(options.http_listen, "--http", true).status());
    if (!auth::IsLoopbackAddress(options.http_listen) && !options.insecure &&
        (!options.tls.enabled() || options.no_auth)) {
      return absl::FailedPreconditionError(absl::StrCat(
          "--http ", options.http_listen,
          " (not a loopback address) needs TLS (--tls-cert, --tls-key) and "
          "--tokens, or --insecure to allow it"));
    }
  }
  if (auth::IsLoopbackAddress(options.listen) || options.insecure) {
    return absl::OkStatus();
  }
  if (!options.tls.enabled()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "listening on ", options.listen,
        " (not a loopback address) without TLS would send tokens and "
        "kernels in clear text: pass --tls-cert and --tls-key, or --insecure "
        "to allow plaintext"));
  }
  if (options.no_auth) {
    return absl::FailedPreconditionError(absl::StrCat(
        "--no-auth on ", options.listen,
        " (not a loopback address) lets anyone on the network submit jobs "
        "and run kernels on the agents: pass --tokens FILE, or --insecure "
        "to allow it"));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<Server>> Server::Start(
    const ServerOptions& options) {
  TUNEFLEET_RETURN_IF_ERROR(CheckSecurityOptions(options));
  TUNEFLEET_ASSIGN_OR_RETURN(
      std::shared_ptr<grpc::ServerCredentials> credentials,
      auth::MakeServerCredentials(options.tls));
  auto s = std::make_unique<Server>(base::PassKey<Server>());
  s->options_ = options;
  // The database's owner first, then the ports, then the database: a
  // refused start names the owner or the port and leaves no file behind.
  TUNEFLEET_ASSIGN_OR_RETURN(
      s->owner_, store::OwnerLock::Acquire(options.db_path, options.owner));
  s->created_db_ = !std::filesystem::exists(options.db_path);
  TUNEFLEET_RETURN_IF_ERROR(s->CheckPorts());
  TUNEFLEET_ASSIGN_OR_RETURN(s->store_, store::Store::Open(options.db_path));
  const base::Clock& clock =
      options.clock != nullptr ? *options.clock : base::RealClock();
  s->trial_writer_ = std::make_unique<store::TrialWriter>(s->store_.get());
  s->scheduler_ = std::make_unique<LeaseScheduler>(
      s->store_.get(), clock, s->trial_writer_.get(), options.write_leases);
  s->jobs_ = std::make_unique<JobManager>(s->store_.get(), s->scheduler_.get(),
                                          clock, options.limits);
  s->tuning_service_ = std::make_unique<TuningServiceImpl>(
      s->store_.get(), s->scheduler_.get(), s->jobs_.get(),
      options.max_watch_streams);
  s->tuning_service_->GuardDisk(options.db_path);
  s->metrics_ = std::make_unique<metrics::ServerMetrics>(
      [store = s->store_.get(), scheduler = s->scheduler_.get(),
       db_path = options.db_path] {
        return CollectSnapshot(*store, *scheduler, db_path);
      });
  s->ledger_ = std::make_unique<TrialLedger>(
      s->scheduler_.get(), s->jobs_.get(), s->store_.get(),
      s->trial_writer_.get(), s->metrics_.get());
  s->agent_service_ = std::make_unique<AgentServiceImpl>(
      s->store_.get(), s->scheduler_.get(), s->jobs_.get(), s->ledger_.get(),
      options.verbose, options.heartbeat_interval_ms);
  s->model_runs_ = std::make_unique<ModelRunRouter>(s->scheduler_.get());
  s->agent_service_->set_model_runs(s->model_runs_.get());
  s->jobs_->SetModelRunner(
      [router = s->model_runs_.get()](
          const tunefleet::v1::RunModelRequest& request,
          const std::function<bool()>& cancelled)
          -> absl::StatusOr<tunefleet::v1::RunModelResult> {
        tunefleet::v1::RunModelResult result;
        grpc::Status status = router->Run(cancelled, request, &result);
        if (!status.ok()) {
          return absl::Status(static_cast<absl::StatusCode>(
                                  static_cast<int>(status.error_code())),
                              status.error_message());
        }
        return result;
      });
  s->agent_service_->set_revalidate_top(options.revalidate_top);
  s->authorizer_ = std::make_unique<auth::Authorizer>(
      options.no_auth ? nullptr : options.tokens, options.verbose);
  s->authorized_agent_service_ = std::make_unique<AuthorizedAgentService>(
      s->agent_service_.get(), s->authorizer_.get());
  s->authorized_tuning_service_ = std::make_unique<AuthorizedTuningService>(
      s->tuning_service_.get(), s->authorizer_.get());
  s->authorized_tuning_service_->set_model_runs(s->model_runs_.get());
  s->record_bundles_ =
      std::make_unique<RecordBundles>(s->store_.get(), options.bundle_trust);
  s->authorized_tuning_service_->set_record_bundles(s->record_bundles_.get());

  // Standard services for generic tools: grpc.health.v1.Health and server
  // reflection. Both are process-wide switches read when a builder is made.
  grpc::EnableDefaultHealthCheckService(true);
  grpc::reflection::InitProtoReflectionServerBuilderPlugin();
  grpc::ServerBuilder builder;
  // gRPC lets a second process bind the same port (SO_REUSEPORT) and then
  // splits connections between the two servers and their databases; a port
  // in use must be an error instead.
  builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
  // Accept the clients' keepalive pings (base/keepalive.h).
  builder.AddChannelArgument(
      GRPC_ARG_HTTP2_MIN_RECV_PING_INTERVAL_WITHOUT_DATA_MS,
      base::kServerMinPingIntervalMs);
  builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_PERMIT_WITHOUT_CALLS, 1);
  builder.AddChannelArgument(GRPC_ARG_HTTP2_MAX_PING_STRIKES, 0);
  builder.AddListeningPort(options.listen, credentials, &s->port_);
  builder.SetMaxReceiveMessageSize(kMaxMessageBytes);
  builder.SetMaxSendMessageSize(kMaxMessageBytes);
  builder.RegisterService(s->authorized_agent_service_.get());
  builder.RegisterService(s->authorized_tuning_service_.get());
  // Times every call for tunefleet_rpc_duration_seconds.
  std::vector<
      std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>>
      interceptors;
  interceptors.push_back(
      std::make_unique<metrics::RpcMetricsInterceptorFactory>(
          s->metrics_.get()));
  builder.experimental().SetInterceptorCreators(std::move(interceptors));
  s->grpc_server_ = builder.BuildAndStart();
  if (s->grpc_server_ == nullptr || s->port_ == 0) {
    return base::ListenError(options.listen, "--listen");
  }
  s->grpc_server_->GetHealthCheckService()->SetServingStatus(
      tunefleet::v1::TuningService::service_full_name(), true);
  s->grpc_server_->GetHealthCheckService()->SetServingStatus(
      tunefleet::v1::AgentService::service_full_name(), true);
  if (!options.http_listen.empty()) {
    dashboard::HttpOptions http;
    http.listen = options.http_listen;
    http.tokens = options.no_auth ? nullptr : options.tokens;
    http.tls_cert_file = options.tls.cert_file;
    http.tls_key_file = options.tls.key_file;
    http.tls_client_ca_file = options.tls.client_ca_file;
    http.title = "tunefleet-server";
    http.hosts = options.http_hosts;
    http.metrics_text = [metrics = s->metrics_.get()] {
      return metrics->Text();
    };
    TUNEFLEET_ASSIGN_OR_RETURN(
        s->http_, HttpFrontend::Start(http, s->store_.get(),
                                      s->scheduler_.get(), s->jobs_.get()));
  }
  TUNEFLEET_RETURN_IF_ERROR(s->owner_.SetAddress(s->address()));
  if (options.resume_jobs) {
    TUNEFLEET_ASSIGN_OR_RETURN(const int resumed, s->jobs_->ResumeJobs());
    if (options.verbose && resumed > 0) {
      logging::Info("[server] resumed {} unfinished job(s)", resumed);
    }
  }
  s->reaper_ = std::thread([server = s.get()] { server->ReapLoop(); });
  s->started_ = true;
  return s;
}

void Server::ReapLoop() {
  const int64_t silent_ms =
      options_.heartbeat_interval_ms * std::max(1, options_.heartbeat_misses);
  const absl::Duration tick =
      absl::Milliseconds(std::clamp<int64_t>(silent_ms / 4, 10, 1000));
  while (true) {
    {
      absl::MutexLock lock(&mu_);
      auto stopping = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
        return shut_down_;
      };
      if (mu_.AwaitWithTimeout(absl::Condition(&stopping), tick)) return;
    }
    Reap(silent_ms);
  }
}

void Server::Reap(int64_t silent_ms) {
  for (const auto& agent : scheduler_->SilentAgents(silent_ms)) {
    if (options_.verbose) {
      const int64_t now = scheduler_->clock().NowMs();
      logging::Warn("[server] {} silent for {} ms; dropping it", agent->id(),
                    now - agent->last_seen_ms());
    }
    agent->Disconnect();
  }
  ledger_->ExpireLeases();
}

absl::Status Server::CheckPorts() const {
  TUNEFLEET_ASSIGN_OR_RETURN(
      base::HostPort listen,
      base::ParseHostPort(options_.listen, "--listen", true));
  TUNEFLEET_RETURN_IF_ERROR(base::CheckCanListen(listen, "--listen"));
  if (options_.http_listen.empty()) return absl::OkStatus();
  TUNEFLEET_ASSIGN_OR_RETURN(
      base::HostPort http,
      base::ParseHostPort(options_.http_listen, "--http", true));
  if (http.port != 0 && http.port == listen.port && http.host == listen.host) {
    return base::ListenError(options_.http_listen, "--http", true);
  }
  return base::CheckCanListen(http, "--http");
}

Server::~Server() {
  Shutdown();
  if (!started_ && created_db_ && owner_.held()) {
    // A start that failed after it created the database (a port taken
    // between the check and the bind) removes what it created.
    // In the members' destruction order, up to the database.
    http_.reset();
    grpc_server_.reset();
    authorized_tuning_service_.reset();
    authorized_agent_service_.reset();
    authorizer_.reset();
    ledger_.reset();
    metrics_.reset();
    tuning_service_.reset();
    agent_service_.reset();
    jobs_.reset();
    scheduler_.reset();
    trial_writer_.reset();
    store_.reset();
    for (const char* suffix : {"", "-wal", "-shm", "-openers"}) {
      std::error_code ignored;
      std::filesystem::remove(options_.db_path + suffix, ignored);
    }
  }
}

std::string Server::address() const {
  std::string host = options_.listen.substr(0, options_.listen.rfind(':'));
  if (host.empty() || host == "0.0.0.0" || host == "[::]") host = "127.0.0.1";
  return absl::StrCat(host, ":", port_);
}

void Server::Shutdown() {
  {
    absl::MutexLock lock(&mu_);
    if (shut_down_) {
      // Another thread's Shutdown() (tunefleet-server's signal thread while
      // main's destructor runs): its parts are in use until it is done.
      mu_.Await(absl::Condition(&shutdown_complete_));
      return;
    }
    shut_down_ = true;
  }
  if (reaper_.joinable()) reaper_.join();
  if (http_) http_->Stop();
  // A Start() that failed half-way leaves some parts unset.
  if (tuning_service_) tuning_service_->Stop();
  if (jobs_) jobs_->Shutdown();
  if (model_runs_) model_runs_->Shutdown();  // its waiting calls end
  // Streams still open after the deadline (agents, watchers) are cancelled.
  if (grpc_server_) {
    grpc_server_->GetHealthCheckService()->Shutdown();  // all NOT_SERVING
    grpc_server_->Shutdown(std::chrono::system_clock::now() +
                           std::chrono::milliseconds(500));
  }
  // Results still queued are written (and their callbacks run) while the
  // ledger, scheduler and jobs they reach are alive.
  if (trial_writer_) trial_writer_->Stop();
  absl::MutexLock lock(&mu_);
  shutdown_complete_ = true;
}

void Server::Wait() {
  if (grpc_server_) grpc_server_->Wait();
  // gRPC's Wait() returns once it stopped serving, while Shutdown() may
  // still be stopping the writer: the caller may destroy the server next.
  absl::MutexLock lock(&mu_);
  mu_.Await(absl::Condition(&shutdown_complete_));
}

}  // namespace tunefleet::server
