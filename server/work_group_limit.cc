#include "server/work_group_limit.h"

#include <algorithm>

namespace tunefleet::server {

void WorkGroupLimit::Observe(uint64_t kernel_limit, uint64_t refused_group) {
  if (kernel_limit == 0) return;  // an agent that does not report it
  largest_reported_ = std::max(largest_reported_, kernel_limit);
  if (refused_group > kernel_limit) refused_ = true;
}

}  // namespace tunefleet::server
