#include "cost_model/features.h"

#include <bit>
#include <cmath>

namespace tunefleet::cost_model {

void FeatureMatrix::AddRow(std::span<const float> row) {
  if (rows == 0 && cols == 0) cols = row.size();
  data.insert(data.end(), row.begin(), row.end());
  ++rows;
}

std::vector<float> KnobFeatures(std::span<const int64_t> values,
                                const std::vector<bool>& size_like) {
  std::vector<float> f(values.size());
  std::vector<float> alignment;
  for (size_t i = 0; i < values.size(); ++i) {
    const bool size = i < size_like.size() && size_like[i];
    if (!size) {
      f[i] = static_cast<float>(values[i]);
    } else {
      f[i] = values[i] > 0
                 ? static_cast<float>(std::log2(static_cast<double>(values[i])))
                 : -1.0f;
      alignment.push_back(values[i] > 0 ? static_cast<float>(std::countr_zero(
                                              static_cast<uint64_t>(values[i])))
                                        : -1.0f);
    }
  }
  f.insert(f.end(), alignment.begin(), alignment.end());
  return f;
}

}  // namespace tunefleet::cost_model
