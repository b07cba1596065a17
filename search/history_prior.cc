#include "search/history_prior.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>

namespace tunefleet::search {
namespace {

// Mean ranks (0-based) of `values`, ties averaged.
std::vector<double> Ranks(const std::vector<float>& values) {
  std::vector<size_t> order(values.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return values[a] < values[b]; });
  std::vector<double> ranks(values.size());
  for (size_t i = 0; i < order.size();) {
    size_t j = i;
    while (j + 1 < order.size() && values[order[j + 1]] == values[order[i]]) {
      ++j;
    }
    for (size_t k = i; k <= j; ++k) ranks[order[k]] = (i + j) / 2.0;
    i = j + 1;
  }
  return ranks;
}

}  // namespace

HistoryGroup TableHistory(
    const search_space::Table& table,
    const std::function<std::vector<float>(uint64_t index)>& features) {
  // In index order: the training rows' order changes XGBoost's pairwise
  // sampling, and a hash map's order changes from run to run.
  const std::unique_ptr<search_space::SearchSpace> space = table.MakeSpace();
  const absl::flat_hash_map<uint64_t, const search_space::Table::Row*> rows =
      table.RowsByIndex();
  HistoryGroup group;
  for (uint64_t index : space->valid_indices()) {
    const search_space::Table::Row* row = rows.at(index);
    group.features.AddRow(features(index));
    group.labels.push_back(
        row->ok ? static_cast<float>(table.best_time_ms / row->time_ms) : 0.0f);
  }
  return group;
}

HistoryGroup TableHistory(const search_space::Table& table) {
  const std::unique_ptr<search_space::SearchSpace> space = table.MakeSpace();
  return TableHistory(table, KnobFeatureFunction(*space));
}

std::vector<float> PercentileRanks(const std::vector<float>& values) {
  const std::vector<double> ranks = Ranks(values);
  std::vector<float> out(values.size(), 0.5f);
  if (values.size() < 2) return out;
  const double top = static_cast<double>(values.size() - 1);
  for (size_t i = 0; i < ranks.size(); ++i) {
    out[i] = static_cast<float>(ranks[i] / top);
  }
  return out;
}

double SpearmanCorrelation(const std::vector<float>& a,
                           const std::vector<float>& b) {
  if (a.size() != b.size() || a.size() < 3) return 0;
  const std::vector<double> ra = Ranks(a), rb = Ranks(b);
  const double mean = (a.size() - 1) / 2.0;
  double cov = 0, va = 0, vb = 0;
  for (size_t i = 0; i < ra.size(); ++i) {
    cov += (ra[i] - mean) * (rb[i] - mean);
    va += (ra[i] - mean) * (ra[i] - mean);
    vb += (rb[i] - mean) * (rb[i] - mean);
  }
  if (va <= 0 || vb <= 0) return 0;
  return cov / std::sqrt(va * vb);
}

HistoryPrior::HistoryPrior(const std::vector<HistoryGroup>& history,
                           cost_model::XgbOptions options, size_t max_rows)
    : model_(options) {
  size_t total = 0;
  for (const HistoryGroup& h : history) total += h.labels.size();
  if (total == 0) return;
  // Each row is kept with probability max_rows / total, group by group.
  const double keep = std::min(1.0, double(max_rows) / double(total));
  std::mt19937_64 rng(options.seed * 104729 + 17);
  std::bernoulli_distribution take(keep);
  cost_model::FeatureMatrix x;
  std::vector<float> labels;
  std::vector<unsigned> groups;
  for (const HistoryGroup& h : history) {
    unsigned kept = 0;
    for (size_t r = 0; r < h.labels.size() && r < h.features.rows; ++r) {
      if (keep < 1.0 && !take(rng)) continue;
      x.AddRow(h.features.Row(r));
      labels.push_back(h.labels[r]);
      ++kept;
    }
    if (kept > 0) groups.push_back(kept);
  }
  if (x.rows == 0 || !model_.Fit(x, labels, groups).ok()) return;
  rows_ = x.rows;
}

std::vector<float> HistoryPrior::Predict(
    const cost_model::FeatureMatrix& x) const {
  if (!usable()) return {};
  absl::StatusOr<std::vector<float>> scores = model_.Predict(x);
  if (!scores.ok() || scores->size() != x.rows) return {};
  return *std::move(scores);
}

double HistoryPrior::UpdateWeight(const cost_model::FeatureMatrix& own,
                                  const std::vector<float>& labels) {
  const std::vector<float> predicted = Predict(own);
  if (predicted.empty()) {
    weight_ = 0;
    return weight_;
  }
  rho_ = SpearmanCorrelation(predicted, labels);
  const double n = static_cast<double>(labels.size());
  weight_ = std::max(0.0, rho_) * kHalfLife / (kHalfLife + n);
  return weight_;
}

}  // namespace tunefleet::search
