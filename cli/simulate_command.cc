#include "cli/simulate_command.h"

#include <iostream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "base/files.h"
#include "base/status_macros.h"
#include "cli/common.h"
#include "contract/names.h"
#include "cost_model/features.h"
#include "search/history_prior.h"
#include "search_space/task_features.h"
#include "store/store.h"
#include "store/table_export.h"

namespace tunefleet::cli {
namespace {

using search_space::Table;

// Feature rows of a history table in the main table's feature layout:
// the task's features when both tables name their task, else knob values
// matched by knob name.
absl::StatusOr<search::HistoryGroup> HistoryFromTable(const Table& main,
                                                      const Table& history,
                                                      bool task_features) {
  std::unique_ptr<search_space::SearchSpace> space = history.MakeSpace();
  std::function<std::vector<float>(uint64_t)> features;
  if (task_features) {
    absl::StatusOr<search_space::TaskFeatures> task =
        search_space::TableTaskFeatures(history);
    if (!task.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "history table: ", task.status().message(),
          " (the simulated table names its task, so must its history)"));
    }
    TUNEFLEET_ASSIGN_OR_RETURN(features,
                               search_space::SpaceFeatures(*space, *task));
  } else {
    std::vector<size_t> where;  // main knob i -> history knob position
    std::vector<bool> size_like;
    for (const search_space::KnobSpec& k : main.knobs) {
      size_t pos = 0;
      while (pos < history.knobs.size() && history.knobs[pos].name != k.name) {
        ++pos;
      }
      if (pos == history.knobs.size()) {
        return absl::InvalidArgumentError(
            absl::StrCat("history table has no knob ", k.name));
      }
      where.push_back(pos);
      size_like.push_back(k.size_like);
    }
    features = [&space, where, size_like](uint64_t index) {
      const std::vector<int64_t> values = space->Config(index);
      std::vector<int64_t> ordered;
      for (size_t pos : where) ordered.push_back(values[pos]);
      return cost_model::KnobFeatures(ordered, size_like);
    };
  }
  return search::TableHistory(history, features);
}

}  // namespace

absl::StatusOr<std::vector<search::SimulationResult>> SimulateTable(
    const Table& table, const std::vector<Table>& history,
    const std::vector<tunefleet::v1::Strategy>& strategies,
    search::SimulationOptions options) {
  std::unique_ptr<search_space::SearchSpace> space = table.MakeSpace();
  absl::StatusOr<search_space::TaskFeatures> task =
      search_space::TableTaskFeatures(table);
  const bool task_features = task.ok();
  if (!task.ok() && !absl::IsNotFound(task.status())) return task.status();
  if (task_features) {
    TUNEFLEET_ASSIGN_OR_RETURN(options.features,
                               search_space::SpaceFeatures(*space, *task));
  }
  for (const Table& h : history) {
    TUNEFLEET_ASSIGN_OR_RETURN(search::HistoryGroup group,
                               HistoryFromTable(table, h, task_features));
    options.history.push_back(std::move(group));
  }
  std::vector<search::SimulationResult> results;
  for (tunefleet::v1::Strategy s : strategies) {
    options.strategy = s;
    TUNEFLEET_ASSIGN_OR_RETURN(search::SimulationResult r,
                               search::Simulate(table, options));
    results.push_back(std::move(r));
  }
  return results;
}

nlohmann::json SimulationJson(const search::SimulationResult& r) {
  return {{"strategy", contract::StrategyName(r.strategy)},
          {"seeds", r.seeds},
          {"trials", r.trials},
          {"trials_to_95", {{"median", r.to_95.median}, {"p90", r.to_95.p90}}},
          {"trials_to_99", {{"median", r.to_99.median}, {"p90", r.to_99.p90}}},
          {"score", r.score},
          {"score_trials",
           {{"first", r.score_range.first}, {"last", r.score_range.last}}},
          {"wall_s", r.wall_s}};
}

