// Benchmark (not a test): what one refit of the xgb search's model costs
// with a large transfer history, against the single model that trained on
// history and own results together (the design before the history prior).
//
//   model_refit [--history-rows 10000] [--own 100,500,1000] [--repeats 5]
//               [TABLE ...]
// History rows come from the given tables (knob features; the tables must
// share their knobs, e.g. one kernel on several devices), drawn with
// repetition up to --history-rows; without tables, from a synthetic smooth
// 6-knob task. Own results are drawn from the first table (or the synthetic
// task). Times are medians over --repeats, in ms, on one thread.
#include <chrono>
#include <cmath>
#include <iostream>
#include <random>

#include "CLI/CLI.hpp"
#include "absl/strings/str_format.h"
#include "base/stats.h"
#include "cost_model/features.h"
#include "cost_model/rank_ensemble.h"
#include "cost_model/xgb_ranker.h"
#include "search/history_prior.h"
#include "search/strategy.h"
#include "search_space/table.h"

namespace tunefleet::bench {
namespace {

using Rows = search::HistoryGroup;  // features and labels

// A smooth synthetic task over 6 size-like knobs of 8 values each.
Rows SyntheticRows() {
  Rows out;
  std::mt19937_64 rng(7);
  std::uniform_int_distribution<int> exp(0, 7);
  for (int r = 0; r < 32768; ++r) {
    std::vector<int64_t> v;
    double cost = 1;
    for (int k = 0; k < 6; ++k) {
      const int e = exp(rng);
      v.push_back(int64_t{1} << e);
      cost += (e - 3 - k % 2) * (e - 3 - k % 2) * (0.2 + 0.1 * k);
    }
    out.features.AddRow(
        cost_model::KnobFeatures(v, std::vector<bool>(6, true)));
    out.labels.push_back(static_cast<float>(1.0 / cost));
  }
  return out;
}

// `n` rows drawn with repetition from `from`.
Rows Draw(const Rows& from, size_t n, uint64_t seed) {
  Rows out;
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<size_t> pick(0, from.labels.size() - 1);
  for (size_t i = 0; i < n; ++i) {
    const size_t r = pick(rng);
    out.features.AddRow(from.features.Row(r));
    out.labels.push_back(from.labels[r]);
  }
  return out;
}

template <typename F>
double MedianMs(int repeats, F&& f) {
  std::vector<double> ms;
  for (int i = 0; i < repeats; ++i) {
    const auto start = std::chrono::steady_clock::now();
    f();
    ms.push_back(std::chrono::duration<double, std::milli>(
                     std::chrono::steady_clock::now() - start)
                     .count());
  }
  return base::Median(ms);
}

int Main(int argc, char** argv) {
  CLI::App app{"cost of one xgb model refit with a transfer history"};
  size_t history_rows = 10000;
  std::vector<size_t> own_sizes = {100, 500, 1000};
  int repeats = 5;
  std::vector<std::string> tables;
  app.add_option("--history-rows", history_rows, "history rows")
      ->capture_default_str();
  app.add_option("--own", own_sizes, "own result counts to time")
      ->delimiter(',');
  app.add_option("--repeats", repeats, "timings per figure (median)")
      ->capture_default_str();
  app.add_option("tables", tables, "tables sharing their knobs");
  CLI11_PARSE(app, argc, argv);

  Rows pool;
  Rows own_pool;
  for (const std::string& path : tables) {
    absl::StatusOr<search_space::Table> t = search_space::LoadTable(path);
    if (!t.ok()) {
      std::cerr << t.status().message() << "\n";
      return 1;
    }
    Rows rows = search::TableHistory(*t);
    if (own_pool.labels.empty()) own_pool = rows;
    pool.features.data.insert(pool.features.data.end(),
                              rows.features.data.begin(),
                              rows.features.data.end());
    pool.features.cols = rows.features.cols;
    pool.features.rows += rows.features.rows;
    pool.labels.insert(pool.labels.end(), rows.labels.begin(),
                       rows.labels.end());
  }
  if (pool.labels.empty()) pool = own_pool = SyntheticRows();
  const Rows history = Draw(pool, history_rows, 1);
  search::StrategyOptions defaults;  // the xgb search's own settings

  std::cout << absl::StrFormat(
      "history: %zu rows x %zu features (%s); ensemble of %d, %d rounds, "
      "prior on at most %zu rows; medians of %d\n",
      history.labels.size(), history.features.cols,
      tables.empty() ? "synthetic" : "from tables", defaults.ensemble,
      defaults.xgb.rounds, defaults.history_rows, repeats);
  const double prior_ms = MedianMs(repeats, [&] {
    search::HistoryPrior prior({history}, defaults.xgb, defaults.history_rows);
  });
  std::cout << absl::StrFormat("prior fit, once per job: %.1f ms\n\n",
                               prior_ms);
  search::HistoryPrior prior({history}, defaults.xgb, defaults.history_rows);
  std::cout << absl::StrFormat("%10s %16s %22s %10s\n", "own rows",
                               "refit now (ms)", "one model, all rows (ms)",
                               "ratio");
  for (size_t n : own_sizes) {
    const Rows own = Draw(own_pool, n, 2 + n);
    const double now = MedianMs(repeats, [&] {
      cost_model::RankEnsemble ensemble(defaults.xgb, defaults.ensemble);
      (void)ensemble.Fit(own.features, own.labels);
      prior.UpdateWeight(own.features, own.labels);
    });
    // The design before: one model on history groups plus the own group.
    cost_model::FeatureMatrix all = history.features;
    std::vector<float> labels = history.labels;
    all.data.insert(all.data.end(), own.features.data.begin(),
                    own.features.data.end());
    all.rows += own.features.rows;
    labels.insert(labels.end(), own.labels.begin(), own.labels.end());
    const std::vector<unsigned> groups = {
        static_cast<unsigned>(history.labels.size()), static_cast<unsigned>(n)};
    const double before = MedianMs(repeats, [&] {
      cost_model::XgbRanker model(defaults.xgb);
      (void)model.Fit(all, labels, groups);
    });
    std::cout << absl::StrFormat("%10zu %16.1f %22.1f %9.2fx\n", n, now, before,
                                 before / now);
  }
  return 0;
}

}  // namespace
}  // namespace tunefleet::bench

int main(int argc, char** argv) { return tunefleet::bench::Main(argc, argv); }
