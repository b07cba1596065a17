#include "search/xgb_search.h"

#include <algorithm>
#include <numeric>

namespace tunefleet::search {

XgbSearch::XgbSearch(const SearchSpace& space, StrategyOptions options)
    : space_(space),
      options_(std::move(options)),
      proposals_(space, options_.seed),
      model_(options_.xgb) {}

void XgbSearch::Observe(const std::vector<Observation>& results) {
  observations_.insert(observations_.end(), results.begin(), results.end());
}

bool XgbSearch::MaybeRefit() {
  const size_t n = observations_.size();
  if (n < options_.min_train) return false;
  if (model_.trained() && n - observed_at_fit_ < options_.refit_every) {
    return true;
  }
  double best = 0;
  for (const Observation& o : observations_) {
    if (o.ok && o.time_ns > 0 && (best == 0 || o.time_ns < best)) {
      best = o.time_ns;
    }
  }
  if (best == 0) return model_.trained();  // nothing ran yet: no signal
  cost_model::FeatureMatrix x;
  std::vector<float> labels;
  for (const Observation& o : observations_) {
    x.AddRow(options_.features(o.index));
    // Relative throughput in (0, 1]; failures rank below every success.
    labels.push_back(o.ok && o.time_ns > 0 ? static_cast<float>(best / o.time_ns) : 0.0f);
  }
  if (!model_.Fit(x, labels).ok()) return model_.trained();
  observed_at_fit_ = n;
  ++fits_;
  return true;
}

std::vector<uint64_t> XgbSearch::CandidatePool() {
  std::vector<uint64_t> pool;
  if (space_.enumerable() &&
      space_.valid_size() - proposals_.size() <= options_.pool_limit) {
    for (uint64_t i : space_.valid_indices()) {
      if (!proposals_.proposed(i)) pool.push_back(i);
    }
    return pool;
  }
  for (size_t tries = 0;
       pool.size() < options_.pool_limit && tries < options_.pool_limit * 4;
       ++tries) {
    const uint64_t i = space_.RandomValid(proposals_.rng());
    if (i != UINT64_MAX && !proposals_.proposed(i)) pool.push_back(i);
  }
  std::sort(pool.begin(), pool.end());
  pool.erase(std::unique(pool.begin(), pool.end()), pool.end());
  return pool;
}

std::vector<uint64_t> XgbSearch::Propose(size_t max_count) {
  std::vector<uint64_t> out;
  // Slots for random picks: the epsilon share, drawn per slot.
  std::bernoulli_distribution explore(options_.epsilon);
  size_t model_slots = 0;
  for (size_t s = 0; s < max_count; ++s) {
    if (!explore(proposals_.rng())) ++model_slots;
  }
  if (model_slots > 0 && MaybeRefit()) {
    std::vector<uint64_t> pool = CandidatePool();
    cost_model::FeatureMatrix x;
    for (uint64_t i : pool) x.AddRow(options_.features(i));
    absl::StatusOr<std::vector<float>> scores = model_.Predict(x);
    if (scores.ok()) {
      std::vector<size_t> order(pool.size());
      std::iota(order.begin(), order.end(), 0);
      const size_t take = std::min(model_slots, order.size());
      std::partial_sort(order.begin(), order.begin() + take, order.end(),
                        [&](size_t a, size_t b) {
                          return (*scores)[a] != (*scores)[b]
                                     ? (*scores)[a] > (*scores)[b]
                                     : pool[a] < pool[b];
                        });
      for (size_t r = 0; r < take; ++r) {
        proposals_.Mark(pool[order[r]]);
        out.push_back(pool[order[r]]);
      }
    }
  }
  proposals_.FillRandom(max_count, &out);
  return out;
}

}  // namespace tunefleet::search
