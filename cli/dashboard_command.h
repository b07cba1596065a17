// `tunefleet dashboard --db FILE`: the daemon's web dashboard (fleet, jobs
// and job pages) on a database file alone, for people who only have the
// SQLite file. Reads only; no agents are connected and nothing can be
// cancelled. Serves until SIGINT or SIGTERM.
#ifndef TUNEFLEET_CLI_DASHBOARD_COMMAND_H_
#define TUNEFLEET_CLI_DASHBOARD_COMMAND_H_

#include <string>
#include <vector>

#include "CLI/CLI.hpp"

namespace tunefleet::cli {

struct DashboardOptions {
  std::string db = "tunefleet.db";
  std::string http = "127.0.0.1:8080";  // HOST:PORT; port 0: any free port
  // Tokens file (tunefleet token add): when given, the API needs a token
  // of role reader or tuner; else none (a loopback address only, unless
  // insecure).
  std::string tokens_file;
  std::string tls_cert;  // HTTPS: certificate chain and key (PEM)
  std::string tls_key;
  bool insecure = false;  // allow a non-loopback address without TLS+tokens
  // Host names besides the listen address the page may be reached by
  // (dashboard/request_guard.h).
  std::vector<std::string> hosts;
};

// Declares the flags of subcommand `cmd` (main.cc registers it with its
// name and one-line help); `options` must outlive parsing.
void AddDashboardOptions(CLI::App* cmd, DashboardOptions& options);
// Exit: 0 after a signal; 2 for a refused address or a missing file; 1
// when the address cannot be bound.
int RunDashboard(const DashboardOptions& options);

}  // namespace tunefleet::cli

#endif  // TUNEFLEET_CLI_DASHBOARD_COMMAND_H_
