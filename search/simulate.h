// Simulation: a fully measured table replaces the
// device, so strategies are compared deterministically and fast. Each seed
// runs one strategy for a trial budget in batches; the figure of merit is
// the number of trials until the best measured config is within 5% (and
// 1%) of the table's best throughput, and the performance score of
// search/score.h (0 = random search, 1 = the optimum from the first trial).
#ifndef TUNEFLEET_SEARCH_SIMULATE_H_
#define TUNEFLEET_SEARCH_SIMULATE_H_

#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "search/score.h"
#include "search/strategy.h"
#include "search_space/table.h"

namespace tunefleet::search {

struct SimulationOptions {
  tunefleet::v1::Strategy strategy = tunefleet::v1::STRATEGY_XGB;
  size_t trials = 300;  // budget per seed
  int seeds = 50;       // seeds first_seed .. first_seed + seeds - 1
  uint64_t first_seed = 1;
  size_t batch = 8;  // configs proposed and measured per round
  int threads = 0;   // 0: one per hardware thread
  // Features and transfer history, as for a job (default: knob features).
  std::function<std::vector<float>(uint64_t index)> features;
  std::vector<HistoryGroup> history;
};

// Trials to reach a target over the seeds. A seed that never reaches it
// counts as budget + 1.
struct TrialsToTarget {
  std::vector<size_t> per_seed;
  double median = 0;
  double p90 = 0;  // nearest-rank 90th percentile
};

struct SimulationResult {
  tunefleet::v1::Strategy strategy = tunefleet::v1::STRATEGY_XGB;
  int seeds = 0;
  size_t trials = 0;
  TrialsToTarget to_95;  // best time <= table best / 0.95
  TrialsToTarget to_99;  // best time <= table best / 0.99
  // The performance score (search/score.h) over `score_range`: the
  // methodology's range of trials clamped to the budget. NaN when the
  // budget ends before the range starts.
  double score = 0;
  ScoreRange score_range;
  double wall_s = 0;
};

// Runs `options.seeds` seeds of one strategy, each until it reached 99% of
// the best and the end of the score's range (or its budget, or the space,
// ran out). Deterministic for given options, whatever the thread count.
// Errors: INVALID_ARGUMENT for zero trials, seeds or batch.
absl::StatusOr<SimulationResult> Simulate(const search_space::Table& table,
                                          const SimulationOptions& options);

// Median and nearest-rank 90th percentile of `values`.
TrialsToTarget Summarize(std::vector<size_t> values);

}  // namespace tunefleet::search

#endif  // TUNEFLEET_SEARCH_SIMULATE_H_
