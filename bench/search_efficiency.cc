// Benchmark (not a test): simulates search strategies on recorded tables.
// Per table and strategy it prints the trials to reach 95% and 99% of the
// table's best (median and nearest-rank p90 over the seeds), each as a
// ratio to random search's (median to median, p90 to p90), the performance
// score of search/score.h (0 = random search, 1 = the best from the first
// trial) and the wall seconds; then whether xgb meets the quarter rule on
// the table: xgb's median AND p90 at most a quarter of random's, at 95%
// and at 99% (a target where random's median is below 20 trials is n/a),
// judged against the simulated random search and against its exact
// figures (search/random_odds.h: the limit over infinitely many seeds,
// printed as "rnd exact", since a 20-seed median is itself noisy).
// Then transfer rows: each table simulated with xgb cold and with the other
// given tables of the same kernel (metadata "template" of tunefleet tables,
// "kernel" of Kernel Tuner caches) as history, and the ratios warm/cold.
//
//   search_efficiency [--trials N] [--seeds 20] [--batch 8]
//                     [--strategies random,xgb] [--json] [TABLE ...]
// --trials 0 (the default) gives each table its own size as the budget,
// so that random search's median is a count rather than the cap.
// Default tables: tests/data/tables/*.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <limits>
#include <optional>

#include "CLI/CLI.hpp"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "base/status_macros.h"
#include "cli/simulate_command.h"
#include "contract/names.h"
#include "nlohmann/json.hpp"
#include "search/random_odds.h"
#include "search/strategy.h"

