// Random search: uniform sampling without replacement over the valid
// configs. The baseline every other strategy is measured against.
#ifndef TUNEFLEET_SEARCH_RANDOM_SEARCH_H_
#define TUNEFLEET_SEARCH_RANDOM_SEARCH_H_

#include "search/strategy.h"

namespace tunefleet::search {

class RandomSearch : public SearchStrategy {
 public:
  RandomSearch(const search_space::SearchSpace& space, uint64_t seed)
      : proposals_(space, seed) {}

  std::vector<uint64_t> Propose(size_t max_count) override;
  void Observe(const std::vector<Observation>&) override {}

 private:
  ProposalSet proposals_;
};

}  // namespace tunefleet::search

#endif  // TUNEFLEET_SEARCH_RANDOM_SEARCH_H_
