// The pooling and softmax templates (pool2d_direct, global_pool_reduce,
// softmax_rows) off the device: output sizes, FLOPs and bytes, workload and
// config checks, derived features and registration.
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernels_templates/registry.h"
#include "tests/support/template_fixtures.h"

namespace tunefleet::templates {
namespace {

using testing::CheckText;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::tunefleet::testing::GpuLimits;

// ---------------------------------------------------------------- pool2d

// Output rows P and columns Q of a pool2d workload, as pool2d_direct
// computes them: its reference launch runs one work-item per output.
std::pair<uint64_t, uint64_t> PoolOutputSize(const Workload& w) {
  const LaunchDesc l = testing::Pool2dDirect().ReferenceLaunch(w);
  return {l.global[1], l.global[0]};
}

TEST(Pool2dTemplate, OutputSizeIsOnnxFloor) {
  using Size = std::pair<uint64_t, uint64_t>;
  // MobileNet's stem MaxPool: 3x3, stride 2, pad 1 on 112x112 -> 56x56.
  const Workload stem = testing::MustParse(
      "pool2d", "C=64,H=112,W=112,R=3,S=3,SH=2,SW=2,PH=1,PW=1");
  EXPECT_EQ(PoolOutputSize(stem), Size(56, 56));
  // 2x2 stride 2 on 13x7: floor(11/2)+1 = 6 rows, floor(5/2)+1 = 3 cols.
  const Workload odd =
      testing::MustParse("pool2d", "C=3,H=13,W=7,R=2,S=2,SH=2,SW=2");
  EXPECT_EQ(PoolOutputSize(odd), Size(6, 3));
  // Stride 1, pad 1 keeps the size.
  const Workload same =
      testing::MustParse("pool2d", "C=1,H=5,W=9,R=3,S=3,PH=1,PW=1");
  EXPECT_EQ(PoolOutputSize(same), Size(5, 9));
  const std::vector<BufferDesc> b = testing::Pool2dDirect().Buffers(odd);
  ASSERT_EQ(b.size(), 2u);
  EXPECT_EQ(b[0].name, "input");
  EXPECT_EQ(b[0].elements, 3u * 13 * 7);
  EXPECT_EQ(b[1].name, "output");
  EXPECT_TRUE(b[1].output);
  EXPECT_EQ(b[1].elements, 3u * 6 * 3);
}

TEST(Pool2dTemplate, FlopsAndBytes) {
  const KernelTemplate& pool = testing::Pool2dDirect();
  const Workload w = testing::MustParse(
      "pool2d", "N=2,C=3,H=13,W=7,R=3,S=3,SH=2,SW=2,PH=1,PW=1");
  // P = 7, Q = 4: N*C*P*Q*R*S.
  EXPECT_EQ(pool.Flops(w), 2.0 * 3 * 7 * 4 * 9);
  EXPECT_EQ(pool.Bytes(w), (2.0 * 3 * 13 * 7 + 2.0 * 3 * 7 * 4) * 4);
  const Workload half = testing::MustParse(
      "pool2d", "C=3,H=13,W=7,R=2,S=2,SH=2,SW=2,mode=avg", "fp16");
  EXPECT_EQ(pool.Bytes(half), (3.0 * 13 * 7 + 3.0 * 6 * 3) * 2);
  EXPECT_EQ(pool.Tolerance(half), 1e-2);
  EXPECT_EQ(pool.Tolerance(w), 1e-4);
}

TEST(Pool2dTemplate, RefusesBadShapes) {
  const KernelTemplate& pool = testing::Pool2dDirect();
  const DeviceLimits limits = GpuLimits();
  auto check = [&](const char* shape, const DeviceLimits& device) {
    return pool.CheckWorkload(testing::MustParse("pool2d", shape), device);
  };
  EXPECT_TRUE(check("C=1,H=1,W=1,R=1,S=1", limits).ok());
  absl::Status big = check("C=1,H=2,W=5,R=3,S=3", limits);
  EXPECT_FALSE(big.ok());
  EXPECT_THAT(big.message(), HasSubstr("larger than the padded input"));
  // 3x3 on 1x1 with padding 1 fits the padded input.
  EXPECT_TRUE(check("C=1,H=1,W=1,R=3,S=3,PH=1,PW=1", limits).ok());
  absl::Status pad = check("C=1,H=8,W=8,R=2,S=2,PH=0,PW=2", limits);
  EXPECT_FALSE(pad.ok());
  EXPECT_THAT(pad.message(), HasSubstr("half the window"));
  EXPECT_FALSE(
      pool.CheckWorkload(testing::MustParse("softmax", "D=4"), limits).ok());
  DeviceLimits tiny = limits;
  tiny.max_mem_alloc_bytes = 1000;
  EXPECT_THAT(check("C=8,H=9,W=9,R=3,S=3", tiny).message(),
              HasSubstr("max allocation"));
}

TEST(Pool2dTemplate, ConfigConstraints) {
  const KernelTemplate& pool = testing::Pool2dDirect();
  const DeviceLimits limits = GpuLimits();
  const Workload w = testing::MustParse(
      "pool2d", "C=32,H=56,W=56,R=3,S=3,SH=2,SW=2,PH=1,PW=1");
  EXPECT_TRUE(CheckText(pool, w, limits,
                        "PWI=2,QWI=4,VW=4,WGQ=8,WGP=4,WGC=1,CWG=2,LT=1,UNR=1")
                  .ok());
  testing::ExpectRefusals(
      pool, w, limits,
      {{"PWI=2,QWI=2,VW=4,WGQ=8,WGP=4,WGC=1,CWG=2,LT=0,UNR=0",
        "VW must divide QWI"},
       {"PWI=1,QWI=1,VW=1,WGQ=8,WGP=4,WGC=4,CWG=2,LT=0,UNR=0",
        "WGC must divide CWG"},
       {"PWI=1,QWI=1,VW=1,WGQ=32,WGP=16,WGC=8,CWG=8,LT=0,UNR=0",
        "work-group size"},
       {"PWI=4,QWI=8,VW=4,WGQ=4,WGP=4,WGC=1,CWG=16,LT=1,UNR=0", "local memory"},
       // Q = 28 rounds up to 32: a 64-column work-group tile only idles.
       {"PWI=1,QWI=2,VW=2,WGQ=32,WGP=1,WGC=1,CWG=1,LT=0,UNR=0",
        "Q rounded up"}});
  EXPECT_FALSE(pool.CheckConfig({1, 1, 1}, w, limits).ok());
  // Derived features: same names for every config.
  testing::ExpectSameFeatureNames(
      pool, w, limits, "PWI=2,QWI=4,VW=4,WGQ=8,WGP=4,WGC=1,CWG=2,LT=1,UNR=1",
      "PWI=1,QWI=1,VW=1,WGQ=1,WGP=1,WGC=1,CWG=1,LT=0,UNR=0");
}

TEST(GlobalPoolTemplate, FlopsBytesAndConstraints) {
  const KernelTemplate& pool = testing::GlobalPoolReduce();
  const DeviceLimits limits = GpuLimits();
  const Workload w =
      testing::MustParse("global_pool", "N=2,C=3,H=13,W=9,mode=avg");
  EXPECT_EQ(pool.Flops(w), 2.0 * 3 * 13 * 9);
  EXPECT_EQ(pool.Bytes(w), (2.0 * 3 * 13 * 9 + 2.0 * 3) * 4);
  EXPECT_EQ(pool.Buffers(w)[1].elements, 6u);
  EXPECT_TRUE(pool.CheckWorkload(w, limits).ok());
  EXPECT_FALSE(
      pool.CheckWorkload(testing::MustParse("softmax", "D=4"), limits).ok());
  EXPECT_TRUE(CheckText(pool, w, limits, "WPC=32,CPG=4,VW=2,UNROLL=2").ok());
  testing::ExpectRefusals(pool, w, limits,
                          {{"WPC=256,CPG=8,VW=1,UNROLL=1", "work-group size"},
                           // 117 elements round up to 128: 64*4 elements a step
                           // only idle.
                           {"WPC=64,CPG=1,VW=4,UNROLL=1", "H*W rounded up"},
                           {"WPC=1,CPG=16,VW=1,UNROLL=1", "N*C rounded up"}});
  // 1x1 planes: only one element per work-item per step.
  const Workload one = testing::MustParse("global_pool", "C=7,H=1,W=1");
  EXPECT_TRUE(CheckText(pool, one, limits, "WPC=1,CPG=8,VW=1,UNROLL=1").ok());
  EXPECT_FALSE(CheckText(pool, one, limits, "WPC=1,CPG=8,VW=2,UNROLL=1").ok());
  testing::ExpectSameFeatureNames(pool, w, limits, "WPC=32,CPG=4,VW=2,UNROLL=2",
                                  "WPC=1,CPG=1,VW=1,UNROLL=1");
}

TEST(SoftmaxTemplate, FlopsBytesAndConstraints) {
  const KernelTemplate& softmax = testing::SoftmaxRows();
  const DeviceLimits limits = GpuLimits();
  const Workload w = testing::MustParse("softmax", "N=5,D=1000");
  // Subtract, exp, add and divide per element.
  EXPECT_EQ(softmax.Flops(w), 4.0 * 5 * 1000);
  EXPECT_EQ(softmax.Bytes(w), 2.0 * 5 * 1000 * 4);
  EXPECT_EQ(softmax.Bytes(testing::MustParse("softmax", "N=5,D=1000", "fp16")),
            2.0 * 5 * 1000 * 2);
  EXPECT_TRUE(softmax.CheckWorkload(w, limits).ok());
  EXPECT_FALSE(softmax
                   .CheckWorkload(
                       testing::MustParse("global_pool", "C=1,H=1,W=1"), limits)
                   .ok());
  EXPECT_TRUE(CheckText(softmax, w, limits, "WPR=64,RPG=4,VW=4,EPW=4").ok());
  testing::ExpectRefusals(softmax, w, limits,
                          {{"WPR=1,RPG=1,VW=8,EPW=8", "VW*EPW"},
                           {"WPR=256,RPG=8,VW=1,EPW=1", "work-group size"},
                           {"WPR=256,RPG=1,VW=4,EPW=2", "D rounded up"},
                           {"WPR=1,RPG=16,VW=1,EPW=1", "N rounded up"}});
  // A row of one element: one work-item, one lane.
  const Workload one = testing::MustParse("softmax", "N=5,D=1");
  EXPECT_TRUE(CheckText(softmax, one, limits, "WPR=1,RPG=8,VW=1,EPW=1").ok());
  EXPECT_FALSE(CheckText(softmax, one, limits, "WPR=2,RPG=8,VW=1,EPW=1").ok());
  // Rows that fit one pass are read once.
  const char* const single = "WPR=64,RPG=4,VW=4,EPW=4";
  const char* const multi = "WPR=16,RPG=1,VW=2,EPW=1";
  EXPECT_THAT(softmax.Launch(*softmax.ParseConfig(single), w).build_options,
              HasSubstr("-DSINGLE_PASS=1"));
  EXPECT_THAT(softmax.Launch(*softmax.ParseConfig(multi), w).build_options,
              HasSubstr("-DSINGLE_PASS=0"));
  testing::ExpectSameFeatureNames(softmax, w, limits, single, multi);
}

TEST(PoolTemplates, RegisteredForTheirOps) {
  for (const auto& [op, shape, name] :
       std::vector<std::tuple<const char*, const char*, const char*>>{
           {"pool2d", "C=1,H=4,W=4,R=2,S=2,SH=2,SW=2", "pool2d_direct"},
           {"global_pool", "C=1,H=4,W=4", "global_pool_reduce"},
           {"softmax", "D=10", "softmax_rows"}}) {
    auto t = FindTemplateFor(testing::MustParse(op, shape), "");
    ASSERT_TRUE(t.ok()) << t.status();
    EXPECT_EQ((*t)->name(), name);
  }
}

}  // namespace
}  // namespace tunefleet::templates
