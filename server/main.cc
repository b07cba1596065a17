// tunefleet-server: the tuning daemon. Agents dial in; clients submit and
// watch jobs and query records over gRPC. Callers present bearer tokens
// from --tokens FILE (SIGHUP reloads it); --tls-cert/--tls-key turn on TLS.
#include <pthread.h>

#include <csignal>
#include <memory>
#include <string>
#include <thread>

#include "CLI/CLI.hpp"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "auth/tokens.h"
#include "base/flags.h"
#include "base/guarded_main.h"
#include "base/status_macros.h"
#include "base/version.h"
#include "bundle/keys.h"
#include "logging/log.h"
#include "logging/log_flag.h"
#include "server/server.h"

namespace {

using tunefleet::base::AddRangeOption;
using tunefleet::server::Server;
using tunefleet::server::ServerOptions;

// The command line: the server's options and what main() does with them.
struct Flags {
  ServerOptions options;
  bool no_resume = false;
  std::string tokens_file;
  std::string bundle_trust_file;
  tunefleet::logging::Level log_level = tunefleet::logging::Level::kInfo;
};

// Blocks SIGINT, SIGTERM (stop) and SIGHUP (reload the tokens file) in this
// thread and the ones it starts, for HandleSignals() to sigwait on; must
// run before any thread starts.
sigset_t BlockServerSignals() {
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGHUP);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  return signals;
}

void AddFlags(CLI::App* app, Flags* flags) {
  ServerOptions& options = flags->options;
  app->add_option("--listen", options.listen,
                  "address to listen on, HOST:PORT (port 0: any free port)")
      ->capture_default_str();
  app->add_option("--db", options.db_path, "SQLite database file")
      ->capture_default_str();
  AddRangeOption(app, "--heartbeat-ms", options.heartbeat_interval_ms,
                 "heartbeat interval asked of agents; one silent for 3 "
                 "intervals is dropped and its trials requeued",
                 10, 600000);
  AddRangeOption(app, "--revalidate-top", options.revalidate_top,
                 "when an agent brings a new driver to a device key, the "
                 "fastest configs per task measured again on it "
                 "(docs/DRIVER_DRIFT.md); 0: no re-validation",
                 0, 100);
  app->add_flag("--no-resume", flags->no_resume,
                "leave jobs an earlier run left unfinished as they are "
                "(default: resume them)");
  CLI::Option* tokens_option =
      app->add_option("--tokens", flags->tokens_file,
                      "file of accepted tokens, hashed (tunefleet token add "
                      "--tokens FILE); mode 0600; SIGHUP reloads it");
  app->add_flag("--no-auth", options.no_auth,
                "accept every caller without a token (development on a "
                "loopback address; elsewhere it needs --insecure too)")
      ->excludes(tokens_option);
  app->add_option("--tls-cert", options.tls.cert_file,
                  "TLS: the server's certificate chain (PEM; "
                  "deploy/make-certs.sh)");
  app->add_option("--tls-key", options.tls.key_file,
                  "TLS: the private key of --tls-cert (PEM)");
  app->add_option("--client-ca", options.tls.client_ca_file,
                  "TLS: require client certificates signed by this CA (PEM)");
  app->add_option("--http", options.http_listen,
                  "serve the web dashboard on HOST:PORT (off by default; "
                  "HTTPS with --tls-cert/--tls-key; every API call needs a "
                  "token of role reader or tuner)");
  app->add_option("--http-host", options.http_hosts,
                  "a host name the dashboard is reached by besides the --http "
                  "address (a DNS name, a reverse proxy's; repeat for more); "
                  "requests naming another Host get 421 (DNS rebinding)");
  app->add_flag("--insecure", options.insecure,
                "allow plaintext (no TLS) or --no-auth on an address that is "
                "not loopback");
  // Bounds on the work one server takes (docs/SERVER_LIMITS.md).
  AddRangeOption(app, "--max-active-jobs", options.limits.max_active_jobs,
                 "jobs and model jobs queued or running at once; a "
                 "submission beyond is refused (RESOURCE_EXHAUSTED)",
                 1, 100000);
  AddRangeOption(app, "--max-model-tasks", options.limits.max_model_tasks,
                 "tasks of one model job; a model job with more is refused "
                 "(RESOURCE_EXHAUSTED)",
                 1, static_cast<int>(tunefleet::validation::kMaxModelTasks));
  AddRangeOption(app, "--max-watch-streams", options.max_watch_streams,
                 "WatchJob streams one token may hold open at once (all "
                 "callers count as one with --no-auth)",
                 1, 1000000);
  AddRangeOption(app, "--job-threads", options.limits.job_threads,
                 "threads running the steps of every job (0: max(4, "
                 "hardware threads)); the server's thread count does not "
                 "grow with jobs, tasks or streams",
                 0, 1024);
  app->add_option("--bundle-trust", flags->bundle_trust_file,
                  "accept only record bundles (ImportRecords, "
                  "docs/BUNDLES.md) signed by one of the Ed25519 public "
                  "keys in this PEM file; default: any intact bundle");
  tunefleet::logging::AddLogLevelFlag(*app, &flags->log_level);
}

// What `load` makes of the file at `path` into `*out`; nothing when `path`
// is empty (the flag not given). Errors: `load`'s.
template <typename T>
absl::Status LoadShared(const std::string& path,
                        absl::StatusOr<T> (*load)(const std::string&),
                        std::shared_ptr<const T>* out) {
  if (path.empty()) return absl::OkStatus();
  absl::StatusOr<T> loaded = load(path);
  if (!loaded.ok()) return loaded.status();
  *out = std::make_shared<const T>(*std::move(loaded));
  return absl::OkStatus();
}

