// `tunefleet simulate`: replays a recorded table in place of a device and
// reports how many trials each strategy needs to come within 5% and 1% of
// the table's best, and its performance score against random search. `tunefleet
// export`: a job's trials as such a table.
#ifndef TUNEFLEET_CLI_SIMULATE_COMMAND_H_
#define TUNEFLEET_CLI_SIMULATE_COMMAND_H_

#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"
#include "search/simulate.h"
#include "search_space/table.h"

namespace tunefleet::cli {

struct SimulateOptions {
  std::string table;
  std::vector<std::string> strategies = {"xgb"};
  size_t trials = 300;
  int seeds = 50;
  size_t batch = 8;
  std::vector<std::string> history;  // tables the model starts from
  int threads = 0;
  bool json = false;
};

// Declares the flags of subcommand `cmd` (main.cc registers it with its
// name and one-line help); `options` must outlive parsing.
void AddSimulateOptions(CLI::App* cmd, SimulateOptions& options);
int RunSimulate(const SimulateOptions& options);

struct ExportOptions {
  std::string db = "tunefleet.db";
  int64_t job = 0;
  std::string out;  // empty: stdout
};

// Declares the flags of subcommand `cmd` (main.cc registers it with its
// name and one-line help); `options` must outlive parsing.
void AddExportOptions(CLI::App* cmd, ExportOptions& options);
int RunExport(const ExportOptions& options);

// Simulates `strategies` on a loaded table: the engine behind the command
// and bench/search_efficiency. Features come from the table's task when it
// names one (tunefleet tables), else from knob values alone; `history`
// tables feed the xgb model (transfer learning).
absl::StatusOr<std::vector<search::SimulationResult>> SimulateTable(
    const search_space::Table& table,
    const std::vector<search_space::Table>& history,
    const std::vector<tunefleet::v1::Strategy>& strategies,
    search::SimulationOptions options);

// The JSON object of one result: {"strategy", "seeds", "trials",
// "trials_to_95": {"median", "p90"}, "trials_to_99": {...}, "score" (the
// performance score of search/score.h; null when the budget ends before
// its range starts), "score_trials": {"first", "last"} (the range of trials
// it averages over), "wall_s"}.
nlohmann::json SimulationJson(const search::SimulationResult& result);

}  // namespace tunefleet::cli

#endif  // TUNEFLEET_CLI_SIMULATE_COMMAND_H_
