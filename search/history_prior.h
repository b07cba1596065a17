// Transfer learning that never hurts (docs/ARCHITECTURE.md, Search and cost
// model). Earlier tasks' results (other device keys, other workloads of the
// same template) train one ranking model, the prior, once per job. The
// job's own model does not train on them: the two rankings are blended,
//
//   score = (1 - w) * own percentile + w * prior percentile,
//   w     = max(0, rho) * k / (k + n),
//
// where rho is the Spearman rank correlation between the prior's scores and
// this job's measured throughput (an out-of-sample test: the prior never saw
// these results), n the job's results so far and k = kHalfLife. A prior that
// does not predict this device is switched off by its own evidence; one
// that does leads the first rounds and hands over as the job's own data
// grows. Training the prior once, on at most `max_rows` sampled rows, keeps
// each refit as cheap as a cold one.
#ifndef TUNEFLEET_SEARCH_HISTORY_PRIOR_H_
#define TUNEFLEET_SEARCH_HISTORY_PRIOR_H_

#include <cstdint>
#include <vector>

#include "cost_model/features.h"
#include "cost_model/xgb_ranker.h"
#include "search/strategy.h"
#include "search_space/table.h"

namespace tunefleet::search {

class HistoryPrior {
 public:
  // Own results after which the prior's weight has halved (rho = 1).
  static constexpr double kHalfLife = 32;

  // Trains on `history` (kept as query groups: pairs are only compared
  // within one earlier task), sampling at most `max_rows` rows uniformly
  // with `seed`. No history, or a failed fit, gives an unusable prior
  // (weight 0).
  HistoryPrior(const std::vector<HistoryGroup>& history,
               cost_model::XgbOptions options, size_t max_rows);

  bool usable() const { return model_.trained(); }
  // Rows the prior trained on.
  size_t rows() const { return rows_; }

  // Scores of the rows of `x` (higher: predicted faster); empty when the
  // prior is unusable or XGBoost fails.
  std::vector<float> Predict(const cost_model::FeatureMatrix& x) const;

  // Sets the blend weight from this job's results: `own` features with
  // their `labels` (relative throughput, 0 for failures). Returns w.
  double UpdateWeight(const cost_model::FeatureMatrix& own,
                      const std::vector<float>& labels);
  double weight() const { return weight_; }
  // The correlation behind the last weight (0 before any).
  double rho() const { return rho_; }

 private:
  cost_model::XgbRanker model_;
  size_t rows_ = 0;
  double weight_ = 1.0;  // before own results, the prior alone ranks
  double rho_ = 0.0;
};

// A recorded table as one history group: each row's `features` (of its
// index in table.MakeSpace(), the space the function is over) and its label,
// best time / time (0 for a failure), in index order (deterministic).
HistoryGroup TableHistory(
    const search_space::Table& table,
    const std::function<std::vector<float>(uint64_t index)>& features);
// The same with KnobFeatureFunction over the table's own space.
HistoryGroup TableHistory(const search_space::Table& table);

// Spearman's rank correlation of two equally long series (ties get their
// mean rank); 0 when either is constant or shorter than 3.
double SpearmanCorrelation(const std::vector<float>& a,
                           const std::vector<float>& b);

// Ranks of `values` scaled to [0, 1] (ties share their mean rank; a single
// value gets 0.5): makes scores of different models comparable.
std::vector<float> PercentileRanks(const std::vector<float>& values);

}  // namespace tunefleet::search

#endif  // TUNEFLEET_SEARCH_HISTORY_PRIOR_H_
