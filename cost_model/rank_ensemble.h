// A bootstrap ensemble of XGBoost ranking models: the cost model's estimate
// of its own uncertainty. Member 0 trains on every row; each other member
// on a bootstrap resample of the rows (drawn with replacement, Efron 1979),
// so the members agree where the data pins the ranking down and disagree
// where it does not. Search draws one member per pick (Thompson sampling
// over the bootstrap, as in Osband et al., "Deep Exploration via
// Bootstrapped DQN", NeurIPS 2016) instead of a fixed share of random picks.
#ifndef TUNEFLEET_COST_MODEL_RANK_ENSEMBLE_H_
#define TUNEFLEET_COST_MODEL_RANK_ENSEMBLE_H_

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "cost_model/features.h"
#include "cost_model/xgb_ranker.h"

namespace tunefleet::cost_model {

// Not thread-safe. Move-only (owns its boosters).
class RankEnsemble {
 public:
  // `members` >= 1 models; member k trains with seed options.seed * 131 + k.
  RankEnsemble(XgbOptions options, int members);

  // Trains every member afresh on one query group of `x` rows with
  // `labels` (higher is better). Errors: INVALID_ARGUMENT for mismatched
  // sizes or no rows; INTERNAL from XGBoost. On error the previous members
  // stay in use.
  absl::Status Fit(const FeatureMatrix& x, const std::vector<float>& labels);

  // Scores of every row of `x` by the first `members` members (all when
  // negative): result[m][row], higher is predicted faster. Errors:
  // FAILED_PRECONDITION before a successful Fit(), INVALID_ARGUMENT for a
  // column count other than training's, INTERNAL from XGBoost.
  absl::StatusOr<std::vector<std::vector<float>>> PredictAll(
      const FeatureMatrix& x, int members = -1) const;

  int members() const { return static_cast<int>(models_.size()); }
  bool trained() const { return !models_.empty() && models_[0].trained(); }

 private:
  // options_ with member `member`'s seed.
  XgbOptions MemberOptions(size_t member) const;

  XgbOptions options_;
  std::vector<XgbRanker> models_;
  uint64_t draws_ = 0;  // resamples drawn so far (varies them per fit)
};

}  // namespace tunefleet::cost_model

#endif  // TUNEFLEET_COST_MODEL_RANK_ENSEMBLE_H_
