#include "search/xgb_search.h"

#include <algorithm>
#include <cmath>
#include <set>

namespace tunefleet::search {
namespace {

cost_model::FeatureMatrix FeaturesOf(
    const std::vector<uint64_t>& indices,
    const std::function<std::vector<float>(uint64_t)>& features) {
  cost_model::FeatureMatrix x;
  for (uint64_t i : indices) x.AddRow(features(i));
  return x;
}

}  // namespace

XgbSearch::XgbSearch(const search_space::SearchSpace& space,
                     StrategyOptions options)
    : space_(space),
      options_(std::move(options)),
      proposals_(space, options_.seed),
      ensemble_(options_.xgb, options_.ensemble) {
  if (!options_.history.empty()) {
    prior_ = std::make_unique<HistoryPrior>(options_.history, options_.xgb,
                                            options_.history_rows);
    if (!prior_->usable()) prior_.reset();
  }
}

double XgbSearch::prior_weight() const {
  return prior_ ? prior_->weight() : 0.0;
}

void XgbSearch::Observe(const std::vector<Observation>& results) {
  for (const Observation& o : results) {
    measurements_.push_back(o);
    measured_features_.AddRow(options_.features(o.index));
  }
}

bool XgbSearch::MaybeRefit() {
  const size_t n = measurements_.size();
  if (n < options_.min_train) return false;
  const size_t due = std::max(
      options_.refit_every,
      static_cast<size_t>(options_.refit_growth * static_cast<double>(n)));
  if (ensemble_.trained() && n - observed_at_fit_ < due) return true;
  double best = 0;
  for (const Observation& o : measurements_) {
    if (o.ok && o.time_ns > 0 && (best == 0 || o.time_ns < best)) {
      best = o.time_ns;
    }
  }
  if (best == 0) return ensemble_.trained();  // nothing ran yet
  std::vector<float> labels;
  for (const Observation& o : measurements_) {
    // Relative throughput in (0, 1]; failures rank below every success.
    labels.push_back(
        o.ok && o.time_ns > 0 ? static_cast<float>(best / o.time_ns) : 0.0f);
  }
  if (!ensemble_.Fit(measured_features_, labels).ok()) {
    return ensemble_.trained();
  }
  if (prior_) prior_->UpdateWeight(measured_features_, labels);
  observed_at_fit_ = n;
  ++fits_;
  return true;
}

std::vector<std::vector<float>> XgbSearch::Scores(
    const std::vector<uint64_t>& indices, bool first_only) {
  if (indices.empty()) return {};
  const cost_model::FeatureMatrix x = FeaturesOf(indices, options_.features);
  absl::StatusOr<std::vector<std::vector<float>>> own =
      ensemble_.PredictAll(x, first_only ? 1 : ensemble_.members());
  if (!own.ok()) return {};
  const double w = prior_weight();
  if (w <= 0) return *std::move(own);
  const std::vector<float> prior = PercentileRanks(prior_->Predict(x));
  if (prior.size() != indices.size()) return *std::move(own);
  for (std::vector<float>& member : *own) {
    std::vector<float> ranks = PercentileRanks(member);
    for (size_t i = 0; i < ranks.size(); ++i) {
      member[i] = static_cast<float>((1 - w) * ranks[i] + w * prior[i]);
    }
  }
  return *std::move(own);
}

std::vector<uint64_t> XgbSearch::BestNeighbours() {
  const Observation* best = nullptr;
  for (const Observation& o : measurements_) {
    if (o.ok && o.time_ns > 0 && (!best || o.time_ns < best->time_ns)) {
      best = &o;
    }
  }
  if (!best) return {};
  const std::vector<uint32_t> digits = space_.Digits(best->index);
  std::vector<uint64_t> out;
  for (size_t k = 0; k < digits.size(); ++k) {
    for (uint32_t v = 0; v < space_.knobs()[k].values.size(); ++v) {
      if (v == digits[k]) continue;
      std::vector<uint32_t> moved = digits;
      moved[k] = v;
      const uint64_t i = space_.IndexOf(moved);
      if (!proposals_.proposed(i) && space_.IsValid(i)) out.push_back(i);
    }
  }
  return out;
}

std::vector<uint64_t> XgbSearch::Pool() {
  if (!space_.enumerable()) return Walk(options_.pool_limit / 8 + 8);
  std::vector<uint64_t> pool;
  for (uint64_t i : space_.valid_indices()) {
    if (!proposals_.proposed(i)) pool.push_back(i);
  }
  if (pool.size() <= options_.pool_limit) return pool;
  // A uniform sample of the unproposed configs, plus the best one's
  // neighbours, which local refinement needs whatever the sample holds.
  std::mt19937_64& rng = proposals_.rng();
  for (size_t i = 0; i < options_.pool_limit; ++i) {
    std::swap(
        pool[i],
        pool[std::uniform_int_distribution<size_t>(i, pool.size() - 1)(rng)]);
  }
  pool.resize(options_.pool_limit);
  const std::vector<uint64_t> near = BestNeighbours();
  pool.insert(pool.end(), near.begin(), near.end());
  std::sort(pool.begin(), pool.end());
  pool.erase(std::unique(pool.begin(), pool.end()), pool.end());
  return pool;
}

std::vector<uint64_t> XgbSearch::Walk(size_t want) {
  std::mt19937_64& rng = proposals_.rng();
  // Walkers start at the fastest measured configs and at random ones.
  std::vector<Observation> measured;
  for (const Observation& o : measurements_) {
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
  // Walks follow member 0 (trained on every result).
  auto score = [&](const std::vector<uint64_t>& at) {
    std::vector<std::vector<float>> s = Scores(at, /*first_only=*/true);
    return s.empty() ? std::vector<float>(at.size(), 0.0f) : s[0];
  };
  if (walkers.empty()) return {};
  std::vector<float> scores = score(walkers);
  // The best unproposed configs seen, by score.
  std::set<std::pair<float, uint64_t>> top;
  std::set<uint64_t> in_top;
  auto offer = [&](float s, uint64_t index) {
    if (proposals_.proposed(index) || in_top.count(index)) return false;
    if (top.size() >= want && s <= top.begin()->first) return false;
    top.emplace(s, index);
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
    const std::vector<float> next_scores = score(next);
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
  std::vector<uint64_t> out;
  for (const auto& [s, index] : top) out.push_back(index);
  const std::vector<uint64_t> near = BestNeighbours();
  out.insert(out.end(), near.begin(), near.end());
  return out;
}

std::vector<uint64_t> XgbSearch::TopPicks(const std::vector<uint64_t>& pool,
                                          size_t count, bool thompson) {
  std::vector<uint64_t> out;
  if (count == 0 || pool.empty()) return out;
  std::vector<std::vector<float>> scores = Scores(pool);
  if (scores.empty()) return out;
  if (!thompson) {
    // The members' consensus: their mean percentile rank.
    std::vector<float> mean(pool.size(), 0.0f);
    for (const std::vector<float>& member : scores) {
      const std::vector<float> ranks = PercentileRanks(member);
      for (size_t i = 0; i < ranks.size(); ++i) mean[i] += ranks[i];
    }
    scores = {std::move(mean)};
  }
  while (out.size() < count) {
    const std::vector<float>& member =
        scores[thompson ? next_member_++ % scores.size() : 0];
    size_t best = pool.size();
    for (size_t i = 0; i < pool.size(); ++i) {
      if (proposals_.proposed(pool[i])) continue;
      if (best == pool.size() || member[i] > member[best]) best = i;
    }
    if (best == pool.size()) break;  // the pool is used up
    proposals_.Mark(pool[best]);
    out.push_back(pool[best]);
  }
  return out;
}

std::vector<uint64_t> XgbSearch::PriorPicks(size_t count) {
  std::vector<uint64_t> pool = Pool();
  const std::vector<float> scores =
      prior_->Predict(FeaturesOf(pool, options_.features));
  if (scores.size() != pool.size()) return {};
  std::vector<size_t> order(pool.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  const size_t ranked = std::min(pool.size(), 4 * count + 8);
  std::partial_sort(order.begin(), order.begin() + ranked, order.end(),
                    [&](size_t a, size_t b) {
                      return scores[a] != scores[b] ? scores[a] > scores[b]
                                                    : pool[a] < pool[b];
                    });
  // Greedy: rank (1 for the best candidate, falling linearly) plus
  // `diversity` times the share of knobs whose value the batch lacks yet.
  const size_t knobs = space_.knobs().size();
  std::vector<std::set<uint32_t>> covered(knobs);
  std::vector<bool> taken(ranked, false);
  std::vector<uint64_t> out;
  while (out.size() < count && out.size() < ranked) {
    size_t pick = ranked;
    double pick_value = -1;
    for (size_t r = 0; r < ranked; ++r) {
      if (taken[r]) continue;
      const std::vector<uint32_t> digits = space_.Digits(pool[order[r]]);
      size_t fresh = 0;
      for (size_t k = 0; k < knobs; ++k) fresh += !covered[k].count(digits[k]);
      const double value =
          1.0 - double(r) / ranked + options_.diversity * double(fresh) / knobs;
      if (value > pick_value) {
        pick_value = value;
        pick = r;
      }
    }
    taken[pick] = true;
    const uint64_t index = pool[order[pick]];
    const std::vector<uint32_t> digits = space_.Digits(index);
    for (size_t k = 0; k < knobs; ++k) covered[k].insert(digits[k]);
    proposals_.Mark(index);
    out.push_back(index);
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
    const size_t local = static_cast<size_t>(
        std::lround(options_.local_share * static_cast<double>(model_slots)));
    out = TopPicks(BestNeighbours(), local, /*thompson=*/false);
    const std::vector<uint64_t> global =
        TopPicks(Pool(), model_slots - out.size(), /*thompson=*/true);
    out.insert(out.end(), global.begin(), global.end());
  } else if (model_slots > 0 && prior_) {
    // Before the job's own model: half the batch from history, half random.
    out = PriorPicks((model_slots + 1) / 2);
  }
  proposals_.FillRandom(max_count, &out);
  return out;
}

}  // namespace tunefleet::search