void AddSimulateOptions(CLI::App* cmd, SimulateOptions& o) {
  cmd->add_option("--table", o.table,
                  "table: tunefleet CSV/JSON, Kernel Tuner cache, or CLBlast "
                  "tuner JSON")
      ->required();
  cmd->add_option("--strategy", o.strategies,
                  "strategies (grid, random, sa, ga, xgb; comma-separated "
                  "or 'all')")
      ->delimiter(',')
      ->capture_default_str();
  cmd->add_option("--trials", o.trials, "trial budget per seed")
      ->capture_default_str();
  cmd->add_option("--seeds", o.seeds, "seeds to run")->capture_default_str();
  cmd->add_option("--batch", o.batch, "configs measured per round")
      ->capture_default_str();
  cmd->add_option("--history", o.history,
                  "tables of earlier tasks the xgb model starts from");
  cmd->add_option("--threads", o.threads, "worker threads (0: all cores)");
  cmd->add_flag("--json", o.json,
                "JSON: one object for one strategy, a list for several");
}

int RunSimulate(const SimulateOptions& o) {
  absl::StatusOr<Table> table = search_space::LoadTable(o.table);
  if (!table.ok()) return ReportError("simulate", table.status());
  std::vector<Table> history;
  for (const std::string& path : o.history) {
    absl::StatusOr<Table> h = search_space::LoadTable(path);
    if (!h.ok()) return ReportError("simulate", h.status());
    history.push_back(*std::move(h));
  }
  std::vector<tunefleet::v1::Strategy> strategies;
  if (o.strategies.size() == 1 && o.strategies[0] == "all") {
    strategies = search::AllStrategies();
  } else {
    for (const std::string& name : o.strategies) {
      absl::StatusOr<tunefleet::v1::Strategy> s = contract::ParseStrategy(name);
      if (!s.ok()) return ReportError("simulate", s.status());
      strategies.push_back(*s);
    }
  }
  if (strategies.empty()) {
    return ReportError("simulate",
                       absl::InvalidArgumentError("no strategy given"));
  }
  search::SimulationOptions options;
  options.trials = o.trials;
  options.seeds = o.seeds;
  options.batch = o.batch;
  options.threads = o.threads;
  auto results = SimulateTable(*table, history, strategies, options);
  if (!results.ok()) return ReportError("simulate", results.status());
  if (o.json) {
    if (results->size() == 1) {
      std::cout << JsonText(SimulationJson(results->front())) << "\n";
    } else {
      nlohmann::json list = nlohmann::json::array();
      for (const auto& r : *results) list.push_back(SimulationJson(r));
      std::cout << JsonText(list) << "\n";
    }
    return kExitOk;
  }
  std::cout << absl::StrFormat(
      "%s: %zu configs (%s), best %.4g ms; %d seeds x %zu trials, batch %zu\n",
      o.table, table->rows.size(), table->format, table->best_time_ms, o.seeds,
      o.trials, o.batch);
  std::cout << absl::StrFormat("%-8s %12s %9s %12s %9s %7s %8s\n", "strategy",
                               "to 95% med", "p90", "to 99% med", "p90",
                               "score", "wall s");
  for (const auto& r : *results) {
    std::cout << absl::StrFormat("%-8s %12.1f %9.0f %12.1f %9.0f %7.3f %8.2f\n",
                                 contract::StrategyName(r.strategy),
                                 r.to_95.median, r.to_95.p90, r.to_99.median,
                                 r.to_99.p90, r.score, r.wall_s);
  }
  std::cout << "(a seed that never reaches the target counts " << o.trials + 1
            << "; score: 0 = random search, 1 = the best from trial 1, over "
               "trials "
            << results->front().score_range.first << ".."
            << results->front().score_range.last << ")\n";
  return kExitOk;
}

void AddExportOptions(CLI::App* cmd, ExportOptions& o) {
  AddDbOption(cmd, o.db, "database file");
  cmd->add_option("--job", o.job, "job id")->required();
  cmd->add_option("--out", o.out, "output file (default: stdout)");
}

int RunExport(const ExportOptions& o) {
  auto store = OpenDatabase(o.db);
  if (!store.ok()) return ReportError("export", store.status());
  absl::StatusOr<std::string> csv = store::ExportJobTable(**store, o.job);
  if (!csv.ok()) return ReportError("export", csv.status());
  if (o.out.empty()) {
    std::cout << *csv;
    return kExitOk;
  }
  // Fleet data: readable by its owner only, as the database is, and whole
  // or not there (no half-written table).
  if (absl::Status s = base::WriteFileAtomically(o.out, *csv, 0600); !s.ok()) {
    return ReportError("export", s);
  }
  return kExitOk;
}

}  // namespace tunefleet::cli
