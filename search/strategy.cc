#include "search/strategy.h"

#include <algorithm>
#include <limits>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "search/annealing_search.h"
#include "search/genetic_search.h"
#include "search/grid_search.h"
#include "search/random_search.h"
#include "search/xgb_search.h"

namespace tunefleet::search {

ProposalSet::ProposalSet(const search_space::SearchSpace& space, uint64_t seed)
    : space_(space), rng_(seed) {
  if (space_.enumerable()) shuffled_ = space_.valid_indices();
}

std::optional<uint64_t> ProposalSet::DrawRandom() {
  if (space_.enumerable()) {
    while (next_ < shuffled_.size()) {
      std::uniform_int_distribution<size_t> pick(next_, shuffled_.size() - 1);
      std::swap(shuffled_[next_], shuffled_[pick(rng_)]);
      const uint64_t index = shuffled_[next_++];
      if (proposed_.insert(index).second) return index;
    }
    return std::nullopt;
  }
  for (int attempt = 0; attempt < 64; ++attempt) {
    const uint64_t index = space_.RandomValid(rng_);
    if (index == std::numeric_limits<uint64_t>::max()) return std::nullopt;
    if (proposed_.insert(index).second) return index;
  }
  return std::nullopt;
}

void ProposalSet::FillRandom(size_t max_count, std::vector<uint64_t>* out) {
  while (out->size() < max_count) {
    std::optional<uint64_t> next = DrawRandom();
    if (!next) return;
    out->push_back(*next);
  }
}

std::optional<uint64_t> ProposalSet::RandomNeighbour(uint64_t index,
                                                     int tries) {
  const std::vector<search_space::KnobSpec>& knobs = space_.knobs();
  for (int t = 0; t < tries; ++t) {
    std::vector<uint32_t> digits = space_.Digits(index);
    const size_t k =
        std::uniform_int_distribution<size_t>(0, knobs.size() - 1)(rng_);
    const uint32_t n = static_cast<uint32_t>(knobs[k].values.size());
    if (n < 2) continue;
    // Any other value of the knob: a uniform draw among the n - 1 others.
    const uint32_t step =
        std::uniform_int_distribution<uint32_t>(1, n - 1)(rng_);
    digits[k] = (digits[k] + step) % n;
    const uint64_t next = space_.IndexOf(digits);
    if (!proposed(next) && space_.IsValid(next)) return next;
  }
  return std::nullopt;
}

std::vector<tunefleet::v1::Strategy> AllStrategies() {
  return {tunefleet::v1::STRATEGY_GRID, tunefleet::v1::STRATEGY_RANDOM,
          tunefleet::v1::STRATEGY_SA, tunefleet::v1::STRATEGY_GA,
          tunefleet::v1::STRATEGY_XGB};
}

std::function<std::vector<float>(uint64_t index)> KnobFeatureFunction(
    const search_space::SearchSpace& space) {
  std::vector<bool> size_like;
  for (const search_space::KnobSpec& k : space.knobs())
    size_like.push_back(k.size_like);
  return [&space, size_like](uint64_t index) {
    return cost_model::KnobFeatures(space.Config(index), size_like);
  };
}

std::unique_ptr<SearchStrategy> MakeStrategy(
    tunefleet::v1::Strategy strategy, const search_space::SearchSpace& space,
    StrategyOptions options) {
  if (!options.features) options.features = KnobFeatureFunction(space);
  switch (strategy) {
    case tunefleet::v1::STRATEGY_GRID:
      return std::make_unique<GridSearch>(space);
    case tunefleet::v1::STRATEGY_RANDOM:
      return std::make_unique<RandomSearch>(space, options.seed);
    case tunefleet::v1::STRATEGY_SA:
      return std::make_unique<AnnealingSearch>(space, options);
    case tunefleet::v1::STRATEGY_GA:
      return std::make_unique<GeneticSearch>(space, options);
    default:  // STRATEGY_XGB, STRATEGY_UNSPECIFIED
      break;
  }
  return std::make_unique<XgbSearch>(space, options);
}

GuidedStrategy::GuidedStrategy(std::unique_ptr<SearchStrategy> inner,
                               const std::vector<uint64_t>& already_proposed)
    : inner_(std::move(inner)),
      proposed_(already_proposed.begin(), already_proposed.end()) {}

bool GuidedStrategy::Suggest(uint64_t index) {
  if (proposed_.contains(index) ||
      std::find(suggested_.begin(), suggested_.end(), index) !=
          suggested_.end()) {
    return false;
  }
  suggested_.push_back(index);
  return true;
}

std::vector<uint64_t> GuidedStrategy::Propose(size_t max_count) {
  std::vector<uint64_t> out;
  size_t taken = 0;
  for (; taken < suggested_.size() && out.size() < max_count; ++taken) {
    if (proposed_.insert(suggested_[taken]).second) {
      out.push_back(suggested_[taken]);
    }
  }
  suggested_.erase(suggested_.begin(), suggested_.begin() + taken);
  // Each round either fills the batch or marks configs proposed here
  // before as proposed inside the inner strategy too, so the loop ends.
  while (out.size() < max_count) {
    std::vector<uint64_t> batch = inner_->Propose(max_count - out.size());
    if (batch.empty()) break;
    for (uint64_t i : batch) {
      if (proposed_.insert(i).second) out.push_back(i);
    }
  }
  return out;
}

void GuidedStrategy::Observe(const std::vector<Observation>& results) {
  inner_->Observe(results);
}

std::unique_ptr<SearchStrategy> ResumeStrategy(
    std::unique_ptr<SearchStrategy> inner,
    const std::vector<uint64_t>& already_proposed) {
  return std::make_unique<GuidedStrategy>(std::move(inner), already_proposed);
}

}  // namespace tunefleet::search
