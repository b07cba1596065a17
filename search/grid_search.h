// Grid search: every valid config in index order. With a budget equal to
// the space's size it is an exhaustive sweep (used to record simulation
// tables).
#ifndef TUNEFLEET_SEARCH_GRID_SEARCH_H_
#define TUNEFLEET_SEARCH_GRID_SEARCH_H_

#include "search/strategy.h"

namespace tunefleet::search {

class GridSearch : public SearchStrategy {
 public:
  explicit GridSearch(const search_space::SearchSpace& space) : space_(space) {}

  std::vector<uint64_t> Propose(size_t max_count) override;
  void Observe(const std::vector<Observation>&) override {}

 private:
  const search_space::SearchSpace& space_;
  uint64_t next_ = 0;  // enumerable: position in valid_indices(); else raw
};

}  // namespace tunefleet::search

#endif  // TUNEFLEET_SEARCH_GRID_SEARCH_H_
