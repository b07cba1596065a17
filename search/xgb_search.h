// Model-based search after AutoTVM's XGBTuner (Chen et al., "Learning to
// Optimize Tensor Programs", NeurIPS 2018), with the model's uncertainty
// driving exploration (docs/ARCHITECTURE.md, Search and cost model).
//
//   results --> labels (best time / time; failures 0)
//           --> RankEnsemble: member 0 on all results, the others on
//               bootstrap resamples (rank:pairwise)
//   history --> HistoryPrior (trained once), blended in by its measured
//               rank correlation with this job's results
//   pool    --> every unproposed config (small spaces), a random sample plus
//               the best config's neighbours (large ones), or annealing
//               walks over the model (spaces too big to list)
//   batch   --> `local_share` of the picks: the one-knob neighbours of the
//               best measured config that the members rank highest on
//               average (local refinement); the rest: the top unproposed
//               config of one member per pick in turn over the pool
//               (Thompson sampling over the bootstrap); plus an `epsilon`
//               share of uniform random picks.
//
// Until `min_train` results are in, picks are random, or half of them the
// prior's top configs (chosen for knob diversity) when history is given.
#ifndef TUNEFLEET_SEARCH_XGB_SEARCH_H_
#define TUNEFLEET_SEARCH_XGB_SEARCH_H_

#include <memory>
#include <vector>

#include "cost_model/rank_ensemble.h"
#include "search/history_prior.h"
#include "search/strategy.h"

namespace tunefleet::search {

class XgbSearch : public SearchStrategy {
 public:
  // Annealing over the model in spaces too big to list (AutoTVM's
  // SimulatedAnnealingOptimizer uses 128 walkers and up to 500 steps; fewer
  // steps suffice here).
  static constexpr size_t kWalkers = 128;
  static constexpr int kWalkSteps = 100;
  static constexpr int kWalkPatience = 20;  // steps without a new top pick

  XgbSearch(const search_space::SearchSpace& space, StrategyOptions options);

  std::vector<uint64_t> Propose(size_t max_count) override;
  void Observe(const std::vector<Observation>& results) override;

  // Ensemble fits done so far (for tests and progress).
  int fits() const { return fits_; }
  // The history prior's current blend weight (0 without history).
  double prior_weight() const;

 private:
  // Per-member scores of `indices` (member 0's alone when `first_only`),
  // blended with the prior when it has weight; empty when no model is
  // usable.
  std::vector<std::vector<float>> Scores(const std::vector<uint64_t>& indices,
                                         bool first_only = false);
  // Refits when enough new results arrived; false when no model is usable.
  bool MaybeRefit();
  // Unproposed configs to choose among (see the header comment).
  std::vector<uint64_t> Pool();
  std::vector<uint64_t> Walk(size_t want);
  // Unproposed valid configs one knob away from the best measured one.
  std::vector<uint64_t> BestNeighbours();
  // Up to `count` of the top configs of `pool`: by one ensemble member per
  // pick in turn (`thompson`), else by the members' mean percentile rank.
  std::vector<uint64_t> TopPicks(const std::vector<uint64_t>& pool,
                                 size_t count, bool thompson);
  // The prior's top configs, traded off against knob diversity (AutoTVM's
  // submodular pick of a diverse plan).
  std::vector<uint64_t> PriorPicks(size_t count);

  const search_space::SearchSpace& space_;
  StrategyOptions options_;
  ProposalSet proposals_;
  cost_model::RankEnsemble ensemble_;
  std::unique_ptr<HistoryPrior> prior_;  // null without history
  std::vector<Observation> measurements_;
  // Features of measurements_, row for row (computed once, in Observe).
  cost_model::FeatureMatrix measured_features_;
  size_t observed_at_fit_ = 0;
  int fits_ = 0;
  size_t next_member_ = 0;  // Thompson sampling's member rotation
};

}  // namespace tunefleet::search

#endif  // TUNEFLEET_SEARCH_XGB_SEARCH_H_
