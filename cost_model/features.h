// Feature vectors for the cost model. A feature matrix is row-major: one row
// per config, one column per feature.
#ifndef TUNEFLEET_COST_MODEL_FEATURES_H_
#define TUNEFLEET_COST_MODEL_FEATURES_H_

#include <cstdint>
#include <span>
#include <vector>

namespace tunefleet::cost_model {

// Dense row-major float matrix of `rows` x `cols`.
struct FeatureMatrix {
  size_t rows = 0;
  size_t cols = 0;
  std::vector<float> data;

  void AddRow(std::span<const float> row);
  std::span<const float> Row(size_t r) const {
    return {data.data() + r * cols, cols};
  }
};

// Features of a config from its knob values alone: log2(value) for size-like
// knobs (tile sizes, factors; AutoTVM's XGBTuner does the same with split
// factors) and the value itself for flags, one per knob in order; then, for
// each size-like knob in order, its power-of-two alignment: the exponent of
// the largest power of two dividing the value (48 -> 4, 32 -> 5), since
// sizes that are multiples of the warp, wavefront or vector width behave
// apart from their neighbours on a log scale. Both are invariant to the
// scale of one space (a tree splits on them the same way whatever the value
// list). `size_like` has one entry per value. Non-positive size-like values
// map to -1 in both.
std::vector<float> KnobFeatures(std::span<const int64_t> values,
                                const std::vector<bool>& size_like);

}  // namespace tunefleet::cost_model

#endif  // TUNEFLEET_COST_MODEL_FEATURES_H_
