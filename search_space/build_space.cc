#include "search_space/build_space.h"

#include <utility>
#include <vector>

namespace tunefleet::search_space {

std::unique_ptr<SearchSpace> BuildSpace(const templates::KernelTemplate& tmpl,
                                        const templates::Workload& workload,
                                        const templates::DeviceLimits& limits) {
  std::vector<KnobSpec> knobs;
  for (const templates::Knob& k : tmpl.knobs()) {
    knobs.push_back({k.name, k.values, k.size_like});
  }
  return std::make_unique<SearchSpace>(
      std::move(knobs),
      [&tmpl, workload, limits](const std::vector<int64_t>& c) {
        return tmpl.ConfigValid(c, workload, limits);
      });
}

}  // namespace tunefleet::search_space
