#include "memory_plan.h"

#include <algorithm>
#include <numeric>

namespace tunefleet_tuned {
namespace {

uint64_t AlignUp(uint64_t value, uint64_t alignment) {
  return (value + alignment - 1) / alignment * alignment;
}

}  // namespace

uint64_t PlaceRanges(const std::vector<LiveRange>& ranges, uint64_t alignment,
                     std::vector<uint64_t>* offsets) {
  if (alignment == 0) alignment = 1;
  offsets->assign(ranges.size(), 0);
  std::vector<size_t> order(ranges.size());
  std::iota(order.begin(), order.end(), size_t{0});
  // Largest first; among equals, the earlier-living first (stable).
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return ranges[a].bytes > ranges[b].bytes;
  });
  std::vector<size_t> placed;     // in placement order
  std::vector<size_t> conflicts;  // placed ranges overlapping in time
  uint64_t peak = 0;
  for (size_t i : order) {
    const LiveRange& r = ranges[i];
    conflicts.clear();
    for (size_t p : placed) {
      const LiveRange& q = ranges[p];
      if (q.first <= r.last && r.first <= q.last) conflicts.push_back(p);
    }
    std::sort(conflicts.begin(), conflicts.end(), [&](size_t a, size_t b) {
      return (*offsets)[a] < (*offsets)[b];
    });
    // The smallest gap between conflicting ranges that holds r.
    uint64_t best = 0;
    uint64_t best_gap = UINT64_MAX;
    uint64_t end = 0;  // the highest end of the conflicts so far
    for (size_t p : conflicts) {
      const uint64_t start = AlignUp(end, alignment);
      const uint64_t offset = (*offsets)[p];
      if (offset >= start && offset - start >= r.bytes &&
          offset - start < best_gap) {
        best = start;
        best_gap = offset - start;
      }
      end = std::max(end, offset + ranges[p].bytes);
    }
    const uint64_t offset =
        best_gap != UINT64_MAX ? best : AlignUp(end, alignment);
    (*offsets)[i] = offset;
    peak = std::max(peak, offset + r.bytes);
    placed.push_back(i);
  }
  return peak;
}

void PlanArena(Plan* plan, uint64_t alignment) {
  std::vector<LiveRange> ranges;
  std::vector<size_t> roots;
  uint64_t total = 0;
  for (size_t t = 0; t < plan->tensors.size(); ++t) {
    const PlanTensor& tensor = plan->tensors[t];
    if (tensor.alias_of >= 0 || tensor.constant >= 0) continue;
    const uint64_t bytes = tensor.elements * sizeof(float);
    ranges.push_back(LiveRange{tensor.first_step, tensor.last_step, bytes});
    roots.push_back(t);
    total += bytes;
  }
  std::vector<uint64_t> offsets;
  plan->memory.arena_bytes = PlaceRanges(ranges, alignment, &offsets);
  for (size_t i = 0; i < roots.size(); ++i) {
    plan->tensors[roots[i]].offset = offsets[i];
  }
  plan->memory.alignment = alignment;
  plan->memory.tensor_bytes = total;
}

}  // namespace tunefleet_tuned
