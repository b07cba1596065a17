#include "cli/embedded.h"

#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "auth/tokens.h"
#include "base/files.h"
#include "base/status_macros.h"
#include "store/store.h"

namespace tunefleet::cli {
namespace {

constexpr char kAgentName[] = "tunefleet-agent";

bool IsExecutable(const std::filesystem::path& path) {
  return !path.empty() && access(path.c_str(), X_OK) == 0 &&
         std::filesystem::is_regular_file(path);
}

// The last `lines` lines of the file at `path` (the agent's log).
std::string Tail(const std::string& path, size_t lines) {
  absl::StatusOr<std::string> text = base::ReadWholeFile(path);
  if (!text.ok()) return "";
  std::vector<std::string> all =
      absl::StrSplit(*text, '\n', absl::SkipWhitespace());
  if (all.size() > lines) all.erase(all.begin(), all.end() - lines);
  std::string out;
  for (const std::string& line : all) absl::StrAppend(&out, "\n  ", line);
  return out;
}

// A server with two tokens made for this command: one of role agent, one of
// role tuner.
struct Tokens {
  std::string agent;
  std::string tuner;
  std::shared_ptr<auth::TokenSet> set;
};

absl::StatusOr<Tokens> MakeTokens() {
  Tokens t;
  TUNEFLEET_ASSIGN_OR_RETURN(t.agent, auth::GenerateToken());
  TUNEFLEET_ASSIGN_OR_RETURN(t.tuner, auth::GenerateToken());
  t.set = std::make_shared<auth::TokenSet>();
  TUNEFLEET_RETURN_IF_ERROR(t.set->Add(auth::TokenEntry::ForToken(
      t.agent, auth::Role::kAgent, "embedded-agent")));
  TUNEFLEET_RETURN_IF_ERROR(t.set->Add(auth::TokenEntry::ForToken(
      t.tuner, auth::Role::kTuner, "embedded-client")));
  return t;
}

}  // namespace

absl::StatusOr<std::string> FindAgentBinary() {
  if (const char* env = std::getenv("TUNEFLEET_AGENT"); env && *env) {
    if (IsExecutable(env)) return std::string(env);
    return absl::NotFoundError(
        absl::StrCat("TUNEFLEET_AGENT=", env, " is not an executable file"));
  }
  std::error_code ec;
  const std::filesystem::path self =
      std::filesystem::read_symlink("/proc/self/exe", ec);
  const std::filesystem::path beside = self.parent_path() / kAgentName;
  if (!ec && IsExecutable(beside)) return beside.string();
  const char* path = std::getenv("PATH");
  for (absl::string_view dir :
       absl::StrSplit(path ? path : "", ':', absl::SkipEmpty())) {
    const std::filesystem::path candidate =
        std::filesystem::path(std::string(dir)) / kAgentName;
    if (IsExecutable(candidate)) return candidate.string();
  }
  return absl::NotFoundError(absl::StrCat(
      "tunefleet-agent is not beside ", self.string(),
      " nor on PATH; install it there or set TUNEFLEET_AGENT=/path/to/"
      "tunefleet-agent"));
}

absl::StatusOr<int> InterruptAbandonedJobs(const std::string& db_path) {
  TUNEFLEET_ASSIGN_OR_RETURN(std::unique_ptr<store::Store> store,
                             store::Store::Open(db_path));
  return store->InterruptAbandonedJobs(
      kEmbeddedAgentPrefix,
      "interrupted: the tunefleet command running this job ended before "
      "the job did (killed?); its finished trials are kept");
}

absl::StatusOr<std::unique_ptr<EmbeddedFleet>> EmbeddedFleet::Start(
    const EmbeddedOptions& options) {
  // The server (and its store) run in this process and log through its
  // logger.
  logging::Setup(logging::LogOptions{.level = options.log_level});
  std::string agent_binary = options.agent_binary;
  if (agent_binary.empty()) {
    TUNEFLEET_ASSIGN_OR_RETURN(agent_binary, FindAgentBinary());
  }
  TUNEFLEET_ASSIGN_OR_RETURN(const int interrupted,
                             InterruptAbandonedJobs(options.db_path));
  if (interrupted > 0) {
    std::fprintf(stderr,
                 "tunefleet: marked %d job(s) of an earlier command that was "
                 "killed as failed (interrupted)\n",
                 interrupted);
  }
  TUNEFLEET_ASSIGN_OR_RETURN(Tokens tokens, MakeTokens());
  auto fleet = std::make_unique<EmbeddedFleet>(base::PassKey<EmbeddedFleet>());
  server::ServerOptions server_options;
  server_options.listen = "127.0.0.1:0";
  server_options.db_path = options.db_path;
  server_options.verbose = options.verbose;
  // The embedded server lives for one command: it runs that command's jobs,
  // not those an interrupted earlier command left behind.
  server_options.resume_jobs = false;
  // A command killed before its first result leaves leased rows naming
  // its agent: the next command marks its jobs interrupted by them.
  server_options.write_leases = true;
  server_options.tokens = tokens.set;
  server_options.owner = "tunefleet tune";
  TUNEFLEET_ASSIGN_OR_RETURN(fleet->server_,
                             server::Server::Start(server_options));
  fleet->connection_.address = fleet->server_->address();
  fleet->connection_.channel.token = tokens.tuner;

  // The agent as a standalone one runs, minus the persistent binary cache:
  // one command's programs are built once per worker.
  const std::string agent_name = absl::StrCat(kEmbeddedAgentPrefix, getpid());
  std::vector<std::string> argv = {
      agent_binary,
      "--server",
      fleet->server_->address(),
      "--name",
      agent_name,
      "--platform",
      absl::StrCat(options.platform),
      "--device",
      absl::StrCat(options.device),
      "--no-binary-cache",
      "--exit-with-parent",
      "--log-level",
      std::string(logging::LevelName(options.log_level))};
  if (!options.device_key.empty()) {
    argv.insert(argv.end(), {"--key", options.device_key});
  }
  base::Subprocess::Options spawn;
  spawn.env = {absl::StrCat("TUNEFLEET_TOKEN=", tokens.agent)};
  // Ctrl-C cancels the command's jobs (StopOnSignal); the agent ends when
  // the fleet does.
  spawn.own_process_group = true;
  if (!options.verbose) {
    fleet->agent_log_ = (std::filesystem::temp_directory_path() /
                         absl::StrCat("tunefleet-agent-", getpid(), ".log"))
                            .string();
    std::filesystem::remove(fleet->agent_log_);
    spawn.output_path = fleet->agent_log_;
  }
  TUNEFLEET_ASSIGN_OR_RETURN(fleet->agent_,
                             base::Subprocess::Spawn(argv, spawn));
  TUNEFLEET_RETURN_IF_ERROR(
      fleet->AwaitAgent(agent_name, options.connect_timeout));
  return fleet;
}

absl::Status EmbeddedFleet::AwaitAgent(const std::string& agent_name,
                                       absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  while (true) {
    for (const auto& session : server_->scheduler().Agents()) {
      if (session->name() == agent_name) {
        device_key_ = session->key();
        return absl::OkStatus();
      }
    }
    base::ExitStatus exit;
    if (agent_.Exited(&exit)) {
      return absl::UnavailableError(absl::StrCat(
          "the embedded tunefleet-agent ended (", exit.ToString(), ")",
          agent_log_.empty() ? "" : ":", Tail(agent_log_, 5)));
    }
    if (absl::Now() > deadline) {
      return absl::DeadlineExceededError(
          "the embedded agent did not connect to the embedded server");
    }
    absl::SleepFor(absl::Milliseconds(10));
  }
}

EmbeddedFleet::~EmbeddedFleet() {
  // The agent first: its stream then ends while the server still runs, and
  // no trial is left leased to it.
  if (agent_.running()) {
    (void)agent_.Signal(SIGTERM);
    if (!agent_.Wait(base::DeadlineIn(5000)).ok()) agent_.Kill();
  }
  if (server_) server_->Shutdown();
  if (!agent_log_.empty()) std::filesystem::remove(agent_log_);
}

}  // namespace tunefleet::cli
