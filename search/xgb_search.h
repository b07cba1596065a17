// Model-based search after AutoTVM's XGBTuner (Chen et al., "Learning to
// Optimize Tensor Programs", NeurIPS 2018): an XGBoost rank:pairwise model
// fitted on the job's results scores unmeasured configs; each batch takes
// the best-scored ones plus an epsilon share of random picks. Failed trials
// count as the worst configs.
#ifndef TUNEFLEET_SEARCH_XGB_SEARCH_H_
#define TUNEFLEET_SEARCH_XGB_SEARCH_H_

#include <vector>

#include "cost_model/xgb_ranker.h"
#include "search/strategy.h"

namespace tunefleet::search {

class XgbSearch : public SearchStrategy {
 public:
  XgbSearch(const SearchSpace& space, StrategyOptions options);

  absl::string_view name() const override { return "xgb"; }
  std::vector<uint64_t> Propose(size_t max_count) override;
  void Observe(const std::vector<Observation>& results) override;

  // Fits done so far (for tests and progress).
  int fits() const { return fits_; }

 private:
  // Refits when enough new results arrived; false when no model is usable.
  bool MaybeRefit();
  // Unproposed configs to score: all of them, or a random pool.
  std::vector<uint64_t> CandidatePool();

  const SearchSpace& space_;
  StrategyOptions options_;
  ProposalSet proposals_;
  cost_model::XgbRanker model_;
  std::vector<Observation> observations_;
  size_t observed_at_fit_ = 0;
  int fits_ = 0;
};

}  // namespace tunefleet::search

#endif  // TUNEFLEET_SEARCH_XGB_SEARCH_H_
