// The pooling and softmax templates (pool2d_direct, global_pool_reduce,
// softmax_rows) on the OpenCL device (PoCL in CI): random and chosen
// configs against each template's naive reference for odd shapes and fp16
// storage (their logic off the device:
// tests/unit/kernels_templates/pool_templates_test.cc).
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernels_templates/registry.h"
#include "tests/support/template_fixtures.h"
#include "tests/support/template_harness.h"

namespace tunefleet::templates {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;

// ---------------------------------------------------------------- pool2d

std::vector<Workload> PoolShapes(const char* mode, const char* dtype) {
  std::vector<Workload> shapes;
  for (const char* shape : {
           "C=1,H=1,W=1,R=1,S=1",
           "C=2,H=3,W=3,R=3,S=3,PH=1,PW=1",
           "N=2,C=3,H=7,W=7,R=3,S=3,SH=2,SW=2,PH=1,PW=1",
           "C=3,H=13,W=13,R=2,S=2,SH=2,SW=2",
           "C=5,H=13,W=7,R=3,S=3,PH=1,PW=1",
           "C=2,H=9,W=20,R=3,S=2,SH=3,SW=3,PH=1,PW=1",
       }) {
    shapes.push_back(testing::MustParse(
        "pool2d", absl::StrCat(shape, ",mode=", mode).c_str(), dtype));
  }
  return shapes;
}

TEST(Pool2dOnDevice, MaxPoolRandomConfigsMatchReference) {
  const KernelTemplate& pool = testing::Pool2dDirect();
  EXPECT_THAT(
      testing::CheckRandomConfigs(pool, PoolShapes("max", "fp32"), 4, 1),
      IsEmpty());
}

TEST(Pool2dOnDevice, AvgPoolRandomConfigsMatchReference) {
  const KernelTemplate& pool = testing::Pool2dDirect();
  EXPECT_THAT(
      testing::CheckRandomConfigs(pool, PoolShapes("avg", "fp32"), 4, 101),
      IsEmpty());
}

TEST(Pool2dOnDevice, ChosenConfigsMatchReference) {
  // Local tiles with stride 1, 2 (even-lane loads) and 3 (gathers), vector
  // widths 2 and 4, unrolled windows, several planes per work-item.
  const KernelTemplate& pool = testing::Pool2dDirect();
  const std::vector<Workload> shapes = {
      testing::MustParse("pool2d",
                         "N=2,C=5,H=17,W=23,R=3,S=3,SH=2,SW=2,PH=1,PW=1"),
      testing::MustParse("pool2d", "C=6,H=13,W=19,R=3,S=3,PH=1,PW=1,mode=avg"),
      testing::MustParse("pool2d", "C=3,H=14,W=22,R=2,S=2,SH=2,SW=2,mode=avg"),
      testing::MustParse("pool2d", "C=4,H=11,W=25,R=3,S=3,SH=3,SW=3,PH=1,PW=1"),
  };
  EXPECT_THAT(testing::CheckConfigs(
                  pool, shapes,
                  {"PWI=2,QWI=4,VW=4,WGQ=2,WGP=2,WGC=2,CWG=4,LT=1,UNR=1",
                   "PWI=1,QWI=2,VW=2,WGQ=4,WGP=4,WGC=1,CWG=2,LT=1,UNR=0",
                   "PWI=4,QWI=4,VW=2,WGQ=2,WGP=1,WGC=1,CWG=1,LT=0,UNR=1",
                   "PWI=1,QWI=8,VW=4,WGQ=1,WGP=4,WGC=2,CWG=2,LT=0,UNR=0"}),
              IsEmpty());
}

TEST(Pool2dOnDevice, HalfStorageMatchesReference) {
  const KernelTemplate& pool = testing::Pool2dDirect();
  EXPECT_THAT(
      testing::CheckRandomConfigs(
          pool,
          {testing::MustParse(
               "pool2d", "N=2,C=3,H=7,W=7,R=3,S=3,SH=2,SW=2,PH=1,PW=1", "fp16"),
           testing::MustParse(
               "pool2d", "C=5,H=13,W=9,R=3,S=3,PH=1,PW=1,mode=avg", "fp16")},
          4, 201),
      IsEmpty());  // Stride 2 with four lanes: eight-half loads at odd columns.
  EXPECT_THAT(
      testing::CheckConfigs(
          pool,
          {testing::MustParse(
              "pool2d", "C=3,H=9,W=21,R=3,S=3,SH=2,SW=2,PH=1,PW=1", "fp16")},
          {"PWI=1,QWI=4,VW=4,WGQ=2,WGP=2,WGC=1,CWG=1,LT=0,UNR=0",
           "PWI=2,QWI=4,VW=4,WGQ=2,WGP=2,WGC=1,CWG=2,LT=1,UNR=1"}),
      IsEmpty());
}

// ----------------------------------------------------------- global_pool

TEST(GlobalPoolOnDevice, RandomConfigsMatchReference) {
  const KernelTemplate& pool = testing::GlobalPoolReduce();
  const std::vector<Workload> shapes = {
      testing::MustParse("global_pool", "C=3,H=1,W=1"),
      testing::MustParse("global_pool", "N=2,C=5,H=7,W=7,mode=avg"),
      testing::MustParse("global_pool", "C=4,H=13,W=9"),
      testing::MustParse("global_pool", "C=3,H=13,W=9,mode=avg"),
      testing::MustParse("global_pool", "C=2,H=48,W=191,mode=avg"),
      testing::MustParse("global_pool", "C=3,H=47,W=192"),
  };
  EXPECT_THAT(testing::CheckRandomConfigs(pool, shapes, 5, 301), IsEmpty());
}

TEST(GlobalPoolOnDevice, ChosenConfigsMatchReference) {
  // The widest reduction tree, unrolled vector loads with a scalar tail,
  // and many planes per work-group with a partial last group.
  const KernelTemplate& pool = testing::GlobalPoolReduce();
  EXPECT_THAT(
      testing::CheckConfigs(
          pool,
          {testing::MustParse("global_pool", "N=2,C=3,H=48,W=191,mode=avg"),
           testing::MustParse("global_pool", "N=2,C=3,H=47,W=192")},
          {"WPC=256,CPG=1,VW=8,UNROLL=4", "WPC=64,CPG=4,VW=4,UNROLL=2",
           "WPC=1,CPG=8,VW=8,UNROLL=4", "WPC=8,CPG=2,VW=2,UNROLL=1"}),
      IsEmpty());
}

TEST(GlobalPoolOnDevice, HalfStorageMatchesReference) {
  const KernelTemplate& pool = testing::GlobalPoolReduce();
  EXPECT_THAT(testing::CheckRandomConfigs(
                  pool,
                  {testing::MustParse("global_pool", "N=2,C=3,H=7,W=7,mode=avg",
                                      "fp16"),
                   testing::MustParse("global_pool", "C=2,H=13,W=9", "fp16")},
                  4, 401),
              IsEmpty());  // Eight-lane half loads at planes that are not
                           // 16-byte aligned.
  EXPECT_THAT(
      testing::CheckConfigs(
          pool,
          {testing::MustParse("global_pool", "N=2,C=3,H=7,W=7", "fp16"),
           testing::MustParse("global_pool", "C=3,H=13,W=9,mode=avg", "fp16")},
          {"WPC=1,CPG=4,VW=8,UNROLL=1", "WPC=4,CPG=1,VW=8,UNROLL=2"}),
      IsEmpty());
}

// --------------------------------------------------------------- softmax

TEST(SoftmaxOnDevice, RandomConfigsMatchReference) {
  const KernelTemplate& softmax = testing::SoftmaxRows();
  std::vector<Workload> shapes;
  for (const char* shape :
       {"N=1,D=1", "N=5,D=1", "N=5,D=2", "N=1,D=3", "N=5,D=3", "N=1,D=1000",
        "N=5,D=1000", "N=1,D=1027", "N=5,D=1027"}) {
    shapes.push_back(testing::MustParse("softmax", shape));
  }
  EXPECT_THAT(testing::CheckRandomConfigs(softmax, shapes, 4, 501), IsEmpty());
}

TEST(SoftmaxOnDevice, ChosenConfigsMatchReference) {
  // One pass in registers, many passes (online max and sum) with partial
  // last passes, and partial last work-groups of rows.
  const KernelTemplate& softmax = testing::SoftmaxRows();
  EXPECT_THAT(testing::CheckConfigs(
                  softmax,
                  {testing::MustParse("softmax", "N=5,D=1027"),
                   testing::MustParse("softmax", "N=3,D=1000")},
                  {"WPR=256,RPG=1,VW=4,EPW=1", "WPR=16,RPG=2,VW=2,EPW=1",
                   "WPR=1,RPG=4,VW=8,EPW=4", "WPR=128,RPG=4,VW=1,EPW=8",
                   "WPR=32,RPG=1,VW=8,EPW=4"}),
              IsEmpty());
}

TEST(SoftmaxOnDevice, HalfStorageMatchesReference) {
  const KernelTemplate& softmax = testing::SoftmaxRows();
  EXPECT_THAT(testing::CheckRandomConfigs(
                  softmax,
                  {testing::MustParse("softmax", "N=5,D=1027", "fp16"),
                   testing::MustParse("softmax", "N=1,D=3", "fp16")},
                  4, 601),
              IsEmpty());  // Eight-lane half loads and stores at rows that are
                           // not 16-byte aligned.
  EXPECT_THAT(
      testing::CheckConfigs(
          softmax, {testing::MustParse("softmax", "N=5,D=1027", "fp16")},
          {"WPR=1,RPG=4,VW=8,EPW=4", "WPR=64,RPG=2,VW=8,EPW=2"}),
      IsEmpty());
}

// -------------------------------------------------------------- registry

}  // namespace
}  // namespace tunefleet::templates
