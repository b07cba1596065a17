#include "search/random_search.h"

namespace tunefleet::search {

std::vector<uint64_t> RandomSearch::Propose(size_t max_count) {
  std::vector<uint64_t> out;
  proposals_.FillRandom(max_count, &out);
  return out;
}

}  // namespace tunefleet::search
