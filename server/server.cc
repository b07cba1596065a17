#include "server/server.h"

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
      s->store_.get(), s->scheduler_.get(), s->jobs_.get(), options.verbose);
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
  return s;
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
  tuning_service_->Stop();
  jobs_->Shutdown();
  // Streams still open after the deadline (agents, watchers) are cancelled.
  grpc_server_->Shutdown(std::chrono::system_clock::now() +
                         std::chrono::milliseconds(500));
}

void Server::Wait() { grpc_server_->Wait(); }

}  // namespace tunefleet::server
