#include "search/grid_search.h"

namespace tunefleet::search {

std::vector<uint64_t> GridSearch::Propose(size_t max_count) {
  std::vector<uint64_t> out;
  if (space_.enumerable()) {
    const std::vector<uint64_t>& valid = space_.valid_indices();
    while (out.size() < max_count && next_ < valid.size()) {
      out.push_back(valid[next_++]);
    }
    return out;
  }
  while (out.size() < max_count && next_ < space_.raw_size()) {
    const uint64_t i = next_++;
    if (space_.IsValid(i)) out.push_back(i);
  }
  return out;
}

}  // namespace tunefleet::search
