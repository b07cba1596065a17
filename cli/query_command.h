// `tunefleet query`: tuning records from a database file (--db) or a
// running server (--server); the best record per device key and workload
// unless --all. `tunefleet devices` lists the fleet of a server.
#ifndef TUNEFLEET_CLI_QUERY_COMMAND_H_
#define TUNEFLEET_CLI_QUERY_COMMAND_H_

#include <string>

#include "CLI/CLI.hpp"
#include "client/channel.h"

namespace tunefleet::cli {

struct QueryOptions {
  std::string db = "tunefleet.db";
  std::string server;
  client::ChannelFiles connection;  // token and TLS for --server
  std::string op;
  std::string device_key;
  int64_t job_id = 0;
  bool all = false;
  bool json = false;
};

CLI::App* AddQueryCommand(CLI::App& app, QueryOptions& options);
int RunQuery(const QueryOptions& options);

struct DevicesOptions {
  std::string server;
  client::ChannelFiles connection;  // token and TLS for --server
  std::string db = "tunefleet.db";
  bool json = false;
};

CLI::App* AddDevicesCommand(CLI::App& app, DevicesOptions& options);
int RunDevices(const DevicesOptions& options);

}  // namespace tunefleet::cli

#endif  // TUNEFLEET_CLI_QUERY_COMMAND_H_
