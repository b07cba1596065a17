// A gradient-boosted tree model that ranks configs, through libxgboost's C
// API (c_api.h). The default objective is XGBoost's "rank:pairwise", as in
// AutoTVM's XGBTuner: the search only needs the order of configs, not their
// times.
#ifndef TUNEFLEET_COST_MODEL_XGB_RANKER_H_
#define TUNEFLEET_COST_MODEL_XGB_RANKER_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "cost_model/features.h"

namespace tunefleet::cost_model {

struct XgbOptions {
  std::string objective = "rank:pairwise";
  int rounds = 30;    // boosting rounds per fit
  int max_depth = 4;  // AutoTVM uses 3; 4 suits our 9+ knobs
  double eta = 0.3;   // learning rate
  double min_child_weight = 1.0;
  double subsample = 1.0;
  uint64_t seed = 0;
  int nthread = 1;  // deterministic and cheap for a few hundred rows
  // XGBoost's tree_method: "exact" enumerates every split; "hist" bins
  // each feature first (cheaper from a few hundred rows on).
  std::string tree_method = "hist";
};

// Not thread-safe. Move-only; owns its booster.
class XgbRanker {
 public:
  explicit XgbRanker(XgbOptions options = {});
  ~XgbRanker();
  XgbRanker(XgbRanker&&) noexcept;
  XgbRanker& operator=(XgbRanker&&) noexcept;

  // Trains a fresh model on `x` with `labels` (higher is better). Rows
  // form consecutive query groups of `group_sizes` rows (pairs are only
  // compared within a group: one group per task); empty: one group.
  // Errors: INVALID_ARGUMENT for mismatched sizes or no rows, INTERNAL with
  // XGBoost's message when training fails.
  absl::Status Fit(const FeatureMatrix& x, const std::vector<float>& labels,
                   const std::vector<unsigned>& group_sizes = {});

  // Scores rows of `x` (higher: predicted faster). Errors:
  // FAILED_PRECONDITION before Fit(), INVALID_ARGUMENT when the column count
  // differs from training, INTERNAL from XGBoost.
  absl::StatusOr<std::vector<float>> Predict(const FeatureMatrix& x) const;

  bool trained() const { return booster_ != nullptr; }

 private:
  struct BoosterDeleter {
    void operator()(void* booster) const;
  };
  XgbOptions options_;
  std::unique_ptr<void, BoosterDeleter> booster_;
  size_t cols_ = 0;
};

}  // namespace tunefleet::cost_model

#endif  // TUNEFLEET_COST_MODEL_XGB_RANKER_H_
