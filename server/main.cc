// tunefleet-server: the tuning daemon. Agents dial in; clients submit and
// watch jobs and query records over gRPC. Callers present bearer tokens
// from --tokens FILE (SIGHUP reloads it); --tls-cert/--tls-key turn on TLS.
#include <pthread.h>

#include <csignal>
#include <cstdio>
#include <thread>

#include "CLI/CLI.hpp"
#include "absl/strings/str_cat.h"
#include "server/auth/auth.h"
#include "server/server.h"

int main(int argc, char** argv) {
  // SIGINT/SIGTERM go to a sigwait thread; block them before threads start.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGHUP);  // reload the tokens file
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);

  CLI::App app{
      "tunefleet-server: the tuning daemon. Device agents dial in "
      "(tunefleet-agent --server HOST:PORT); clients submit jobs with "
      "`tunefleet tune --server HOST:PORT`. Every measurement is stored in "
      "a SQLite database."};
  tunefleet::server::ServerOptions options;
  app.add_option("--listen", options.listen,
                 "address to listen on, HOST:PORT (port 0: any free port)")
      ->capture_default_str();
  app.add_option("--db", options.db_path, "SQLite database file")
      ->capture_default_str();
  app.add_option("--heartbeat-ms", options.heartbeat_interval_ms,
                 "heartbeat interval asked of agents; one silent for 3 "
                 "intervals is dropped and its trials requeued")
      ->capture_default_str()
      ->check(CLI::Range(10, 600000));
  bool no_resume = false;
  app.add_flag("--no-resume", no_resume,
               "leave jobs an earlier run left unfinished as they are "
               "(default: resume them)");
  std::string tokens_file;
  CLI::Option* tokens_option =
      app.add_option("--tokens", tokens_file,
                     "file of accepted tokens, hashed (tunefleet token add "
                     "--tokens FILE); mode 0600; SIGHUP reloads it");
  app.add_flag("--no-auth", options.no_auth,
               "accept every caller without a token (development on a "
               "loopback address; elsewhere it needs --insecure too)")
      ->excludes(tokens_option);
  app.add_option("--tls-cert", options.tls.cert_file,
                 "TLS: the server's certificate chain (PEM; "
                 "deploy/make-certs.sh)");
  app.add_option("--tls-key", options.tls.key_file,
                 "TLS: the private key of --tls-cert (PEM)");
  app.add_option("--client-ca", options.tls.client_ca_file,
                 "TLS: require client certificates signed by this CA (PEM)");
  app.add_flag("--insecure", options.insecure,
               "allow plaintext (no TLS) or --no-auth on an address that is "
               "not loopback");
  CLI11_PARSE(app, argc, argv);
  options.resume_jobs = !no_resume;
  if (!tokens_file.empty()) {
    absl::StatusOr<tunefleet::auth::TokenSet> tokens =
        tunefleet::auth::TokenSet::Load(tokens_file);
    if (!tokens.ok()) {
      std::fprintf(stderr, "tunefleet-server: %s\n",
                   std::string(tokens.status().message()).c_str());
      return 2;
    }
    options.tokens =
        std::make_shared<const tunefleet::auth::TokenSet>(*std::move(tokens));
  }

  auto server = tunefleet::server::Server::Start(options);
  if (!server.ok()) {
    std::fprintf(stderr, "tunefleet-server: %s\n",
                 std::string(server.status().message()).c_str());
    const absl::StatusCode code = server.status().code();
    return code == absl::StatusCode::kFailedPrecondition ||
                   code == absl::StatusCode::kInvalidArgument ||
                   code == absl::StatusCode::kNotFound
               ? 2
               : 1;
  }
  const std::string auth =
      options.no_auth
          ? "no authentication"
          : absl::StrCat(options.tokens->entries().size(), " token(s)");
  std::fprintf(
      stderr, "tunefleet-server: listening on %s (%s, %s), database %s\n",
      (*server)->address().c_str(), options.tls.enabled() ? "TLS" : "plaintext",
      auth.c_str(), options.db_path.c_str());
  std::thread([&server, stop_signals, tokens_file] {
    while (true) {
      int signal = 0;
      sigwait(&stop_signals, &signal);
      if (signal != SIGHUP) break;
      if (tokens_file.empty()) {
        std::fprintf(stderr,
                     "tunefleet-server: SIGHUP: no --tokens to reload\n");
        continue;
      }
      // A file that no longer loads leaves the tokens in use as they were.
      absl::StatusOr<tunefleet::auth::TokenSet> tokens =
          tunefleet::auth::TokenSet::Load(tokens_file);
      absl::Status reloaded =
          tokens.ok()
              ? (*server)->SetTokens(
                    std::make_shared<const tunefleet::auth::TokenSet>(*tokens))
              : tokens.status();
      if (reloaded.ok()) {
        std::fprintf(stderr,
                     "tunefleet-server: reloaded %zu token(s) from %s\n",
                     tokens->entries().size(), tokens_file.c_str());
      } else {
        std::fprintf(
            stderr,
            "tunefleet-server: SIGHUP: %s (keeping the tokens in use)\n",
            std::string(reloaded.message()).c_str());
      }
    }
    (*server)->Shutdown();
  }).detach();
  (*server)->Wait();
  std::fprintf(stderr, "tunefleet-server: stopped\n");
  return 0;
}
