// A steady-state genetic algorithm after AutoTVM's GATuner (Chen et al.,
// NeurIPS 2018): the population is the fastest configs measured so far; a
// child takes each knob from one of two parents drawn with probability
// proportional to their throughput (uniform crossover) and then changes
// each knob at random with probability `kMutation`. Invalid or already
// proposed children are redrawn; random configs fill the population first.
#ifndef TUNEFLEET_SEARCH_GENETIC_SEARCH_H_
#define TUNEFLEET_SEARCH_GENETIC_SEARCH_H_

#include <optional>
#include <utility>
#include <vector>

#include "search/strategy.h"

namespace tunefleet::search {

class GeneticSearch : public SearchStrategy {
 public:
  static constexpr size_t kPopulation = 16;
  static constexpr double kMutation = 0.1;

  GeneticSearch(const search_space::SearchSpace& space,
                const StrategyOptions& options)
      : space_(space), proposals_(space, options.seed) {}

  std::vector<uint64_t> Propose(size_t max_count) override;
  void Observe(const std::vector<Observation>& results) override;

 private:
  // A new valid, unproposed child of the population, or nullopt.
  std::optional<uint64_t> Breed();
  const std::vector<uint32_t>& Parent();

  const search_space::SearchSpace& space_;
  ProposalSet proposals_;
  // (throughput = 1 / time, digits), fastest first, at most kPopulation.
  std::vector<std::pair<double, std::vector<uint32_t>>> population_;
};

}  // namespace tunefleet::search

#endif  // TUNEFLEET_SEARCH_GENETIC_SEARCH_H_
