#include "search/simulate.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <limits>
#include <thread>

#include "absl/strings/str_cat.h"
#include "base/stats.h"

namespace tunefleet::search {
namespace {

struct SeedResult {
  size_t to_95 = 0;
  size_t to_99 = 0;
  // best_so_far[m - 1]: the best time in ms after m trials (+inf before
  // the first success).
  std::vector<double> best_so_far;
};

// One seed: propose in batches, answer from the table, note when the best
// so far crosses each target and the best after every trial, up to
// `score_end` trials at least.
SeedResult RunSeed(
    const search_space::Table& table, const search_space::SearchSpace& space,
    const absl::flat_hash_map<uint64_t, const search_space::Table::Row*>& rows,
    const SimulationOptions& o, uint64_t seed, size_t score_end) {
  StrategyOptions options;
  options.seed = seed;
  options.xgb.seed = seed;
  options.budget_hint = o.trials;
  options.features = o.features;
  options.history = o.history;
  std::unique_ptr<SearchStrategy> strategy =
      MakeStrategy(o.strategy, space, std::move(options));
  const double target_95 = table.best_time_ms / 0.95;
  const double target_99 = table.best_time_ms / 0.99;
  SeedResult r{o.trials + 1, o.trials + 1, {}};
  double best = 0;
  size_t trials = 0;
  while (trials < o.trials) {
    std::vector<uint64_t> proposed =
        strategy->Propose(std::min(o.batch, o.trials - trials));
    if (proposed.empty()) break;
    std::vector<Observation> results;
    for (uint64_t i : proposed) {
      ++trials;
      const search_space::Table::Row* row = rows.at(i);
      results.push_back({i, row->ok, row->ok ? row->time_ms * 1e6 : 0});
      if (row->ok && (best == 0 || row->time_ms < best)) best = row->time_ms;
      if (best > 0 && best <= target_95 && r.to_95 > o.trials) r.to_95 = trials;
      if (best > 0 && best <= target_99 && r.to_99 > o.trials) r.to_99 = trials;
      r.best_so_far.push_back(
          best > 0 ? best : std::numeric_limits<double>::infinity());
    }
    // Both targets reached (99% implies 95%) and the score's range covered,
    // or the table's best found (the score keeps a curve's last best):
    // later trials change nothing.
    if (r.to_99 <= o.trials &&
        (trials >= score_end || best <= table.best_time_ms)) {
      break;
    }
    strategy->Observe(results);
  }
  return r;
}

}  // namespace

TrialsToTarget Summarize(std::vector<size_t> values) {
  TrialsToTarget t;
  t.per_seed = values;
  const std::vector<double> v(values.begin(), values.end());
  t.median = base::Median(v);
  t.p90 = base::NearestRankPercentile(v, 90);
  return t;
}

absl::StatusOr<SimulationResult> Simulate(const search_space::Table& table,
                                          const SimulationOptions& o) {
  if (o.trials == 0 || o.seeds <= 0 || o.batch == 0) {
    return absl::InvalidArgumentError(
        "simulation needs trials, seeds and batch >= 1");
  }
  const auto start = std::chrono::steady_clock::now();
  std::unique_ptr<search_space::SearchSpace> space = table.MakeSpace();
  const auto rows = table.RowsByIndex();
  ScoreRange range = MethodologyRange(table);
  range.last = std::min(range.last, o.trials);
  std::vector<SeedResult> results(o.seeds);
  std::atomic<int> next{0};
  const int threads = std::max(
      1, std::min(o.seeds,
                  o.threads > 0
                      ? o.threads
                      : static_cast<int>(std::thread::hardware_concurrency())));
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&] {
      for (int s = next++; s < o.seeds; s = next++) {
        results[s] =
            RunSeed(table, *space, rows, o, o.first_seed + s, range.last);
      }
    });
  }
  for (std::thread& t : pool) t.join();

  SimulationResult out;
  out.strategy = o.strategy;
  out.seeds = o.seeds;
  out.trials = o.trials;
  std::vector<size_t> to_95, to_99;
  std::vector<std::vector<double>> curves;
  for (SeedResult& r : results) {
    to_95.push_back(r.to_95);
    to_99.push_back(r.to_99);
    curves.push_back(std::move(r.best_so_far));
  }
  out.to_95 = Summarize(std::move(to_95));
  out.to_99 = Summarize(std::move(to_99));
  out.score_range = range;
  out.score = PerformanceScore(table, curves, range);
  out.wall_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  return out;
}

}  // namespace tunefleet::search
