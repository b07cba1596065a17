// Benchmark (not a test): simulates every strategy on recorded tables and
// prints, per table, each strategy's trials to reach 95% (and 99%) of the
// table's best as median / p90 over the seeds, and the median's ratio to
// random search's. With two or more tunefleet tables of one template it
// also compares xgb started cold with xgb started from the other tables'
// records (transfer learning).
//
//   search_efficiency [--trials N] [--seeds 50] [TABLE ...]
// --trials 0 (the default) gives each table its own size as the budget,
// so that random search's median is a count rather than the cap.
// Default tables: tests/data/tables/*.
#include <filesystem>
#include <iostream>

#include "CLI/CLI.hpp"
#include "absl/strings/str_format.h"
#include "base/status_macros.h"
#include "cli/simulate_command.h"
#include "search/strategy.h"

namespace tunefleet::bench {
namespace {

// Every strategy on one table, with its trials to 95% and 99% of the best
// as a ratio to random search's. Errors: the simulation's.
absl::Status CompareStrategies(const std::string& path, const search::Table& t,
                               const search::SimulationOptions& options) {
  TUNEFLEET_ASSIGN_OR_RETURN(
      std::vector<search::SimulationResult> results,
      cli::SimulateTable(t, {}, search::AllStrategies(), options));
  double random = 0;
  for (const auto& r : results) {
    if (r.strategy == search::Strategy::kRandom) random = r.to_95.median;
  }
  std::cout << absl::StrFormat(
      "\n%s\n  %zu configs (%s), best %.4g ms; %d seeds x %zu trials, "
      "batch %zu (never reached counts %zu)\n",
      std::filesystem::path(path).filename().string(), t.rows.size(), t.format,
      t.best_time_ms, options.seeds, options.trials, options.batch,
      options.trials + 1);
  std::cout << absl::StrFormat("  %-8s %15s %15s %16s %8s\n", "strategy",
                               "to 95% med/p90", "to 99% med/p90",
                               "95% vs random", "wall s");
  for (const auto& r : results) {
    std::cout << absl::StrFormat(
        "  %-8s %9.1f /%4.0f %9.1f /%4.0f %15.3fx %8.2f\n",
        search::StrategyName(r.strategy), r.to_95.median, r.to_95.p90,
        r.to_99.median, r.to_99.p90, random > 0 ? r.to_95.median / random : 0.0,
        r.wall_s);
  }
  return absl::OkStatus();
}

// Transfer: table `i` of a template simulated cold and warmed by the
// other tables of the same template (xgb), when there are any.
void CompareTransfer(const std::vector<search::Table>& loaded, size_t i,
                     const std::string& path,
                     search::SimulationOptions options) {
  const auto it = loaded[i].metadata.find("template");
  if (it == loaded[i].metadata.end()) return;
  std::vector<search::Table> others;
  for (size_t j = 0; j < loaded.size(); ++j) {
    const auto other = loaded[j].metadata.find("template");
    if (j != i && other != loaded[j].metadata.end() &&
        other->second == it->second) {
      others.push_back(loaded[j]);
    }
  }
  if (others.empty()) return;
  auto cold =
      cli::SimulateTable(loaded[i], {}, {search::Strategy::kXgb}, options);
  auto warm =
      cli::SimulateTable(loaded[i], others, {search::Strategy::kXgb}, options);
  if (!cold.ok() || !warm.ok()) return;
  std::cout << absl::StrFormat(
      "\ntransfer to %s (from %zu other table(s) of %s):\n"
      "  xgb cold: to 95%% %.1f, to 99%% %.1f; from history: to 95%% %.1f, "
      "to 99%% %.1f (medians)\n",
      std::filesystem::path(path).filename().string(), others.size(),
      it->second, (*cold)[0].to_95.median, (*cold)[0].to_99.median,
      (*warm)[0].to_95.median, (*warm)[0].to_99.median);
}

int Main(int argc, char** argv) {
  CLI::App app{"search strategies compared on recorded tables"};
  size_t trials = 0;
  search::SimulationOptions options;
  std::vector<std::string> tables;
  app.add_option("--trials", trials,
                 "trial budget per seed (0: each table's size)")
      ->capture_default_str();
  app.add_option("--seeds", options.seeds, "seeds per strategy")
      ->capture_default_str();
  app.add_option("--batch", options.batch, "configs per round")
      ->capture_default_str();
  app.add_option("tables", tables, "table files (default: tests/data/tables)");
  CLI11_PARSE(app, argc, argv);
  if (tables.empty()) {
    for (const auto& e : std::filesystem::directory_iterator(
             std::string(TUNEFLEET_SOURCE_DIR) + "/tests/data/tables")) {
      tables.push_back(e.path().string());
    }
    std::sort(tables.begin(), tables.end());
  }
  std::vector<search::Table> loaded;
  for (const std::string& path : tables) {
    absl::StatusOr<search::Table> table = search::LoadTable(path);
    if (!table.ok()) {
      std::cerr << table.status().message() << "\n";
      return 1;
    }
    loaded.push_back(*std::move(table));
    options.trials = trials > 0 ? trials : loaded.back().rows.size();
    if (absl::Status s = CompareStrategies(path, loaded.back(), options);
        !s.ok()) {
      std::cerr << s.message() << "\n";
      return 1;
    }
  }
  for (size_t i = 0; i < loaded.size(); ++i) {
    options.trials = trials > 0 ? trials : loaded[i].rows.size();
    CompareTransfer(loaded, i, tables[i], options);
  }
  return 0;
}

}  // namespace
}  // namespace tunefleet::bench

int main(int argc, char** argv) { return tunefleet::bench::Main(argc, argv); }
