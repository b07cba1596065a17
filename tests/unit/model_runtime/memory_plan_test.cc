#include "model_runtime/memory_plan.h"

#include <random>
#include <vector>

#include "gtest/gtest.h"

namespace tunefleet_tuned {
namespace {

// Two ranges that overlap in time never overlap in memory, and every offset
// is aligned.
void ExpectValid(const std::vector<LiveRange>& ranges,
                 const std::vector<uint64_t>& offsets, uint64_t alignment,
                 uint64_t peak) {
  ASSERT_EQ(offsets.size(), ranges.size());
  for (size_t i = 0; i < ranges.size(); ++i) {
    EXPECT_EQ(offsets[i] % alignment, 0u) << i;
    EXPECT_LE(offsets[i] + ranges[i].bytes, peak) << i;
    for (size_t j = i + 1; j < ranges.size(); ++j) {
      const bool in_time = ranges[i].first <= ranges[j].last &&
                           ranges[j].first <= ranges[i].last;
      const bool in_memory = offsets[i] < offsets[j] + ranges[j].bytes &&
                             offsets[j] < offsets[i] + ranges[i].bytes;
      EXPECT_FALSE(in_time && in_memory) << i << " and " << j;
    }
  }
}

TEST(MemoryPlanTest, AChainNeedsTwoBuffers) {
  // t0 -> t1 -> t2 -> t3, each read only by the next step: at most two live
  // at once, so the arena holds the two largest neighbours.
  std::vector<LiveRange> ranges = {
      {-1, 0, 4000}, {0, 1, 4000}, {1, 2, 4000}, {2, 4, 4000}};
  std::vector<uint64_t> offsets;
  const uint64_t peak = PlaceRanges(ranges, 128, &offsets);
  ExpectValid(ranges, offsets, 128, peak);
  EXPECT_EQ(peak, 4096u + 4000u);
}

TEST(MemoryPlanTest, BestFitTakesTheSmallestGap) {
  // Tensors live throughout (P) or only early (T); once the early ones end,
  // they leave holes of 500 and 200 bytes between the P's. A late tensor of
  // 100 bytes goes into the smaller hole that holds it.
  std::vector<LiveRange> ranges = {
      {0, 10, 1000},  // P1 at 0
      {0, 1, 500},    // T1 at 1000
      {0, 10, 400},   // P2 at 1500
      {0, 1, 200},    // T2 at 1900
      {0, 10, 150},   // P3 at 2100
      {5, 6, 100},    // late
  };
  std::vector<uint64_t> offsets;
  const uint64_t peak = PlaceRanges(ranges, 4, &offsets);
  ExpectValid(ranges, offsets, 4, peak);
  EXPECT_EQ(peak, 2250u);
  EXPECT_EQ(offsets[3], 1900u);
  EXPECT_EQ(offsets[5], 1900u);  // T2's hole, not T1's
}

TEST(MemoryPlanTest, RandomLifetimesNeverCollide) {
  std::mt19937 rng(7);
  for (int round = 0; round < 50; ++round) {
    std::vector<LiveRange> ranges;
    uint64_t total = 0;
    for (int i = 0; i < 40; ++i) {
      const int first = static_cast<int>(rng() % 30) - 1;
      const int last = first + static_cast<int>(rng() % 6);
      const uint64_t bytes = 4 * (1 + rng() % 5000);
      ranges.push_back({first, last, bytes});
      total += bytes;
    }
    std::vector<uint64_t> offsets;
    const uint64_t peak = PlaceRanges(ranges, 256, &offsets);
    ExpectValid(ranges, offsets, 256, peak);
    EXPECT_LT(peak, total + 40 * 256);
  }
}

TEST(MemoryPlanTest, PlanArenaPlacesRootsOnly) {
  Plan plan;
  PlanTensor a{"a", {4, 4}, 16};
  a.first_step = -1;
  a.last_step = 0;
  PlanTensor b{"b", {4, 4}, 16};
  b.first_step = 0;
  b.last_step = 1;
  PlanTensor view{"view", {16}, 16};
  view.alias_of = 1;
  PlanTensor c{"c", {16}, 16};
  c.first_step = 1;
  c.last_step = 2;
  plan.tensors = {a, b, view, c};
  PlanArena(&plan, 64);
  EXPECT_EQ(plan.memory.tensor_bytes, 3u * 64);
  EXPECT_EQ(plan.memory.arena_bytes, 128u);  // a and c share
  EXPECT_EQ(plan.tensors[0].offset, plan.tensors[3].offset);
  EXPECT_NE(plan.tensors[0].offset, plan.tensors[1].offset);
}

}  // namespace
}  // namespace tunefleet_tuned
