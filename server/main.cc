// tunefleet-server: the tuning daemon. Agents dial in; clients submit and
// watch jobs and query records over gRPC.
#include <pthread.h>

#include <csignal>
#include <cstdio>
#include <thread>

#include "CLI/CLI.hpp"
#include "server/server.h"

int main(int argc, char** argv) {
  // SIGINT/SIGTERM go to a sigwait thread; block them before threads start.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
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
  CLI11_PARSE(app, argc, argv);
  options.resume_jobs = !no_resume;

  auto server = tunefleet::server::Server::Start(options);
  if (!server.ok()) {
    std::fprintf(stderr, "tunefleet-server: %s\n",
                 std::string(server.status().message()).c_str());
    return 1;
  }
  std::fprintf(stderr, "tunefleet-server: listening on %s, database %s\n",
               (*server)->address().c_str(), options.db_path.c_str());
  std::thread([&server, stop_signals] {
    int signal = 0;
    sigwait(&stop_signals, &signal);
    (*server)->Shutdown();
  }).detach();
  (*server)->Wait();
  std::fprintf(stderr, "tunefleet-server: stopped\n");
  return 0;
}