// The tokens of --tokens and the keys of --bundle-trust (where given) into
// the options. Errors: TokenSet::Load's, TrustedKeys::FromPemFile's.
absl::Status LoadFiles(Flags* flags) {
  TUNEFLEET_RETURN_IF_ERROR(LoadShared(flags->tokens_file,
                                       &tunefleet::auth::TokenSet::Load,
                                       &flags->options.tokens));
  return LoadShared(flags->bundle_trust_file,
                    &tunefleet::bundle::TrustedKeys::FromPemFile,
                    &flags->options.bundle_trust);
}

// 2 for a refusal of the command line or its files, else 1.
int StartFailureExitCode(const absl::Status& status) {
  const absl::StatusCode code = status.code();
  return code == absl::StatusCode::kFailedPrecondition ||
                 code == absl::StatusCode::kInvalidArgument ||
                 code == absl::StatusCode::kNotFound
             ? 2
             : 1;
}

void PrintListening(const Server& server, const ServerOptions& options) {
  const std::string auth =
      options.no_auth
          ? "no authentication"
          : absl::StrCat(options.tokens->entries().size(), " token(s)");
  tunefleet::logging::Info(
      "tunefleet-server: listening on {} ({}, {}), database {}",
      server.address(), options.tls.enabled() ? "TLS" : "plaintext", auth,
      options.db_path);
  if (server.http_port() != 0) {
    std::string host =
        options.http_listen.substr(0, options.http_listen.rfind(':'));
    if (host.empty() || host == "0.0.0.0") host = "127.0.0.1";
    tunefleet::logging::Info("tunefleet-server: dashboard on {}://{}:{}/",
                             options.tls.enabled() ? "https" : "http", host,
                             server.http_port());
  }
}

// The settings a start runs with, at level debug.
void LogSettings(const Flags& flags) {
  const ServerOptions& o = flags.options;
  tunefleet::logging::Debug(
      "tunefleet-server: log level {}; heartbeat {} ms; job threads {} (0: "
      "max(4, hardware threads)); at most {} active job(s), {} task(s) per "
      "model job, {} WatchJob stream(s) per token; {} unfinished jobs",
      std::string(tunefleet::logging::LevelName(flags.log_level)),
      o.heartbeat_interval_ms, o.limits.job_threads, o.limits.max_active_jobs,
      o.limits.max_model_tasks, o.max_watch_streams,
      o.resume_jobs ? "resuming" : "not resuming");
}

// SIGHUP: reads the tokens file again. A file that no longer loads leaves
// the tokens in use as they were.
void ReloadTokens(Server& server, const std::string& tokens_file) {
  if (tokens_file.empty()) {
    tunefleet::logging::Warn("tunefleet-server: SIGHUP: no --tokens to reload");
    return;
  }
  absl::StatusOr<tunefleet::auth::TokenSet> tokens =
      tunefleet::auth::TokenSet::Load(tokens_file);
  absl::Status reloaded =
      tokens.ok()
          ? server.SetTokens(
                std::make_shared<const tunefleet::auth::TokenSet>(*tokens))
          : tokens.status();
  if (reloaded.ok()) {
    tunefleet::logging::Info("tunefleet-server: reloaded {} token(s) from {}",
                             tokens->entries().size(), tokens_file);
  } else {
    tunefleet::logging::Error(
        "tunefleet-server: SIGHUP: {} (keeping the tokens in use)",
        std::string(reloaded.message()));
  }
}

// Waits for `signals`: reloads the tokens on SIGHUP, shuts the server down
// on the others.
void HandleSignals(sigset_t signals, Server& server,
                   const std::string& tokens_file) {
  while (true) {
    int signal = 0;
    sigwait(&signals, &signal);
    if (signal != SIGHUP) break;
    ReloadTokens(server, tokens_file);
  }
  server.Shutdown();
}

// The daemon: its flags parsed, then served until a signal stops it;
// returns the exit code.
int RunServer(int argc, char** argv) {
  // Debian's Abseil checks every Mutex acquisition for lock-order cycles
  // (a graph kept per lock); the daemon's hot path takes several locks per
  // trial. Tests keep the check.
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
  const sigset_t signals = BlockServerSignals();
  CLI::App app{
      "tunefleet-server: the tuning daemon. Device agents dial in "
      "(tunefleet-agent --server HOST:PORT); clients submit jobs with "
      "`tunefleet tune --server HOST:PORT`. Every measurement is stored in "
      "a SQLite database."};
  app.set_version_flag("--version", std::string("tunefleet-server ") +
                                        tunefleet::base::kVersion);
  Flags flags;
  AddFlags(&app, &flags);
  CLI11_PARSE(app, argc, argv);
  tunefleet::logging::Setup(flags.log_level);
  flags.options.resume_jobs = !flags.no_resume;
  if (absl::Status s = LoadFiles(&flags); !s.ok()) {
    tunefleet::logging::Error("tunefleet-server: {}", std::string(s.message()));
    return 2;
  }
  LogSettings(flags);

  absl::StatusOr<std::unique_ptr<Server>> server = Server::Start(flags.options);
  if (!server.ok()) {
    tunefleet::logging::Error("tunefleet-server: {}",
                              std::string(server.status().message()));
    return StartFailureExitCode(server.status());
  }
  PrintListening(**server, flags.options);
  std::thread([signals, &server = **server, tokens_file = flags.tokens_file] {
    HandleSignals(signals, server, tokens_file);
  }).detach();
  (*server)->Wait();
  tunefleet::logging::Info("tunefleet-server: stopped");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  return tunefleet::base::GuardedMain(
      [&] { return RunServer(argc, argv); },
      [](const char* what) {
        tunefleet::logging::Error("tunefleet-server: unexpected: {}", what);
        return 1;
      });
}
