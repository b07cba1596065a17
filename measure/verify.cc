#include "measure/verify.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace tunefleet::measure {

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
    if (std::isnan(r) || std::isnan(o)) {
      // NaN where the reference has one: the same (e.g. the NaNs an output
      // starts with, left where a copy or fill does not write); NaN on one
      // side only is a wrong element.
      if (std::isnan(r) != std::isnan(o)) return kInf;
      continue;
    }
    if (std::isinf(r) || std::isinf(o)) {
      if (o != r) return kInf;
      continue;
    }
    worst = std::max(worst, std::fabs(o - r) / scale);
  }
  return worst;
}

}  // namespace tunefleet::measure
