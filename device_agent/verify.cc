#include "device_agent/verify.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace tunefleet::agent {

double MaxRelativeError(std::span<const float> out,
                        std::span<const float> ref) {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  if (out.size() != ref.size()) return kInf;
  double scale = 0.0;
  for (float r : ref) {
    if (std::isfinite(r)) scale = std::max(scale, std::fabs(double{r}));
  }
  scale = std::max(scale, 1e-30);
  double worst = 0.0;
  for (size_t i = 0; i < out.size(); ++i) {
    const double o = out[i], r = ref[i];
    if (!std::isfinite(o)) {
      if (std::isfinite(r)) return kInf;
      continue;
    }
    worst = std::max(worst, std::fabs(o - r) / scale);
  }
  return worst;
}

}  // namespace tunefleet::agent
