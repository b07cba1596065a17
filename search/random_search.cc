#include "search/random_search.h"

namespace tunefleet::search {

std::vector<uint64_t> RandomSearch::Propose(size_t max_count) {
  std::vector<uint64_t> out;
  while (out.size() < max_count) {
    std::optional<uint64_t> next = proposals_.DrawRandom();
    if (!next) break;
    out.push_back(*next);
  }
  return out;
}

}  // namespace tunefleet::search
