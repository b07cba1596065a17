// `tunefleet jobs`, `tunefleet watch JOB` and `tunefleet cancel JOB`: the
// jobs of a server (--server) or, for `jobs` and `watch`, of a database
// file (--db), read through a data_source::DataSource (cli/server_source.h).
#ifndef TUNEFLEET_CLI_JOBS_COMMAND_H_
#define TUNEFLEET_CLI_JOBS_COMMAND_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "client/channel.h"
#include "tunefleet/v1/tuning.pb.h"

namespace tunefleet::cli {

struct JobsOptions {
  std::string server;               // HOST:PORT; empty: read --db
  client::ChannelFiles connection;  // token and TLS for --server
  std::string db = "tunefleet.db";
  uint32_t limit = 50;     // jobs: newest jobs to list
  uint32_t page_size = 0;  // jobs --server: jobs per request; 0: the server's
  int64_t job_id = 0;      // watch and cancel
  bool json = false;
  bool wide = false;   // jobs: cells in full, not cut to the terminal's width
  bool quiet = false;  // watch: no progress lines
};

// Declares the flags of subcommand `cmd` (main.cc registers it with its
// name and one-line help); `options` must outlive parsing.
void AddJobsOptions(CLI::App* cmd, JobsOptions& options);
int RunJobs(const JobsOptions& options);

// The jobs table: JOB, STATE, TRIALS, WORKLOAD, DEVICE KEY, STRAT, BEST,
// each column as wide as its content; a model job's WORKLOAD is "model NAME
// (N tasks)" and its BEST the model's estimated latency ("est 4.42 ms").
// With max_width > 0 (in characters), WORKLOAD and DEVICE KEY cells are cut
// with "…" so that lines fit it (FitTable, cli/table_text.h).
std::string JobTable(const std::vector<tunefleet::v1::JobProgress>& jobs,
                     size_t max_width = 0);

// Declares the flags of subcommand `cmd` (main.cc registers it with its
// name and one-line help); `options` must outlive parsing.
void AddWatchOptions(CLI::App* cmd, JobsOptions& options);
// A model job: a progress line with its estimated latency and a line per
// task that improves or stops; at the end its tasks' table. Exit: 0 when
// the job ended done, 1 failed or cancelled.
int RunWatch(const JobsOptions& options);

// Declares the flags of subcommand `cmd` (main.cc registers it with its
// name and one-line help); `options` must outlive parsing.
void AddCancelOptions(CLI::App* cmd, JobsOptions& options);
int RunCancel(const JobsOptions& options);

}  // namespace tunefleet::cli

#endif  // TUNEFLEET_CLI_JOBS_COMMAND_H_
