// The memory plan of a model: every tensor that is not a view or a constant
// gets an offset in one device arena, so that tensors whose lifetimes do
// not overlap share bytes. The offsets come from a greedy best-fit over
// lifetimes ("greedy by size": Pisarchyk & Lee, "Efficient Memory
// Management for Deep Neural Net Inference", 2020, as TensorFlow Lite's
// arena planner does): tensors are placed largest first, each at the
// smallest gap between the tensors already placed whose lifetimes overlap
// its own that holds it, else above them. Plain C++17 (copied into emitted
// libraries): the runtime plans again at load when a device needs a larger
// alignment than the plan assumed.
#ifndef TUNEFLEET_MODEL_RUNTIME_MEMORY_PLAN_H_
#define TUNEFLEET_MODEL_RUNTIME_MEMORY_PLAN_H_

#include <cstdint>
#include <vector>

#include "model_plan.h"

namespace tunefleet_tuned {

// A tensor to place: it must keep its bytes from step `first` to step
// `last`, inclusive.
struct LiveRange {
  int32_t first = 0;
  int32_t last = 0;
  uint64_t bytes = 0;
};

// Offsets (multiples of `alignment`, a power of two) for `ranges`, in
// their order, such that two ranges that overlap in time never overlap in
// memory. Returns the arena's size: the largest offset + bytes.
uint64_t PlaceRanges(const std::vector<LiveRange>& ranges, uint64_t alignment,
                     std::vector<uint64_t>* offsets);

// Sets the offset of every root tensor of `plan` (alias_of < 0, constant
// < 0) from its first_step..last_step and size, and plan->memory's
// alignment, arena_bytes and tensor_bytes (the sum of those tensors'
// bytes).
void PlanArena(Plan* plan, uint64_t alignment);

}  // namespace tunefleet_tuned

#endif  // TUNEFLEET_MODEL_RUNTIME_MEMORY_PLAN_H_
