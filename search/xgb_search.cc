#include "search/xgb_search.h"

#include <algorithm>
#include <cmath>
#include <set>

namespace tunefleet::search {

XgbSearch::XgbSearch(const SearchSpace& space, StrategyOptions options)
    : space_(space),
      options_(std::move(options)),
      proposals_(space, options_.seed),
      model_(options_.xgb) {}

void XgbSearch::Observe(const std::vector<Measurement>& results) {
  measurements_.insert(measurements_.end(), results.begin(), results.end());
}

bool XgbSearch::MaybeRefit() {
  const size_t n = measurements_.size();
  const bool has_history = !options_.history.empty();
  if (n < options_.min_train && !has_history) return false;
  if (model_.trained() && n - observed_at_fit_ < options_.refit_every) {
    return true;
  }
  cost_model::FeatureMatrix x;
  std::vector<float> labels;
  std::vector<unsigned> groups;
  for (const HistoryGroup& h : options_.history) {
    if (h.features.rows == 0) continue;
    x.data.insert(x.data.end(), h.features.data.begin(), h.features.data.end());
    x.cols = h.features.cols;
    x.rows += h.features.rows;
    labels.insert(labels.end(), h.labels.begin(), h.labels.end());
    groups.push_back(static_cast<unsigned>(h.features.rows));
  }
  double best = 0;
  for (const Measurement& o : measurements_) {
    if (o.ok && o.time_ns > 0 && (best == 0 || o.time_ns < best)) {
      best = o.time_ns;
    }
  }
  // This job's results join as one more group once any of them ran.
  if (best > 0) {
    for (const Measurement& o : measurements_) {
      x.AddRow(options_.features(o.index));
      // Relative throughput in (0, 1]; failures rank below every success.
      labels.push_back(
          o.ok && o.time_ns > 0 ? static_cast<float>(best / o.time_ns) : 0.0f);
    }
    groups.push_back(static_cast<unsigned>(measurements_.size()));
  }
  if (x.rows == 0) return model_.trained();
  if (!model_.Fit(x, labels, groups).ok()) return model_.trained();
  observed_at_fit_ = n;
  ++fits_;
  return true;
}

std::vector<float> XgbSearch::Predict(const std::vector<uint64_t>& indices) {
  cost_model::FeatureMatrix x;
  for (uint64_t i : indices) x.AddRow(options_.features(i));
  absl::StatusOr<std::vector<float>> scores = model_.Predict(x);
  if (!scores.ok() || scores->size() != indices.size()) {
    return std::vector<float>(indices.size(), 0.0f);
  }
  return *std::move(scores);
}

std::vector<std::pair<float, uint64_t>> XgbSearch::ScoreAll() {
  std::vector<uint64_t> pool;
  for (uint64_t i : space_.valid_indices()) {
    if (!proposals_.proposed(i)) pool.push_back(i);
  }
  const std::vector<float> scores = Predict(pool);
  std::vector<std::pair<float, uint64_t>> ranked;
  ranked.reserve(pool.size());
  for (size_t i = 0; i < pool.size(); ++i)
    ranked.emplace_back(scores[i], pool[i]);
  return ranked;
}

std::vector<std::pair<float, uint64_t>> XgbSearch::Walk(size_t want) {
  std::mt19937_64& rng = proposals_.rng();
  // Walkers start at the fastest measured configs and at random ones.
  std::vector<Measurement> measured;
  for (const Measurement& o : measurements_) {
    if (o.ok) measured.push_back(o);
  }
  std::sort(measured.begin(), measured.end(),
            [](const auto& a, const auto& b) { return a.time_ns < b.time_ns; });
  std::vector<uint64_t> walkers;
  for (size_t i = 0; i < measured.size() && walkers.size() < kWalkers / 4;
       ++i) {
    walkers.push_back(measured[i].index);
  }
  for (int tries = 0; walkers.size() < kWalkers && tries < 4 * int(kWalkers);
       ++tries) {
    const uint64_t i = space_.RandomValid(rng);
    if (i != UINT64_MAX) walkers.push_back(i);
  }
  if (walkers.empty()) return {};
  std::vector<float> scores = Predict(walkers);
  // The best unproposed configs seen, by score.
  std::set<std::pair<float, uint64_t>> top;
  std::set<uint64_t> in_top;
  auto offer = [&](float score, uint64_t index) {
    if (proposals_.proposed(index) || in_top.count(index)) return false;
    if (top.size() >= want && score <= top.begin()->first) return false;
    top.emplace(score, index);
    in_top.insert(index);
    if (top.size() > want) {
      in_top.erase(top.begin()->second);
      top.erase(top.begin());
    }
    return true;
  };
  for (size_t w = 0; w < walkers.size(); ++w) offer(scores[w], walkers[w]);
  std::uniform_real_distribution<double> uniform(0.0, 1.0);
  int quiet = 0;
  for (int step = 0; step < kWalkSteps && quiet < kWalkPatience; ++step) {
    const double temperature = 1.0 - double(step) / kWalkSteps;
    std::vector<uint64_t> next = walkers;
    for (uint64_t& n : next) {
      // One knob to another value; invalid moves stay put.
      std::vector<uint32_t> digits = space_.Digits(n);
      const size_t k =
          std::uniform_int_distribution<size_t>(0, digits.size() - 1)(rng);
      const uint32_t count = space_.knobs()[k].values.size();
      if (count < 2) continue;
      digits[k] = (digits[k] +
                   std::uniform_int_distribution<uint32_t>(1, count - 1)(rng)) %
                  count;
      const uint64_t moved = space_.IndexOf(digits);
      if (space_.IsValid(moved)) n = moved;
    }
    const std::vector<float> next_scores = Predict(next);
    bool improved = false;
    for (size_t w = 0; w < walkers.size(); ++w) {
      improved |= offer(next_scores[w], next[w]);
      const double gain = next_scores[w] - scores[w];
      if (gain >= 0 || uniform(rng) < std::exp(gain / (temperature + 1e-6))) {
        walkers[w] = next[w];
        scores[w] = next_scores[w];
      }
    }
    quiet = improved ? 0 : quiet + 1;
  }
  return {top.rbegin(), top.rend()};
}

std::vector<std::pair<float, uint64_t>> XgbSearch::Candidates(size_t want) {
  std::vector<std::pair<float, uint64_t>> ranked;
  if (space_.enumerable() &&
      space_.valid_size() - proposals_.size() <= options_.pool_limit) {
    ranked = ScoreAll();
  } else {
    ranked = Walk(want);
  }
  std::sort(ranked.begin(), ranked.end(), [](const auto& a, const auto& b) {
    return a.first != b.first ? a.first > b.first : a.second < b.second;
  });
  return ranked;
}

std::vector<uint64_t> XgbSearch::PickDiverse(
    const std::vector<std::pair<float, uint64_t>>& ranked, size_t count) {
  // Greedy: rank score (1 for the best candidate, falling linearly) plus
  // `diversity` times the share of knobs whose value the batch lacks yet,
  // as AutoTVM's submodular pick of a diverse plan.
  const size_t pool = std::min(ranked.size(), 4 * count + 8);
  const size_t knobs = space_.knobs().size();
  std::vector<std::set<uint32_t>> covered(knobs);
  std::vector<std::vector<uint32_t>> digits(pool);
  for (size_t i = 0; i < pool; ++i) digits[i] = space_.Digits(ranked[i].second);
  std::vector<bool> taken(pool, false);
  std::vector<uint64_t> out;
  while (out.size() < count && out.size() < pool) {
    size_t best = pool;
    double best_value = -1;
    for (size_t i = 0; i < pool; ++i) {
      if (taken[i]) continue;
      size_t fresh = 0;
      for (size_t k = 0; k < knobs; ++k)
        fresh += !covered[k].count(digits[i][k]);
      const double value =
          1.0 - double(i) / pool + options_.diversity * double(fresh) / knobs;
      if (value > best_value) {
        best_value = value;
        best = i;
      }
    }
    taken[best] = true;
    for (size_t k = 0; k < knobs; ++k) covered[k].insert(digits[best][k]);
    out.push_back(ranked[best].second);
  }
  return out;
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
    for (uint64_t i :
         PickDiverse(Candidates(4 * model_slots + 8), model_slots)) {
      proposals_.Mark(i);
      out.push_back(i);
    }
  }
  proposals_.FillRandom(max_count, &out);
  return out;
}

}  // namespace tunefleet::search
