#include "server/server.h"

#include <algorithm>
#include <cstdio>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "server/status_macros.h"

namespace tunefleet::server {

// Largest gRPC message accepted (a measure request carries kernel source).
constexpr int kMaxMessageBytes = 16 << 20;

absl::StatusOr<std::unique_ptr<Server>> Server::Start(
    const ServerOptions& options) {
  auto s = std::make_unique<Server>(PrivateTag{});
  s->options_ = options;
  TF_ASSIGN_OR_RETURN(s->store_, Store::Open(options.db_path));
  s->scheduler_ = std::make_unique<Scheduler>(s->store_.get());
  s->jobs_ = std::make_unique<JobManager>(s->store_.get(), s->scheduler_.get());
  s->agent_service_ = std::make_unique<AgentServiceImpl>(
      s->store_.get(), s->scheduler_.get(), s->jobs_.get(), options.verbose,
      options.heartbeat_interval_ms);
  s->tuning_service_ = std::make_unique<TuningServiceImpl>(
      s->store_.get(), s->scheduler_.get(), s->jobs_.get());

  grpc::ServerBuilder builder;
  builder.AddListeningPort(options.listen, grpc::InsecureServerCredentials(),
                           &s->port_);
  builder.SetMaxReceiveMessageSize(kMaxMessageBytes);
  builder.SetMaxSendMessageSize(kMaxMessageBytes);
  builder.RegisterService(s->agent_service_.get());
  builder.RegisterService(s->tuning_service_.get());
  s->grpc_server_ = builder.BuildAndStart();
  if (s->grpc_server_ == nullptr || s->port_ == 0) {
    return absl::UnavailableError(
        absl::StrCat("cannot listen on ", options.listen,
                     " (in use, or not an address of this host?)"));
  }
  if (options.resume_jobs) {
    TF_ASSIGN_OR_RETURN(s->resumed_jobs_, s->jobs_->ResumeJobs());
    if (options.verbose && s->resumed_jobs_ > 0) {
      std::fprintf(stderr, "[server] resumed %d unfinished job(s)\n",
                   s->resumed_jobs_);
    }
  }
  s->reaper_ = std::thread([server = s.get()] { server->ReapLoop(); });
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
    const int64_t now = NowMs();
    for (const auto& agent : scheduler_->SilentAgents(now - silent_ms)) {
      if (options_.verbose) {
        std::fprintf(stderr, "[server] %s silent for %lld ms; dropping it\n",
                     agent->id().c_str(),
                     static_cast<long long>(now - agent->last_seen_ms()));
      }
      agent->Disconnect();
    }
    jobs_->OnLostLeases(scheduler_->ExpireLeases(now));
  }
}

Server::~Server() { Shutdown(); }

std::string Server::address() const {
  std::string host = options_.listen.substr(0, options_.listen.rfind(':'));
  if (host.empty() || host == "0.0.0.0" || host == "[::]") host = "127.0.0.1";
  return absl::StrCat(host, ":", port_);
}

void Server::Shutdown() {
  {
    absl::MutexLock lock(&mu_);
    if (shut_down_) return;
    shut_down_ = true;
  }
  if (reaper_.joinable()) reaper_.join();
  tuning_service_->Stop();
  jobs_->Shutdown();
  // Streams still open after the deadline (agents, watchers) are cancelled.
  grpc_server_->Shutdown(std::chrono::system_clock::now() +
                         std::chrono::milliseconds(500));
}

void Server::Wait() { grpc_server_->Wait(); }

}  // namespace tunefleet::server
