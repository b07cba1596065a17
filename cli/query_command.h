// `tunefleet query`: tuning records from a database file (--db) or a
// running server (--server); the best record per device key and workload
// unless --all. `tunefleet devices` lists the device keys of a server or
// a database file.
#ifndef TUNEFLEET_CLI_QUERY_COMMAND_H_
#define TUNEFLEET_CLI_QUERY_COMMAND_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "client/channel.h"
#include "tunefleet/v1/tuning.pb.h"

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
  bool wide = false;       // cells in full, not cut to the terminal's width
  uint32_t page_size = 0;  // records per page (--server or --db); 0: 1000
};

// Declares the flags of subcommand `cmd` (main.cc registers it with its
// name and one-line help); `options` must outlive parsing.
void AddQueryOptions(CLI::App* cmd, QueryOptions& options);
int RunQuery(const QueryOptions& options);

// The records table: DEVICE KEY, WORKLOAD, RESULT, TIME (ms), GFLOP/s,
// CONFIG, each column as wide as its content; with max_width > 0 (in
// characters), DEVICE KEY, WORKLOAD and CONFIG cells are cut with "…" so
// that lines fit it (FitTable, cli/table_text.h).
// With `provenance` (query --wide), each record's provenance follows
// (TuningRecord.provenance): DRIVER, KERNEL SHA-256, TEMPLATE (version and
// source hash), TUNEFLEET (version), MEASURED (UTC), AGENT and ORIGIN
// ("local", or "imported" from a record bundle).
std::string RecordTable(const std::vector<tunefleet::v1::TuningRecord>& records,
                        size_t max_width = 0, bool provenance = false);

struct DevicesOptions {
  std::string server;
  client::ChannelFiles connection;  // token and TLS for --server
  std::string db = "tunefleet.db";
  bool json = false;
};

// Declares the flags of subcommand `cmd` (main.cc registers it with its
// name and one-line help); `options` must outlive parsing.
void AddDevicesOptions(CLI::App* cmd, DevicesOptions& options);
int RunDevices(const DevicesOptions& options);

}  // namespace tunefleet::cli

#endif  // TUNEFLEET_CLI_QUERY_COMMAND_H_
