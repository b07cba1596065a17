// The GEMM templates off the device: gemm_gpu's constraints and launch
// geometry.
#include <random>

#include "absl/strings/str_cat.h"
#include "device_agent/measurer.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernels_templates/registry.h"
#include "proto/timing_policy.h"
#include "tests/support/template_fixtures.h"

namespace tunefleet::templates {
namespace {

TEST(GemmGpuTemplate, ConstraintsAndGeometry) {
  const KernelTemplate& t = testing::BuiltinTemplate("gemm_gpu");
  const Workload w = *Workload::Parse("gemm", "M=256,N=256,K=256");
  // BM BN BK TM TN LOADV DB STRN WTILE
  const KnobValues big = {128, 128, 16, 8, 8, 4, 1, 1, 1};
  ASSERT_TRUE(t.CheckConfig(big, w, testing::GpuLimits(1024, 64, 132)).ok());
  const LaunchDesc l = t.Launch(big, w);
  EXPECT_EQ(l.local, (std::vector<uint64_t>{16, 16}));
  EXPECT_EQ(l.global, (std::vector<uint64_t>{32, 32}));
  EXPECT_THAT(l.build_options, ::testing::HasSubstr("-DEDGE_M=0"));
  // N = 255 is odd: no vector loads.
  const Workload odd = *Workload::Parse("gemm", "M=256,N=255,K=256");
  EXPECT_THAT(
      std::string(
          t.CheckConfig(big, odd, testing::GpuLimits(1024, 64, 132)).message()),
      ::testing::HasSubstr("LOADV must divide N and K"));
  // A 32x32 block with 8x8 register tiles has 16 work-items for a 32x8 A
  // tile of 64 float4s: 4 each, fine.
  EXPECT_TRUE(t.CheckConfig({32, 32, 8, 8, 8, 4, 0, 1, 0}, w,
                            testing::GpuLimits(1024, 64, 132))
                  .ok());
  // BM BN BK TM TN LOADV DB STRN WTILE, and the reason it is refused.
  const std::pair<KnobValues, const char*> refusals[] = {
      {{128, 128, 8, 2, 2, 4, 0, 0, 0}, "more than 256 work-items"},
      {{256, 256, 8, 16, 16, 4, 0, 1, 0}, "more than 128 accumulators"},
      {{64, 64, 8, 8, 2, 1, 0, 1, 0}, "STRN needs TN % 4 == 0"},
      {{32, 32, 8, 8, 8, 4, 0, 1, 1}, "WTILE needs"},
  };
  for (const auto& [config, reason] : refusals) {
    EXPECT_THAT(
        std::string(t.CheckConfig(config, w, testing::GpuLimits(1024, 64, 132))
                        .message()),
        ::testing::HasSubstr(reason));
  }
  EXPECT_FALSE(t.Accepts(*Workload::Parse("gemm", "M=8,N=8,K=8", "fp16")));
}

}  // namespace
}  // namespace tunefleet::templates
