// Search strategies share one interface (docs/ARCHITECTURE.md, Search and cost
// model): propose the next configs, take measured results. A job runner
// alternates the two; a simulator does the same against a recorded table.
#ifndef TUNEFLEET_SEARCH_STRATEGY_H_
#define TUNEFLEET_SEARCH_STRATEGY_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "cost_model/xgb_ranker.h"
#include "search_space/space.h"
#include "tunefleet/v1/tuning.pb.h"

namespace tunefleet::search {

// A measured trial as a strategy sees it: which config, and how fast.
struct Observation {
  uint64_t index = 0;
  bool ok = false;       // false: any error; counts as the worst config
  double time_ns = 0.0;  // kernel time when ok
};

// Results of an earlier task, for transfer learning: feature rows (from the
// same feature function as the new task's) and their labels (relative
// throughput within that task, 0 for failures).
struct HistoryGroup {
  cost_model::FeatureMatrix features;
  std::vector<float> labels;
};

struct StrategyOptions {
  uint64_t seed = 0;
  // Trials the caller expects to run (sa: length of the temperature
  // schedule).
  size_t budget_hint = 1000;
  // xgb: share of each batch picked uniformly at random, beside the
  // ensemble's own exploration.
  double epsilon = 0.05;
  // xgb: random picks until this many results are in (unless history
  // trains a prior before the first result).
  size_t min_train = 8;
  // xgb: refit once max(refit_every, refit_growth * results) new results
  // arrived since the last fit (refits thin out as results grow).
  size_t refit_every = 4;
  double refit_growth = 0.05;
  // xgb: models in the bootstrap ensemble (1: no uncertainty estimate).
  int ensemble = 8;
  // xgb: share of the model's picks among the one-knob neighbours of the
  // best measured config (local refinement).
  double local_share = 0.25;
  // xgb: score every unproposed config when there are at most this many;
  // above, a random sample of this many plus the best config's
  // neighbours; spaces too big to list are searched by annealing walks.
  size_t pool_limit = 2048;
  // xgb: weight of novelty (knob values not yet in the batch) against
  // predicted rank when the history prior picks before any own result.
  double diversity = 0.5;
  // xgb: history rows the prior trains on, at most (a uniform sample).
  size_t history_rows = 4096;
  // xgb: earlier tasks' results (transfer learning).
  std::vector<HistoryGroup> history;
  // Features of a config; default: cost_model::KnobFeatures of its values.
  std::function<std::vector<float>(uint64_t index)> features;
  cost_model::XgbOptions xgb;
};

// Not thread-safe; one job (or simulation) drives it. The space must
// outlive the strategy.
class SearchStrategy {
 public:
  virtual ~SearchStrategy() = default;
  // Up to `max_count` valid configs never proposed before; fewer once the
  // space is exhausted.
  virtual std::vector<uint64_t> Propose(size_t max_count) = 0;
  // Results of earlier proposals, in any order and grouping.
  virtual void Observe(const std::vector<Observation>& results) = 0;
};

// The strategies are the contract's (tunefleet.v1.Strategy; their names,
// "grid", "random", "sa", "ga", "xgb", are contract/names.h's):
// STRATEGY_GRID every valid config in index order; STRATEGY_RANDOM uniform
// sampling without replacement; STRATEGY_SA simulated annealing over
// one-step neighbours; STRATEGY_GA a genetic algorithm over knob values;
// STRATEGY_XGB (also STRATEGY_UNSPECIFIED) the XGBoost cost model and
// diverse batches (AutoTVM's XGBTuner).
// Every strategy MakeStrategy() builds, in that order.
std::vector<tunefleet::v1::Strategy> AllStrategies();

// The default feature function over `space` (which must outlive it):
// cost_model::KnobFeatures of each config's knob values.
std::function<std::vector<float>(uint64_t index)> KnobFeatureFunction(
    const search_space::SearchSpace& space);

std::unique_ptr<SearchStrategy> MakeStrategy(
    tunefleet::v1::Strategy strategy, const search_space::SearchSpace& space,
    StrategyOptions options);

// A strategy a job steers: configs given to Suggest() are proposed first
// (a model job's sibling task's best config), and configs proposed once --
// suggested, or in `already_proposed` (trials of a stopped run) -- are never
// proposed again by the wrapped strategy. Every result goes to the wrapped
// strategy through Observe() as usual.
class GuidedStrategy : public SearchStrategy {
 public:
  GuidedStrategy(std::unique_ptr<SearchStrategy> inner,
                 const std::vector<uint64_t>& already_proposed);
  // Queues `index` (a valid config of the space) for the next Propose();
  // false, and nothing queued, when it was proposed or queued before.
  bool Suggest(uint64_t index);
  std::vector<uint64_t> Propose(size_t max_count) override;
  void Observe(const std::vector<Observation>& results) override;

 private:
  std::unique_ptr<SearchStrategy> inner_;
  std::vector<uint64_t> suggested_;  // queued, oldest first
  // Proposed by this wrapper, or by the stopped run.
  absl::flat_hash_set<uint64_t> proposed_;
};

// Wraps a new strategy for a resumed job: configs in `already_proposed`
// (trials of the stopped run) are never proposed again. Their results are
// given to the strategy through Observe() as usual.
std::unique_ptr<SearchStrategy> ResumeStrategy(
    std::unique_ptr<SearchStrategy> inner,
    const std::vector<uint64_t>& already_proposed);

// The configs a strategy has proposed, and random draws among the rest:
// sampling without replacement over the valid configs.
class ProposalSet {
 public:
  ProposalSet(const search_space::SearchSpace& space, uint64_t seed);

  bool proposed(uint64_t index) const { return proposed_.contains(index); }
  void Mark(uint64_t index) { proposed_.insert(index); }
  size_t size() const { return proposed_.size(); }
  // A uniformly random valid config not proposed yet, now marked; nullopt
  // once none is left (or none found, for spaces too big to enumerate).
  std::optional<uint64_t> DrawRandom();
  // A random valid config differing from `index` in one knob (any other
  // value of it), not proposed yet; nullopt when `tries` draws found none.
  std::optional<uint64_t> RandomNeighbour(uint64_t index, int tries = 32);
  // Appends random draws to `out` until it holds `max_count` or the space
  // runs out.
  void FillRandom(size_t max_count, std::vector<uint64_t>* out);
  std::mt19937_64& rng() { return rng_; }

 private:
  const search_space::SearchSpace& space_;
  std::mt19937_64 rng_;
  absl::flat_hash_set<uint64_t> proposed_;
  std::vector<uint64_t> shuffled_;  // enumerable spaces: lazy Fisher-Yates
  size_t next_ = 0;
};

}  // namespace tunefleet::search

#endif  // TUNEFLEET_SEARCH_STRATEGY_H_