namespace tunefleet::bench {
namespace {

using nlohmann::json;
using search::SimulationResult;
using tunefleet::v1::Strategy;

// The quarter rule needs random search's median to be a real count.
constexpr double kMinRandomTrials = 20;

struct Run {
  std::string name;  // the table's file name
  const search_space::Table* table = nullptr;
  search::SimulationOptions options;
  std::vector<SimulationResult> results;
};

double Ratio(double a, double b) {
  return b > 0 ? a / b : std::numeric_limits<double>::quiet_NaN();
}

const SimulationResult* Find(const std::vector<SimulationResult>& results,
                             Strategy s) {
  for (const SimulationResult& r : results) {
    if (r.strategy == s) return &r;
  }
  return nullptr;
}

// One target of the quarter rule: "met", "not met" or "n/a".
std::string QuarterRule(const search::TrialsToTarget& xgb,
                        const search::TrialsToTarget& random) {
  if (random.median < kMinRandomTrials) return "n/a";
  return xgb.median * 4 <= random.median && xgb.p90 * 4 <= random.p90
             ? "met"
             : "not met";
}

// The kernel a table is of, for transfer: its template or Kernel Tuner
// kernel name; empty when it names neither.
std::string KernelOf(const search_space::Table& t) {
  for (const char* key : {"template", "kernel"}) {
    const auto it = t.metadata.find(key);
    if (it != t.metadata.end() && !it->second.empty()) return it->second;
  }
  return "";
}

json RatiosJson(const SimulationResult& r, const SimulationResult& base) {
  return {{"to_95_median", Ratio(r.to_95.median, base.to_95.median)},
          {"to_95_p90", Ratio(r.to_95.p90, base.to_95.p90)},
          {"to_99_median", Ratio(r.to_99.median, base.to_99.median)},
          {"to_99_p90", Ratio(r.to_99.p90, base.to_99.p90)}};
}

// A row: trials to 95%/99% (median / p90), their ratios to `base` when
// given, the score and the wall seconds.
void PrintRow(const std::string& label, const SimulationResult& r,
              const SimulationResult* base) {
  std::string ratios = "         n/a";
  if (base != nullptr) {
    ratios = absl::StrFormat("%6.3f %6.3f %7.3f %6.3f",
                             Ratio(r.to_95.median, base->to_95.median),
                             Ratio(r.to_95.p90, base->to_95.p90),
                             Ratio(r.to_99.median, base->to_99.median),
                             Ratio(r.to_99.p90, base->to_99.p90));
  }
  std::cout << absl::StrFormat(
      "  %-10s %7.1f %6.0f %7.1f %6.0f | %-28s | %6.3f %7.2f\n", label,
      r.to_95.median, r.to_95.p90, r.to_99.median, r.to_99.p90, ratios, r.score,
      r.wall_s);
}

void PrintHeader(const char* ratio_of) {
  std::cout << absl::StrFormat("  %-10s %14s %14s | %-28s | %6s %7s\n", "",
                               "to 95%", "to 99%",
                               absl::StrCat("ratio to ", ratio_of), "", "");
  std::cout << absl::StrFormat(
      "  %-10s %7s %6s %7s %6s | %6s %6s %7s %6s | %6s %7s\n", "strategy",
      "median", "p90", "median", "p90", "95med", "95p90", "99med", "99p90",
      "score", "wall s");
}

// Random search's exact figures (infinitely many seeds) as a result row.
SimulationResult ExactRandom(const search_space::Table& t) {
  SimulationResult r;
  r.strategy = tunefleet::v1::STRATEGY_RANDOM;
  r.to_95 = search::ExactRandomTrials(t, 0.95);
  r.to_99 = search::ExactRandomTrials(t, 0.99);
  r.score = std::numeric_limits<double>::quiet_NaN();
  return r;
}

json TableJson(const Run& run) {
  json j = {{"table", run.name},           {"configs", run.table->rows.size()},
            {"format", run.table->format}, {"best_ms", run.table->best_time_ms},
            {"seeds", run.options.seeds},  {"trials", run.options.trials},
            {"batch", run.options.batch}};
  const SimulationResult* random =
      Find(run.results, tunefleet::v1::STRATEGY_RANDOM);
  const SimulationResult* xgb = Find(run.results, tunefleet::v1::STRATEGY_XGB);
  json strategies = json::array();
  for (const SimulationResult& r : run.results) {
    json s = cli::SimulationJson(r);
    if (random != nullptr) s["ratio_to_random"] = RatiosJson(r, *random);
    strategies.push_back(std::move(s));
  }
  j["strategies"] = std::move(strategies);
  const SimulationResult exact = ExactRandom(*run.table);
  j["random_exact"] = {
      {"trials_to_95",
       {{"median", exact.to_95.median}, {"p90", exact.to_95.p90}}},
      {"trials_to_99",
       {{"median", exact.to_99.median}, {"p90", exact.to_99.p90}}}};
  if (random != nullptr && xgb != nullptr) {
    const std::string at_95 = QuarterRule(xgb->to_95, random->to_95);
    const std::string at_99 = QuarterRule(xgb->to_99, random->to_99);
    j["quarter_rule"] = {{"to_95", at_95},
                         {"to_99", at_99},
                         {"met", at_95 != "not met" && at_99 != "not met"}};
  }
  return j;
}

void PrintTable(const Run& run) {
  const search_space::Table& t = *run.table;
  const SimulationResult& first = run.results.front();
  std::cout << absl::StrFormat(
      "\n%s\n  %zu configs (%s), best %.4g ms; %d seeds x %zu trials, batch "
      "%zu (never reached counts %zu); score over trials %zu..%zu\n",
      run.name, t.rows.size(), t.format, t.best_time_ms, run.options.seeds,
      run.options.trials, run.options.batch, run.options.trials + 1,
      first.score_range.first, first.score_range.last);
  PrintHeader("random");
  const SimulationResult* random =
      Find(run.results, tunefleet::v1::STRATEGY_RANDOM);
  for (const SimulationResult& r : run.results) {
    PrintRow(std::string(contract::StrategyName(r.strategy)), r, random);
  }
  const SimulationResult exact = ExactRandom(t);
  PrintRow("rnd exact", exact, random);
  const SimulationResult* xgb = Find(run.results, tunefleet::v1::STRATEGY_XGB);
  if (random == nullptr || xgb == nullptr) return;
  for (const auto& [label, base] :
       {std::pair{"random's", random}, std::pair{"exact random's", &exact}}) {
    const std::string at_95 = QuarterRule(xgb->to_95, base->to_95);
    const std::string at_99 = QuarterRule(xgb->to_99, base->to_99);
    std::cout << absl::StrFormat(
        "  quarter rule (xgb median and p90 <= 1/4 of %s): %s (95%%: %s, "
        "99%%: %s)\n",
        label, at_95 != "not met" && at_99 != "not met" ? "MET" : "NOT MET",
        at_95, at_99);
  }
}

// Transfer to run `i` from the other runs of its kernel: xgb cold (the
// strategy run's own xgb result) against xgb with their records as
// history. nullopt when there is no other table of the kernel or no xgb
// result. Errors: the simulation's.
absl::StatusOr<std::optional<json>> Transfer(const std::vector<Run>& runs,
                                             size_t i, bool print) {
  const Run& run = runs[i];
  const SimulationResult* cold = Find(run.results, tunefleet::v1::STRATEGY_XGB);
  const std::string kernel = KernelOf(*run.table);
  if (cold == nullptr || kernel.empty()) return std::nullopt;
  std::vector<search_space::Table> others;
  std::vector<std::string> names;
  for (size_t j = 0; j < runs.size(); ++j) {
    if (j != i && KernelOf(*runs[j].table) == kernel) {
      others.push_back(*runs[j].table);
      names.push_back(runs[j].name);
    }
  }
  if (others.empty()) return std::nullopt;
  TUNEFLEET_ASSIGN_OR_RETURN(
      std::vector<SimulationResult> warm,
      cli::SimulateTable(*run.table, others, {tunefleet::v1::STRATEGY_XGB},
                         run.options));
  if (print) {
    std::cout << absl::StrFormat("\ntransfer to %s (%s) from %s:\n", run.name,
                                 kernel, absl::StrJoin(names, ", "));
    PrintHeader("cold");
    PrintRow("xgb cold", *cold, nullptr);
    PrintRow("xgb warm", warm[0], cold);
  }
  return json{{"table", run.name},
              {"kernel", kernel},
              {"history", names},
              {"cold", cli::SimulationJson(*cold)},
              {"warm", cli::SimulationJson(warm[0])},
              {"ratio_warm_to_cold", RatiosJson(warm[0], *cold)}};
}

int Main(int argc, char** argv) {
  CLI::App app{"search strategies compared on recorded tables"};
  size_t trials = 0;
  bool as_json = false;
  search::SimulationOptions options;
  options.seeds = 20;
  std::vector<std::string> tables;
  // Every option's --help shows its default.
  app.option_defaults()->always_capture_default();
  app.add_option("--trials", trials,
                 "trial budget per seed (0: each table's size)");
  app.add_option("--seeds", options.seeds,
                 "seeds per strategy (the quarter rule needs >= 20)");
  app.add_option("--batch", options.batch, "configs per round");
  std::string strategy_list = "all";
  app.add_option("--strategies", strategy_list,
                 "strategies, comma-separated, or 'all'");
  app.add_flag("--json", as_json, "one JSON object on stdout");
  app.option_defaults()->always_capture_default(false);
  app.add_option("tables", tables, "table files (default: tests/data/tables)");
  CLI11_PARSE(app, argc, argv);
  const std::vector<std::string> strategy_names =
      absl::StrSplit(strategy_list, ',', absl::SkipEmpty());
  std::vector<Strategy> strategies;
  if (strategy_names.size() == 1 && strategy_names[0] == "all") {
    strategies = search::AllStrategies();
  } else {
    for (const std::string& name : strategy_names) {
      absl::StatusOr<Strategy> s = contract::ParseStrategy(name);
      if (!s.ok()) {
        std::cerr << s.status().message() << "\n";
        return 1;
      }
      strategies.push_back(*s);
    }
  }
  if (strategies.empty()) {
    std::cerr << "no strategy given\n";
    return 1;
  }
  if (tables.empty()) {
    for (const auto& e : std::filesystem::directory_iterator(
             std::string(TUNEFLEET_SOURCE_DIR) + "/tests/data/tables")) {
      tables.push_back(e.path().string());
    }
    std::sort(tables.begin(), tables.end());
  }
  std::vector<search_space::Table> loaded;
  for (const std::string& path : tables) {
    absl::StatusOr<search_space::Table> table = search_space::LoadTable(path);
    if (!table.ok()) {
      std::cerr << table.status().message() << "\n";
      return 1;
    }
    loaded.push_back(*std::move(table));
  }
  std::vector<Run> runs(loaded.size());
  json out = {{"tables", json::array()}, {"transfer", json::array()}};
  for (size_t i = 0; i < loaded.size(); ++i) {
    Run& run = runs[i];
    run.name = std::filesystem::path(tables[i]).filename().string();
    run.table = &loaded[i];
    run.options = options;
    run.options.trials = trials > 0 ? trials : loaded[i].rows.size();
    absl::StatusOr<std::vector<SimulationResult>> results =
        cli::SimulateTable(loaded[i], {}, strategies, run.options);
    if (!results.ok()) {
      std::cerr << run.name << ": " << results.status().message() << "\n";
      return 1;
    }
    run.results = *std::move(results);
    if (as_json) {
      out["tables"].push_back(TableJson(run));
    } else {
      PrintTable(run);
    }
  }
  for (size_t i = 0; i < runs.size(); ++i) {
    absl::StatusOr<std::optional<json>> transfer = Transfer(runs, i, !as_json);
    if (!transfer.ok()) {  // e.g. a history table without the same knobs
      std::cerr << runs[i].name
                << ": transfer skipped: " << transfer.status().message()
                << "\n";
      continue;
    }
    if (transfer->has_value()) out["transfer"].push_back(**transfer);
  }
  if (as_json) std::cout << out.dump(2) << "\n";
  return 0;
}

}  // namespace
}  // namespace tunefleet::bench

int main(int argc, char** argv) { return tunefleet::bench::Main(argc, argv); }
