#include "search/genetic_search.h"

#include <algorithm>

namespace tunefleet::search {

std::vector<uint64_t> GeneticSearch::Propose(size_t max_count) {
  std::vector<uint64_t> out;
  while (out.size() < max_count) {
    std::optional<uint64_t> child;
    if (population_.size() >= 2) child = Breed();
    if (child) {
      proposals_.Mark(*child);
    } else {
      child = proposals_.DrawRandom();
      if (!child) break;
    }
    out.push_back(*child);
  }
  return out;
}

void GeneticSearch::Observe(const std::vector<Observation>& results) {
  for (const Observation& r : results) {
    if (!r.ok || r.time_ns <= 0) continue;
    population_.emplace_back(1.0 / r.time_ns, space_.Digits(r.index));
  }
  std::sort(population_.begin(), population_.end(),
            [](const auto& a, const auto& b) { return a.first > b.first; });
  if (population_.size() > kPopulation) population_.resize(kPopulation);
}

const std::vector<uint32_t>& GeneticSearch::Parent() {
  double total = 0;
  for (const auto& [fitness, digits] : population_) total += fitness;
  double pick =
      std::uniform_real_distribution<double>(0, total)(proposals_.rng());
  for (const auto& [fitness, digits] : population_) {
    if ((pick -= fitness) <= 0) return digits;
  }
  return population_.back().second;
}

std::optional<uint64_t> GeneticSearch::Breed() {
  std::mt19937_64& rng = proposals_.rng();
  std::bernoulli_distribution coin(0.5), mutate(kMutation);
  for (int attempt = 0; attempt < 64; ++attempt) {
    const std::vector<uint32_t>& a = Parent();
    const std::vector<uint32_t>& b = Parent();
    std::vector<uint32_t> child(a.size());
    for (size_t k = 0; k < child.size(); ++k) {
      child[k] = coin(rng) ? a[k] : b[k];
      if (mutate(rng)) {
        const uint32_t n = space_.knobs()[k].values.size();
        child[k] = std::uniform_int_distribution<uint32_t>(0, n - 1)(rng);
      }
    }
    const uint64_t index = space_.IndexOf(child);
    if (!proposals_.proposed(index) && space_.IsValid(index)) return index;
  }
  return std::nullopt;
}

}  // namespace tunefleet::search
