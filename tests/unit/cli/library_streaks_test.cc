// The rule that stops trying a library template on a model's remaining
// tasks once it lost by more than 2x on 3 tasks in a row.
#include "cli/library_streaks.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tunefleet::cli {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

tunefleet::v1::JobProgress Job(double best_ns, double reference_ns = 0) {
  tunefleet::v1::JobProgress p;
  if (best_ns > 0) p.mutable_best()->set_time_ns(best_ns);
  p.set_reference_time_ns(reference_ns);
  return p;
}

TEST(LibraryStreaks, ThreeHeavyLossesInARowDropATemplate) {
  LibraryStreaks s;
  for (int i = 0; i < 2; ++i) {
    s.Update(Job(100, 400), {{"clblast_conv2d", Job(250)}});
    EXPECT_TRUE(s.Worth("clblast_conv2d"));
  }
  s.Update(Job(100, 400), {{"clblast_conv2d", Job(201)}});
  EXPECT_FALSE(s.Worth("clblast_conv2d"));
  EXPECT_THAT(s.Dropped(), ElementsAre("clblast_conv2d"));
  EXPECT_TRUE(s.Worth("clblast_gemm"));  // never tried: still worth it
}

TEST(LibraryStreaks, AWinOrANearMissEndsTheStreak) {
  LibraryStreaks s;
  s.Update(Job(100), {{"clblast_conv2d", Job(300)}});
  s.Update(Job(100), {{"clblast_conv2d", Job(300)}});
  s.Update(Job(100), {{"clblast_conv2d", Job(190)}});  // within 2x
  s.Update(Job(100), {{"clblast_conv2d", Job(300)}});
  s.Update(Job(100), {{"clblast_conv2d", Job(300)}});
  EXPECT_TRUE(s.Worth("clblast_conv2d"));
  EXPECT_THAT(s.Dropped(), IsEmpty());
}

TEST(LibraryStreaks, ComparesWithTheFasterOfTunedAndNaive) {
  LibraryStreaks s;
  // The naive kernel (50 ns) beat the tuned one: 120 ns is a heavy loss.
  for (int i = 0; i < 3; ++i) {
    s.Update(Job(100, 50), {{"clblast_dense", Job(120)}});
  }
  EXPECT_FALSE(s.Worth("clblast_dense"));
}

TEST(LibraryStreaks, AJobWithoutAResultLosesAndNothingToCompareCountsNot) {
  LibraryStreaks s;
  for (int i = 0; i < 3; ++i) {
    s.Update(Job(0, 0), {{"clblast_gemm", Job(0)}});  // nothing measured
  }
  EXPECT_TRUE(s.Worth("clblast_gemm"));
  for (int i = 0; i < 3; ++i) {
    s.Update(Job(100), {{"clblast_gemm", Job(0)}});  // the library failed
  }
  EXPECT_FALSE(s.Worth("clblast_gemm"));
}

}  // namespace
}  // namespace tunefleet::cli
