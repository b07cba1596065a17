// The GEMM templates (gemm_tiled, dense_gemm, conv2d_1x1_gemm, gemm_gpu),
// found by name in the registry, against their naive references on the
// OpenCL device (PoCL in CI), for odd shapes and configs spread over the
// knobs, and every epilogue of the fused forms.
#include <iterator>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "contract/timing_policy.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernels_templates/registry.h"
#include "measure/measurer.h"
#include "tests/support/template_fixtures.h"
#include "tests/support/template_harness.h"
#include "trial/trial_request.h"

namespace tunefleet::templates {
namespace {

using tunefleet::v1::Measurement;

class GemmOnDevice : public testing::MeasurerSuite {
 protected:
  // A request for a config given as text, with the default timing policy.
  v1::MeasureRequest Request(const Workload& w, absl::string_view config) {
    auto values = gemm_.ParseConfig(config);
    EXPECT_TRUE(values.ok()) << values.status();
    return trial::BuildMeasureRequest(gemm_, w, *values, 1,
                                      contract::DefaultTimingPolicy());
  }

  Measurement Run(const Workload& w, const KnobValues& config) {
    v1::TimingPolicy quick;
    quick.set_repeat(1);
    quick.set_number(1);
    return measurer_->Measure(
        trial::BuildMeasureRequest(gemm_, w, config, 1, quick));
  }

