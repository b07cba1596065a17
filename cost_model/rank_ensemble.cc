#include "cost_model/rank_ensemble.h"

#include <algorithm>
#include <random>

#include "absl/strings/str_cat.h"

namespace tunefleet::cost_model {

RankEnsemble::RankEnsemble(XgbOptions options, int members)
    : options_(std::move(options)) {
  for (int m = 0; m < std::max(1, members); ++m) {
    models_.emplace_back(MemberOptions(m));
  }
}

XgbOptions RankEnsemble::MemberOptions(size_t member) const {
  XgbOptions o = options_;
  o.seed = options_.seed * 131 + member;
  return o;
}

absl::Status RankEnsemble::Fit(const FeatureMatrix& x,
                               const std::vector<float>& labels) {
  if (x.rows == 0 || labels.size() != x.rows) {
    return absl::InvalidArgumentError(absl::StrCat(
        "ensemble fit on ", x.rows, " rows with ", labels.size(), " labels"));
  }
  std::vector<XgbRanker> fitted;
  std::mt19937_64 rng(options_.seed * 7919 + draws_++);
  std::uniform_int_distribution<size_t> pick(0, x.rows - 1);
  for (size_t m = 0; m < models_.size(); ++m) {
    XgbRanker model(MemberOptions(m));
    absl::Status status;
    if (m == 0) {
      status = model.Fit(x, labels);
    } else {
      FeatureMatrix resample;
      std::vector<float> resampled_labels;
      for (size_t i = 0; i < x.rows; ++i) {
        const size_t r = pick(rng);
        resample.AddRow(x.Row(r));
        resampled_labels.push_back(labels[r]);
      }
      status = model.Fit(resample, resampled_labels);
    }
    if (!status.ok()) return status;
    fitted.push_back(std::move(model));
  }
  models_ = std::move(fitted);
  return absl::OkStatus();
}

absl::StatusOr<std::vector<std::vector<float>>> RankEnsemble::PredictAll(
    const FeatureMatrix& x, int members) const {
  const size_t count =
      members < 0 ? models_.size()
                  : std::min(models_.size(), static_cast<size_t>(members));
  std::vector<std::vector<float>> out;
  for (size_t m = 0; m < count; ++m) {
    absl::StatusOr<std::vector<float>> scores = models_[m].Predict(x);
    if (!scores.ok()) return scores.status();
    out.push_back(*std::move(scores));
  }
  return out;
}

}  // namespace tunefleet::cost_model
