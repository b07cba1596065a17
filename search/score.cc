#include "search/score.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>

#include "base/stats.h"

namespace tunefleet::search {

namespace {
constexpr double kInf = std::numeric_limits<double>::infinity();
}  // namespace

RandomBaseline::RandomBaseline(const search_space::Table& table) {
  std::vector<double> ok;
  desc_.reserve(table.rows.size());
  for (const search_space::Table::Row& row : table.rows) {
    desc_.push_back(row.ok ? row.time_ms : kInf);
    if (row.ok) ok.push_back(row.time_ms);
  }
  std::sort(desc_.begin(), desc_.end(), std::greater<double>());
  if (!ok.empty()) {
    best_ms_ = *std::min_element(ok.begin(), ok.end());
    worst_ok_ms_ = *std::max_element(ok.begin(), ok.end());
    median_ms_ = base::Median(std::move(ok));
  }
}

size_t RandomBaseline::PositionAfter(size_t trials) const {
  if (desc_.empty()) return 0;
  const double n = static_cast<double>(desc_.size());
  const double m = static_cast<double>(trials);
  // std::nearbyint rounds half to even in the default rounding mode, as
  // Python's round() does.
  const double index = std::nearbyint(m * (n + 1) / (m + 1));
  return std::min(desc_.size() - 1, static_cast<size_t>(index));
}

double RandomBaseline::TimeAfter(size_t trials) const {
  if (desc_.empty()) return kInf;
  return desc_[PositionAfter(trials)];
}

double RandomBaseline::Target(double fraction) const {
  return best_ms_ + (median_ms_ - best_ms_) * (1 - fraction);
}

size_t RandomBaseline::TrialsToReach(double fraction) const {
  if (desc_.empty()) return 1;
  const double target = Target(fraction);
  // desc_ is sorted worst first: the times at or below the target are a
  // suffix, starting at `first`.
  const size_t first =
      static_cast<size_t>(std::lower_bound(desc_.begin(), desc_.end(), target,
                                           std::greater<double>()) -
                          desc_.begin());
  size_t m = 1;
  // idx(M) reaches N - 1 >= first (the best is at N - 1) by M ~ 0.4 N.
  while (PositionAfter(m) < first && m < desc_.size()) ++m;
  return m;
}

ScoreRange MethodologyRange(const search_space::Table& table) {
  const RandomBaseline baseline(table);
  return {baseline.TrialsToReach(kScoreCutoffStart),
          baseline.TrialsToReach(kScoreCutoffEnd)};
}

double RandomBaselineTime(const search_space::Table& table, size_t trials) {
  return RandomBaseline(table).TimeAfter(trials);
}

double PerformanceScore(
    const search_space::Table& table,
    const std::vector<std::vector<double>>& best_so_far_per_seed,
    ScoreRange range) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  if (best_so_far_per_seed.empty() || range.empty() || range.first == 0) {
    return nan;
  }
  const RandomBaseline baseline(table);
  const double best = baseline.best_ms();
  double sum = 0;
  size_t points = 0;
  for (size_t m = range.first; m <= range.last; ++m) {
    const double random = baseline.TimeAfter(m);
    if (random == best || !std::isfinite(random)) continue;
    double strategy = 0;
    for (const std::vector<double>& curve : best_so_far_per_seed) {
      double t = curve.empty() ? kInf : curve[std::min(m, curve.size()) - 1];
      if (!std::isfinite(t) || t <= 0) t = baseline.worst_ok_ms();
      strategy += t;
    }
    strategy /= static_cast<double>(best_so_far_per_seed.size());
    sum += (strategy - random) / (best - random);
    ++points;
  }
  return points == 0 ? nan : sum / static_cast<double>(points);
}

double PerformanceScore(
    const search_space::Table& table,
    const std::vector<std::vector<double>>& best_so_far_per_seed) {
  return PerformanceScore(table, best_so_far_per_seed, MethodologyRange(table));
}

}  // namespace tunefleet::search