  const KernelTemplate& gemm_ = testing::BuiltinTemplate("gemm_tiled");
};

// A config valid on every device: 8x8 work-items, no local memory.
constexpr char kSmallConfig[] =
    "MWG=16,NWG=16,KWG=8,MWI=2,NWI=2,VW=1,SA=0,SB=0,KUNROLL=1,HALF=0,IMB=0";

Workload GemmWorkload(int64_t m, int64_t n, int64_t k) {
  return *Workload::Create("gemm", {{"M", m}, {"N", n}, {"K", k}});
}

TEST_F(GemmOnDevice, OddShapesMatchReference) {
  const DeviceLimits limits =
      trial::LimitsFromDeviceInfo(measurer_->device_info());
  // Configs covering local memory on/off, vector widths and unrolling.
  const std::vector<std::string> configs = {
      "MWG=16,NWG=16,KWG=8,MWI=1,NWI=1,VW=1,SA=0,SB=0,KUNROLL=1,HALF=0,IMB=0",
      "MWG=32,NWG=64,KWG=16,MWI=4,NWI=8,VW=4,SA=1,SB=1,KUNROLL=4,HALF=0,IMB=0",
      "MWG=64,NWG=32,KWG=32,MWI=8,NWI=4,VW=2,SA=1,SB=0,KUNROLL=8,HALF=0,IMB=0",
      "MWG=16,NWG=128,KWG=8,MWI=2,NWI=8,VW=8,SA=0,SB=1,KUNROLL=2,HALF=0,IMB=0",
      "MWG=128,NWG=16,KWG=16,MWI=8,NWI=2,VW=2,SA=0,SB=0,KUNROLL=16,HALF=0,IMB="
      "0",
  };
  const std::vector<Workload> shapes = {
      GemmWorkload(1, 1, 1),    GemmWorkload(3, 7, 13),
      GemmWorkload(13, 1, 7),   GemmWorkload(33, 65, 17),
      GemmWorkload(64, 64, 64), GemmWorkload(100, 37, 129)};
  for (const std::string& text : configs) {
    auto config = gemm_.ParseConfig(text);
    if (!config.ok()) continue;  // KUNROLL=16 is outside the knob's values
    ASSERT_TRUE(gemm_.CheckConfig(*config, shapes[0], limits).ok()) << text;
    for (const Workload& w : shapes) {
      Measurement m = Run(w, *config);
      EXPECT_EQ(m.error(), Measurement::OK)
          << text << " on " << w.Canonical() << ": " << m.error_message();
      EXPECT_LT(m.max_rel_error(), 1e-5) << text << " on " << w.Canonical();
    }
  }
}

TEST_F(GemmOnDevice, RandomValidConfigsMatchReference) {
  const DeviceLimits limits =
      trial::LimitsFromDeviceInfo(measurer_->device_info());
  std::mt19937 rng(7);
  const Workload w = GemmWorkload(45, 71, 39);
  int tried = 0;
  while (tried < 12) {
    KnobValues config;
    for (const auto& knob : gemm_.knobs()) {
      config.push_back(knob.values[rng() % knob.values.size()]);
    }
    if (!gemm_.CheckConfig(config, w, limits).ok()) continue;
    ++tried;
    Measurement m = Run(w, config);
    EXPECT_EQ(m.error(), Measurement::OK)
        << gemm_.ConfigString(config) << ": " << m.error_message();
  }
}

TEST_F(GemmOnDevice, BrokenSourceIsACompileError) {
  const Workload w = GemmWorkload(8, 8, 8);
  v1::MeasureRequest r = Request(w, kSmallConfig);
  r.mutable_kernel()->set_source("__kernel void gemm( { this is not C }");
  Measurement m = measurer_->Measure(r);
  EXPECT_EQ(m.error(), Measurement::COMPILE_ERROR);
  EXPECT_NE(m.error_message().find("clBuildProgram"), std::string::npos)
      << m.error_message();
}

TEST_F(GemmOnDevice, WrongResultIsAWrongAnswerAndDoesNotPoisonLaterTrials) {
  const Workload w = GemmWorkload(17, 9, 5);
  v1::MeasureRequest r = Request(w, kSmallConfig);
  // Skips the last column and scribbles on input A.
  r.mutable_kernel()->set_source(R"(
    __kernel void gemm(int M, int N, int K, __global float* A,
                       __global const float* B, __global float* C) {
      int n = get_global_id(0), m = get_global_id(1);
      if (m >= M || n >= N - 1) return;
      float s = 0;
      for (int k = 0; k < K; ++k) s += A[m * K + k] * B[k * N + n];
      C[m * N + n] = s;
      A[0] = 42.0f;
    })");
  Measurement bad = measurer_->Measure(r);
  EXPECT_EQ(bad.error(), Measurement::WRONG_ANSWER) << bad.error_message();
  // The inputs were regenerated: a correct kernel still verifies.
  Measurement good = measurer_->Measure(Request(w, kSmallConfig));
  EXPECT_EQ(good.error(), Measurement::OK) << good.error_message();
}

TEST_F(GemmOnDevice, OversizedWorkGroupIsAnInvalidConfig) {
  const Workload w = GemmWorkload(8, 8, 8);
  v1::MeasureRequest r = Request(w, kSmallConfig);
  r.mutable_kernel()->set_local_size(0, 1 << 20);
  r.mutable_kernel()->set_global_size(0, 1 << 20);
  Measurement m = measurer_->Measure(r);
  EXPECT_EQ(m.error(), Measurement::INVALID_CONFIG) << m.error_message();
}

// Every measurement of a built kernel reports its CL_KERNEL_WORK_GROUP_SIZE
// (what a job learns its limit from: server/work_group_limit.h), at least
// the work-group it ran. A launch refused before its kernel is built (above
// the device's own limit) reports none. (On PoCL a kernel's limit is the
// device's, so the refusal for the kernel's limit alone is driven by the
// job test with a fake agent, tests/unit/server/work_group_limit_test.cc.)
TEST_F(GemmOnDevice, MeasurementsReportTheKernelsWorkGroupLimit) {
  const Workload w = GemmWorkload(8, 8, 8);
  const v1::MeasureRequest ok_request = Request(w, kSmallConfig);
  Measurement ok = measurer_->Measure(ok_request);
  ASSERT_EQ(ok.error(), Measurement::OK) << ok.error_message();
  uint64_t group = 1;
  for (uint64_t l : ok_request.kernel().local_size()) group *= l;
  const uint64_t limit = ok.kernel_work_group_limit();
  EXPECT_GE(limit, group);

  v1::MeasureRequest over = ok_request;
  over.mutable_kernel()->set_local_size(0, 2 * limit);
  over.mutable_kernel()->set_global_size(0, 2 * limit);
  Measurement refused = measurer_->Measure(over);
  EXPECT_EQ(refused.error(), Measurement::INVALID_CONFIG)
      << refused.error_message();
  EXPECT_EQ(refused.kernel_work_group_limit(), 0u) << refused.error_message();
}

TEST_F(GemmOnDevice, TimingHonoursPolicy) {
  const Workload w = GemmWorkload(64, 64, 64);
  auto config = gemm_.ParseConfig(
      "MWG=32,NWG=32,KWG=16,MWI=2,NWI=4,VW=4,SA=1,SB=1,KUNROLL=2,HALF=0,IMB=0");
  ASSERT_TRUE(config.ok());
  v1::TimingPolicy t;
  t.set_repeat(4);
  t.set_number(3);
  t.set_max_launches(1000);
  Measurement m =
      measurer_->Measure(trial::BuildMeasureRequest(gemm_, w, *config, 1, t));
  ASSERT_EQ(m.error(), Measurement::OK) << m.error_message();
  EXPECT_EQ(m.times_ns_size(), 4);
  EXPECT_EQ(m.number(), 3u);
  for (double ns : m.times_ns()) EXPECT_GT(ns, 0);
  // The launch cap bounds number: 4 rounds within 8 launches -> 2 each.
  t.set_number(100);
  t.set_max_launches(8);
  m = measurer_->Measure(trial::BuildMeasureRequest(gemm_, w, *config, 2, t));
  ASSERT_EQ(m.error(), Measurement::OK);
  EXPECT_EQ(m.number(), 2u);
}

Workload ParseWorkload(const char* op, const char* shape,
                       const char* dtype = "fp32") {
  auto w = Workload::Parse(op, shape, dtype);
  EXPECT_TRUE(w.ok()) << w.status();
  return *w;
}

TEST(GemmVariants, DenseWithEveryEpilogueMatchesReference) {
  const KernelTemplate& dense = testing::BuiltinTemplate("dense_gemm");
  std::vector<Workload> shapes;
  for (const char* epilogue :
       {"", ",affine=shift,act=relu", ",affine=scale_shift,act=clip",
        ",affine=scale_shift,act=hardsigmoid", ",affine=shift,act=hardswish"}) {
    shapes.push_back(ParseWorkload(
        "dense", absl::StrCat("M=3,N=37,K=29", epilogue).c_str()));
  }
  shapes.push_back(ParseWorkload("dense", "M=1,N=2,K=200,affine=shift"));
  EXPECT_THAT(testing::CheckRandomConfigs(dense, shapes, 3, 11),
              ::testing::IsEmpty());
}

TEST(GemmVariants, OneByOneConvolutionsRunAsBatchedGemm) {
  const KernelTemplate& conv = testing::BuiltinTemplate("conv2d_1x1_gemm");
  const Workload ok = ParseWorkload(
      "conv2d", "N=2,C=13,H=7,W=5,K=19,R=1,S=1,affine=scale_shift,act=relu");
  EXPECT_TRUE(conv.Accepts(ok));
  EXPECT_FALSE(
      conv.Accepts(ParseWorkload("conv2d", "C=4,H=8,W=8,K=4,R=3,S=3")));
  EXPECT_FALSE(
      conv.Accepts(ParseWorkload("conv2d", "C=4,H=8,W=8,K=4,R=1,S=1,SH=2")));
  EXPECT_FALSE(
      conv.Accepts(ParseWorkload("conv2d", "C=4,H=8,W=8,K=4,R=1,S=1,G=2")));
  EXPECT_EQ(conv.Flops(ok), 2.0 * 19 * 35 * 13 * 2);
  EXPECT_THAT(testing::CheckRandomConfigs(
                  conv,
                  {ok, ParseWorkload("conv2d",
                                     "C=3,H=1,W=1,K=1,R=1,S=1,act=hardswish")},
                  4, 21),
              ::testing::IsEmpty());
  auto chosen = FindTemplateFor(ok, "");
  ASSERT_TRUE(chosen.ok());
  EXPECT_EQ((*chosen)->name(), "conv2d_1x1_gemm");
}

TEST(GemmVariants, HalfStorageMatchesReference) {
  const KernelTemplate& gemm = testing::BuiltinTemplate("gemm_tiled");
  const KernelTemplate& dense = testing::BuiltinTemplate("dense_gemm");
  EXPECT_THAT(
      testing::CheckRandomConfigs(
          gemm, {ParseWorkload("gemm", "M=33,N=17,K=45", "fp16")}, 4, 31),
      ::testing::IsEmpty());
  // Eight halves at 2-byte aligned addresses (N % 8 != 0), which PoCL's
  // vload_half8 faults on.
  auto wide = gemm.ParseConfig(
      "MWG=16,NWG=32,KWG=8,MWI=2,NWI=8,VW=8,SA=0,SB=0,KUNROLL=1,HALF=0,IMB=0");
  ASSERT_TRUE(wide.ok());
  const auto m = testing::RunConfig(
      gemm, ParseWorkload("gemm", "M=9,N=21,K=11", "fp16"), *wide);
  EXPECT_EQ(m.error(), tunefleet::v1::Measurement::OK) << m.error_message();
  EXPECT_THAT(testing::CheckRandomConfigs(
                  dense,
                  {ParseWorkload("dense", "M=5,N=24,K=40,affine=shift,act=relu",
                                 "fp16")},
                  3, 41),
              ::testing::IsEmpty());
}

// The extended epilogue (common/epilogue.cl) through gemm.cl's two axes:
// dense (channel = column) and the 1x1 convolution's batched GEMM (channel
// = row, the residual advancing per image), with a residual of the
// output's shape, the post-activation scale and shift, leakyrelu, sigmoid
// and silu, fp32 and fp16 storage, random configs against the reference.
TEST(GemmVariants, ExtendedEpilogueMatchesReference) {
  const KernelTemplate& dense = testing::BuiltinTemplate("dense_gemm");
  const KernelTemplate& conv = testing::BuiltinTemplate("conv2d_1x1_gemm");
  uint64_t seed = 61;
  for (const char* dtype : {"fp32", "fp16"}) {
    std::vector<Workload> dense_shapes;
    for (const char* shape :
         {"M=3,N=37,K=29,affine=shift,residual=add,act=relu",
          "M=5,N=24,K=40,affine=scale_shift,act=leakyrelu,post=scale_shift",
          "M=1,N=50,K=17,residual=add,act=sigmoid",
          "M=7,N=19,K=33,affine=scale_shift,residual=add,act=silu,"
          "post=scale_shift"}) {
      dense_shapes.push_back(ParseWorkload("dense", shape, dtype));
    }
    EXPECT_THAT(testing::CheckRandomConfigs(dense, dense_shapes, 3, seed),
                ::testing::IsEmpty())
        << dtype;
    seed += 10;
    std::vector<Workload> conv_shapes;
    for (const char* shape :
         {"N=2,C=13,H=7,W=5,K=19,R=1,S=1,affine=scale_shift,residual=add,"
          "act=silu,post=scale_shift",
          "N=3,C=9,H=4,W=4,K=11,R=1,S=1,residual=add,act=leakyrelu",
          "C=6,H=3,W=7,K=10,R=1,S=1,affine=shift,act=sigmoid,"
          "post=scale_shift"}) {
      const Workload w = ParseWorkload("conv2d", shape, dtype);
      ASSERT_TRUE(conv.Accepts(w)) << shape;
      conv_shapes.push_back(w);
    }
    EXPECT_THAT(testing::CheckRandomConfigs(conv, conv_shapes, 3, seed),
                ::testing::IsEmpty())
        << dtype;
    seed += 10;
  }
}

// Runs each config on `w` and expects it to match the reference; with
// `image` set, also that making the image was timed (pack_ns > 0) where
// the device cannot view a buffer as an image (PoCL: no
// cl_khr_image2d_from_buffer, so a copy when the row length is a multiple
// of 4 and the packing kernel otherwise).
void ExpectConfigsMatch(const KernelTemplate& t, const Workload& w,
                        const std::vector<KnobValues>& configs, bool image) {
  const DeviceLimits limits = testing::DeviceLimits();
  for (const KnobValues& c : configs) {
    ASSERT_TRUE(t.CheckConfig(c, w, limits).ok())
        << w.Canonical() << " " << t.ConfigString(c);
    const Measurement m = testing::RunConfig(t, w, c);
    EXPECT_EQ(m.error(), Measurement::OK)
        << w.Canonical() << " " << t.ConfigString(c) << ": "
        << m.error_message();
    if (image && !limits.image2d_from_buffer) {
      EXPECT_GT(m.pack_ns(), 0.0) << w.Canonical() << " " << t.ConfigString(c);
    }
    if (!image) {
      EXPECT_EQ(m.pack_ns(), 0.0) << t.ConfigString(c);
    }
  }
}

// IMB=1 (B through an image2d_t) on the three templates of gemm.cl, fp32
// and fp16 storage, B's rows a multiple of 4 elements long (the copy path
// on PoCL) and not (the packing kernel), against the reference: hand-picked
// configs for each way of reading texels (vectors of 4 and 8 columns, the
// local B tile, edge columns and a partial K tile), then random ones.
TEST(GemmVariants, ImageBMatchesReferenceOnCopyAndPackPaths) {
  ASSERT_TRUE(testing::DeviceLimits().image_support);
  const char* const chosen[] = {
      "MWG=16,NWG=16,KWG=8,MWI=2,NWI=4,VW=4,SA=0,SB=0,KUNROLL=1,HALF=0,IMB=1",
      "MWG=16,NWG=32,KWG=8,MWI=2,NWI=8,VW=8,SA=1,SB=0,KUNROLL=2,HALF=0,IMB=1",
      "MWG=32,NWG=16,KWG=16,MWI=4,NWI=2,VW=1,SA=0,SB=1,KUNROLL=4,HALF=0,IMB=1",
      "MWG=16,NWG=64,KWG=8,MWI=2,NWI=8,VW=2,SA=1,SB=1,KUNROLL=8,HALF=0,IMB=1",
  };
  struct Case {
    const char* tmpl;
    const char* op;
    const char* shape;  // B's rows: gemm_n (N, or H*W) elements
  };
  const Case cases[] = {
      {"gemm_tiled", "gemm", "M=33,N=17,K=45"},  // 17: pack
      {"gemm_tiled", "gemm", "M=20,N=64,K=9"},   // 64: copy
      {"gemm_tiled", "gemm", "M=7,N=30,K=130"},  // 30: pack
      {"dense_gemm", "dense", "M=3,N=37,K=29,affine=shift,act=relu"},
      {"dense_gemm", "dense", "M=5,N=24,K=40,affine=scale_shift,act=clip"},
      {"dense_gemm", "dense",
       "M=6,N=20,K=12,residual=add,act=silu,post=scale_shift"},
      {"conv2d_1x1_gemm", "conv2d",
       "N=2,C=13,H=7,W=5,K=19,R=1,S=1,affine=scale_shift,act=relu"},
      {"conv2d_1x1_gemm", "conv2d", "N=3,C=9,H=4,W=4,K=11,R=1,S=1"},
      {"conv2d_1x1_gemm", "conv2d",
       "N=2,C=7,H=3,W=6,K=9,R=1,S=1,residual=add,act=leakyrelu"},
  };
  uint64_t seed = 51;
  for (const Case& c : cases) {
    const KernelTemplate& t = testing::BuiltinTemplate(c.tmpl);
    for (const char* dtype : {"fp32", "fp16"}) {
      const Workload w = ParseWorkload(c.op, c.shape, dtype);
      // fp16: a texel vector and the local tile (halves read as floats),
      // to keep the test short; fp32: every chosen config.
      const bool half = std::string(dtype) == "fp16";
      std::vector<KnobValues> configs;
      for (size_t i = 0; i < std::size(chosen); ++i) {
        if (!half || i % 2 == 0) configs.push_back(*t.ParseConfig(chosen[i]));
      }
      const size_t picked = configs.size();
      for (KnobValues& r :
           testing::RandomConfigsWith(t, w, "IMB", 1, 2, seed++)) {
        configs.push_back(std::move(r));
      }
      ASSERT_GT(configs.size(), picked) << w.Canonical();
      ExpectConfigsMatch(t, w, configs, true);
      // The first config again, reading B from the buffer: nothing to make.
      const size_t imb = t.knobs().size() - 1;
      ASSERT_EQ(t.knobs()[imb].name, "IMB");
      configs[0][imb] = 0;
      ExpectConfigsMatch(t, w, {configs[0]}, false);
    }
  }
}

// gemm_gpu: every constraint class, odd and edge shapes (M, N, K not
// multiples of any tile; N, K odd force LOADV = 1), double buffering on
// and off, against the reference on PoCL.
TEST(GemmGpuTemplate, RandomConfigsMatchReferenceOnOddShapes) {
  const KernelTemplate& t = testing::BuiltinTemplate("gemm_gpu");
  std::vector<Workload> shapes;
  for (const char* s :
       {"M=1,N=1,K=1", "M=7,N=13,K=3", "M=33,N=20,K=36", "M=64,N=64,K=64",
        "M=100,N=72,K=44", "M=130,N=129,K=67"}) {
    shapes.push_back(*Workload::Parse("gemm", s));
  }
  EXPECT_THAT(testing::CheckRandomConfigs(t, shapes, 6, 21),
              ::testing::IsEmpty());
  // Warp-tiled configs, which random draws rarely hit at small shapes.
  KnobValues warp = {64, 64, 16, 4, 4, 1, 1, 1, 1, 0, 1};
  for (const Workload& w : {shapes[4], shapes[5]}) {
    ASSERT_TRUE(t.CheckConfig(warp, w, testing::DeviceLimits()).ok());
    EXPECT_EQ(testing::RunConfig(t, w, warp).error(), Measurement::OK)
        << w.Canonical();
  }
  // The big tiles that win on an H200: 16 x 8 register tiles with float4
  // local and global accesses, over edges in M, N and K.
  const Workload edges = *Workload::Parse("gemm", "M=140,N=136,K=44");
  for (const KnobValues& big :
       {KnobValues{128, 128, 8, 16, 8, 4, 1, 1, 1, 0, 1},
        KnobValues{128, 256, 16, 8, 16, 4, 0, 1, 1, 0, 1},
        KnobValues{128, 128, 16, 8, 8, 4, 0, 1, 0, 0, 1},
        // ASYNC configs build the DB path on PoCL
        // (cp.async is NVIDIA's alone).
        KnobValues{128, 128, 16, 16, 8, 4, 1, 1, 0, 2, 1},
        KnobValues{64, 64, 16, 8, 8, 4, 1, 1, 0, 3, 1}}) {
    ASSERT_TRUE(t.CheckConfig(big, edges, testing::DeviceLimits()).ok())
        << t.ConfigString(big);
    EXPECT_EQ(testing::RunConfig(t, edges, big).error(), Measurement::OK)
        << t.ConfigString(big);
  }
}

// Split-K: KSPLIT work-groups per C tile add their slices through the
// scratch W and S. Each config runs three times on the same buffers: the
// tile counters must be back at zero after every launch, or the next
// launch writes no C and verification sees the NaNs it was poisoned with.
TEST(GemmGpuTemplate, SplitKMatchesReferenceLaunchAfterLaunch) {
  const KernelTemplate& t = testing::BuiltinTemplate("gemm_gpu");
  // BM BN BK TM TN LOADV DB STRN WTILE ASYNC KSPLIT
  const KnobValues configs[] = {
      {64, 64, 16, 8, 8, 4, 1, 1, 0, 0, 2},
      {64, 64, 16, 8, 8, 4, 1, 1, 0, 3, 4},
      {32, 64, 16, 4, 4, 4, 0, 1, 1, 0, 4},
      {64, 64, 8, 8, 8, 1, 0, 0, 0, 0, 2},
      {64, 64, 8, 8, 8, 4, 1, 1, 0, 2, 4},
  };
  // One or two C tiles (fewer than two a compute unit), edges in M and N,
  // uneven slices (K = 176: 11 K tiles of 16 in 6 + 5 or 3 + 3 + 3 + 2; 22
  // of 8 in 6 + 6 + 6 + 4).
  for (const char* shape :
       {"M=64,N=64,K=256", "M=40,N=36,K=128", "M=64,N=64,K=176"}) {
    const Workload w = *Workload::Parse("gemm", shape);
    for (const KnobValues& c : configs) {
      ASSERT_TRUE(t.CheckConfig(c, w, testing::DeviceLimits()).ok())
          << shape << " " << t.ConfigString(c) << ": "
          << t.CheckConfig(c, w, testing::DeviceLimits());
      for (int launch = 0; launch < 3; ++launch) {
        const Measurement m = testing::RunConfig(t, w, c);
        EXPECT_EQ(m.error(), Measurement::OK)
            << shape << " " << t.ConfigString(c) << " launch " << launch << ": "
            << m.error_message();
      }
    }
  }
}

}  // namespace
}  // namespace tunefleet::templates
