#include "cli/embedded.h"

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "device_agent/worker.h"
#include "server/auth.h"
#include "server/status_macros.h"

namespace tunefleet::cli {

absl::StatusOr<std::unique_ptr<EmbeddedFleet>> EmbeddedFleet::Start(
    const EmbeddedOptions& options) {
  // The agent measures in a worker process (this executable started with
  // agent::kWorkerFlag), as a standalone agent does.
  agent::WorkerBackend::Options worker;
  worker.platform = options.platform;
  worker.device = options.device;
  TF_ASSIGN_OR_RETURN(std::unique_ptr<agent::WorkerBackend> backend,
                      agent::WorkerBackend::Start(worker));
  auto fleet = std::make_unique<EmbeddedFleet>(PrivateTag{});
  server::ServerOptions server_options;
  server_options.listen = "127.0.0.1:0";
  server_options.db_path = options.db_path;
  server_options.verbose = options.verbose;
  // The embedded server lives for one command: it runs that command's jobs,
  // not those an interrupted earlier command left behind.
  server_options.resume_jobs = false;
  // Tokens for this process only; the server keeps their hashes.
  TF_ASSIGN_OR_RETURN(const std::string agent_token, server::GenerateToken());
  TF_ASSIGN_OR_RETURN(const std::string tuner_token, server::GenerateToken());
  auto tokens = std::make_shared<server::TokenSet>();
  TF_RETURN_IF_ERROR(tokens->Add(server::TokenEntry::ForToken(
      agent_token, server::Role::kAgent, "embedded-agent")));
  TF_RETURN_IF_ERROR(tokens->Add(server::TokenEntry::ForToken(
      tuner_token, server::Role::kTuner, "embedded-client")));
  server_options.tokens = std::move(tokens);
  TF_ASSIGN_OR_RETURN(fleet->server_, server::Server::Start(server_options));
  fleet->connection_.address = fleet->server_->address();
  fleet->connection_.channel.token = tuner_token;

  agent::AgentOptions agent_options;
  agent_options.server = fleet->server_->address();
  agent_options.device_key = options.device_key;
  agent_options.verbose = options.verbose;
  agent_options.agent_name = "embedded";
  agent_options.channel.token = agent_token;
  fleet->agent_ =
      std::make_unique<agent::Agent>(agent_options, std::move(backend));
  fleet->agent_thread_ = std::thread([a = fleet->agent_.get()] { a->Run(); });

  const absl::Time deadline = absl::Now() + options.connect_timeout;
  while (fleet->server_->scheduler().Capacity(fleet->device_key()) == 0) {
    if (absl::Now() > deadline) {
      return absl::DeadlineExceededError(
          "the embedded agent did not connect to the embedded server");
    }
    absl::SleepFor(absl::Milliseconds(10));
  }
  return fleet;
}

EmbeddedFleet::~EmbeddedFleet() {
  if (server_) server_->Shutdown();
  if (agent_) agent_->Stop();
  if (agent_thread_.joinable()) agent_thread_.join();
}

}  // namespace tunefleet::cli
