// Model-based search after AutoTVM's XGBTuner (Chen et al., "Learning to
// Optimize Tensor Programs", NeurIPS 2018). An XGBoost rank:pairwise model is
// fitted on the job's results (and on earlier tasks' results, when given:
// transfer learning) and refitted as results arrive. Candidates are every
// unmeasured config when the space is small, else the best found by
// annealing walks over the model's predictions. Each batch takes the
// best-ranked candidates, traded off against novelty of their knob values
// so a batch is not N near-copies of one config, plus an epsilon share of
// random picks. Failed trials count as the worst configs.
#ifndef TUNEFLEET_SEARCH_XGB_SEARCH_H_
#define TUNEFLEET_SEARCH_XGB_SEARCH_H_

#include <vector>

#include "cost_model/xgb_ranker.h"
#include "search/strategy.h"

namespace tunefleet::search {

class XgbSearch : public SearchStrategy {
 public:
  // Annealing over the model (AutoTVM's SimulatedAnnealingOptimizer uses
  // 128 walkers and up to 500 steps; fewer steps suffice here).
  static constexpr size_t kWalkers = 128;
  static constexpr int kWalkSteps = 100;
  static constexpr int kWalkPatience = 20;  // steps without a new top pick

  XgbSearch(const SearchSpace& space, StrategyOptions options);

  std::vector<uint64_t> Propose(size_t max_count) override;
  void Observe(const std::vector<Measurement>& results) override;

  // Fits done so far (for tests and progress).
  int fits() const { return fits_; }

 private:
  // Refits when enough new results arrived; false when no model is usable.
  bool MaybeRefit();
  // Unproposed configs to choose from, with their predicted scores, best
  // first: all of them in small spaces, else the walks' best `want`.
  std::vector<std::pair<float, uint64_t>> Candidates(size_t want);
  std::vector<std::pair<float, uint64_t>> ScoreAll();
  std::vector<std::pair<float, uint64_t>> Walk(size_t want);
  std::vector<float> Predict(const std::vector<uint64_t>& indices);
  // Picks `count` of the ranked candidates for rank and knob diversity.
  std::vector<uint64_t> PickDiverse(
      const std::vector<std::pair<float, uint64_t>>& ranked, size_t count);

  const SearchSpace& space_;
  StrategyOptions options_;
  ProposalSet proposals_;
  cost_model::XgbRanker model_;
  std::vector<Measurement> measurements_;
  size_t observed_at_fit_ = 0;
  int fits_ = 0;
};

}  // namespace tunefleet::search

#endif  // TUNEFLEET_SEARCH_XGB_SEARCH_H_
