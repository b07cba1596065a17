// The GEMM templates off the device: gemm_gpu's constraints and launch
// geometry; the gemm.cl family's (gemm_tiled, dense_gemm, conv2d_1x1_gemm)
// half-arithmetic knob HALF and image knob IMB.
#include <iterator>
#include <map>
#include <random>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "contract/timing_policy.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernels_templates/registry.h"
#include "measure/measurer.h"
#include "tests/support/template_fixtures.h"

namespace tunefleet::templates {
namespace {

using ::testing::HasSubstr;

TEST(GemmGpuTemplate, ConstraintsAndGeometry) {
  const KernelTemplate& t = testing::BuiltinTemplate("gemm_gpu");
  const Workload w = *Workload::Parse("gemm", "M=256,N=256,K=256");
  // BM BN BK TM TN LOADV DB STRN WTILE ASYNC
  const KnobValues big = {128, 128, 16, 8, 8, 4, 1, 1, 1, 0, 1};
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
  EXPECT_TRUE(t.CheckConfig({32, 32, 8, 8, 8, 4, 0, 1, 0, 0, 1}, w,
                            testing::GpuLimits(1024, 64, 132))
                  .ok());
  // BM BN BK TM TN LOADV DB STRN WTILE ASYNC, and the reason it is refused.
  const std::pair<KnobValues, const char*> refusals[] = {
      {{128, 128, 8, 2, 2, 4, 0, 0, 0, 0, 1}, "more than 256 work-items"},
      {{256, 256, 8, 16, 16, 4, 0, 1, 0, 0, 1}, "more than 128 accumulators"},
      {{64, 64, 8, 8, 2, 1, 0, 1, 0, 0, 1}, "STRN needs TN % 4 == 0"},
      {{32, 32, 8, 8, 8, 4, 0, 1, 1, 0, 1}, "WTILE needs"},
      {{128, 128, 16, 16, 8, 4, 0, 1, 0, 2, 1}, "ASYNC needs DB = 1"},
      {{128, 128, 16, 16, 8, 2, 1, 1, 0, 2, 1},
       "ASYNC needs DB = 1 and LOADV = 4"},
  };
  for (const auto& [config, reason] : refusals) {
    EXPECT_THAT(
        std::string(t.CheckConfig(config, w, testing::GpuLimits(1024, 64, 132))
                        .message()),
        ::testing::HasSubstr(reason));
  }
  // ASYNC = 2: two 16-deep stages (33,280 bytes) fit 48 KiB, and the
  // stage count reaches the kernel.
  const KnobValues async = {128, 128, 16, 16, 8, 4, 1, 1, 0, 2, 1};
  ASSERT_TRUE(t.CheckConfig(async, w, testing::GpuLimits(1024, 48, 132)).ok());
  EXPECT_THAT(t.Launch(async, w).build_options, HasSubstr("-DASYNC=2"));
  // Three such stages: 49,920 bytes, over 48 KiB.
  EXPECT_THAT(std::string(t.CheckConfig({128, 128, 16, 16, 8, 4, 1, 1, 0, 3, 1},
                                        w, testing::GpuLimits(1024, 48, 132))
                              .message()),
              HasSubstr("local memory"));
  EXPECT_FALSE(t.Accepts(*Workload::Parse("gemm", "M=8,N=8,K=8", "fp16")));
}

// Split-K: the launch has KSPLIT work-group rows per block row, the scratch
// W and S are zero-filled, unverified buffers, and the constraint admits
// KSPLIT > 1 only where C tiles leave compute units idle.
TEST(GemmGpuTemplate, SplitKGeometryAndScratch) {
  const KernelTemplate& t = testing::BuiltinTemplate("gemm_gpu");
  const templates::DeviceLimits h200 = testing::GpuLimits(1024, 64, 132);
  const Workload w = *Workload::Parse("gemm", "M=1024,N=1024,K=1024");
  // BM BN BK TM TN LOADV DB STRN WTILE ASYNC KSPLIT
  const KnobValues split = {64, 128, 16, 8, 8, 4, 1, 1, 0, 2, 4};
  ASSERT_TRUE(t.CheckConfig(split, w, h200).ok());
  const LaunchDesc l = t.Launch(split, w);
  EXPECT_EQ(l.global, (std::vector<uint64_t>{8 * 16, 16 * 8 * 4}));
  EXPECT_THAT(l.build_options, HasSubstr("-DKSPLIT=4"));
  std::map<std::string, BufferDesc> buffers;
  for (const BufferDesc& b : t.Buffers(w)) buffers[b.name] = b;
  ASSERT_EQ(buffers.count("W"), 1u);
  EXPECT_EQ(buffers["W"].elements, 4u * 1024 * 1024);
  EXPECT_TRUE(buffers["W"].zero_fill);
  EXPECT_FALSE(buffers["W"].output);
  EXPECT_EQ(buffers["S"].elements, 32u * 32);
  EXPECT_TRUE(buffers["S"].zero_fill);
  EXPECT_FALSE(buffers["A"].zero_fill);
  // 4096^2 has 256 tiles of 256 x 256 and more: no split, and no scratch.
  const Workload big = *Workload::Parse("gemm", "M=4096,N=4096,K=4096");
  EXPECT_THAT(std::string(t.CheckConfig({128, 128, 16, 16, 8, 4, 1, 1, 0, 2, 2},
                                        big, h200)
                              .message()),
              HasSubstr("KSPLIT > 1 needs"));
  for (const BufferDesc& b : t.Buffers(big)) {
    if (b.zero_fill) {
      EXPECT_EQ(b.elements, 1u) << b.name;
    }
  }
  // K must split into whole K tiles: 1000 is no multiple of 16.
  EXPECT_FALSE(t.CheckConfig(split,
                             *Workload::Parse("gemm", "M=1024,N=1024,K=1000"),
                             h200)
                   .ok());
  // Four slices of 5 K tiles (2, 2, 1 and none) leave the last without one;
  // of 6 (2, 2, 2, 0) too; of 7 (2, 2, 2, 1) not.
  EXPECT_TRUE(t.CheckConfig(
                   split, *Workload::Parse("gemm", "M=1024,N=1024,K=112"), h200)
                  .ok());
  EXPECT_FALSE(
      t.CheckConfig(split, *Workload::Parse("gemm", "M=1024,N=1024,K=96"), h200)
          .ok());
  EXPECT_FALSE(
      t.CheckConfig(split, *Workload::Parse("gemm", "M=1024,N=1024,K=80"), h200)
          .ok());
}

// A template of the gemm.cl family and a workload of its op whose matrix
// problem is M x N x K (conv2d_1x1_gemm: K output channels, C = K input
// channels, H*W = N, `batch` images).
struct GemmFamilyCase {
  const char* name;
  Workload (*workload)(int64_t m, int64_t n, int64_t k, const char* dtype);
};

Workload GemmWorkload(int64_t m, int64_t n, int64_t k, const char* dtype) {
  return *Workload::Parse("gemm", absl::StrCat("M=", m, ",N=", n, ",K=", k),
                          dtype);
}
Workload DenseWorkload(int64_t m, int64_t n, int64_t k, const char* dtype) {
  return *Workload::Parse("dense", absl::StrCat("M=", m, ",N=", n, ",K=", k),
                          dtype);
}
// Two images of C = k channels of 1 x n pixels into m channels.
Workload OneByOneWorkload(int64_t m, int64_t n, int64_t k, const char* dtype) {
  return *Workload::Parse(
      "conv2d", absl::StrCat("N=2,C=", k, ",H=1,W=", n, ",K=", m, ",R=1,S=1"),
      dtype);
}

constexpr GemmFamilyCase kGemmFamily[] = {
    {"gemm_tiled", GemmWorkload},
    {"dense_gemm", DenseWorkload},
    {"conv2d_1x1_gemm", OneByOneWorkload},
};

// A config of the family with the given VW, SB, HALF and IMB.
std::string FamilyConfig(int vw, int sb, int half, int imb) {
  return absl::StrCat("MWG=16,NWG=16,KWG=8,MWI=2,NWI=8,VW=", vw,
                      ",SA=0,SB=", sb, ",KUNROLL=1,HALF=", half, ",IMB=", imb);
}

// A GPU with images of up to 16384 x 16384 texels.
DeviceLimits ImageGpu() {
  DeviceLimits d = testing::GpuLimits();
  d.image_support = true;
  d.image2d_max_width = 16384;
  d.image2d_max_height = 16384;
  return d;
}

// HALF=1 needs fp16 storage and a device listing cl_khr_fp16; no device
// tunefleet is tested on lists it, so these checks are all it gets here.
TEST(GemmFamily, HalfArithmeticNeedsFp16StorageAndTheExtension) {
  DeviceLimits plain = ImageGpu();
  DeviceLimits with_fp16 = plain;
  with_fp16.fp16 = true;
  for (const GemmFamilyCase& c : kGemmFamily) {
    const KernelTemplate& t = testing::BuiltinTemplate(c.name);
    const Workload half = c.workload(64, 64, 64, "fp16");
    const Workload single = c.workload(64, 64, 64, "fp32");
    const std::string on = FamilyConfig(4, 0, 1, 0);
    EXPECT_TRUE(testing::CheckText(t, half, with_fp16, on.c_str()).ok())
        << c.name;
    EXPECT_THAT(
        std::string(testing::CheckText(t, half, plain, on.c_str()).message()),
        HasSubstr("cl_khr_fp16"))
        << c.name;
    EXPECT_THAT(
        std::string(
            testing::CheckText(t, single, with_fp16, on.c_str()).message()),
        HasSubstr("fp16 storage"))
        << c.name;
    // HALF=0 stays valid everywhere; the knob reaches the kernel.
    EXPECT_TRUE(
        testing::CheckText(t, single, plain, FamilyConfig(4, 0, 0, 0).c_str())
            .ok())
        << c.name;
    const LaunchDesc l = t.Launch(*t.ParseConfig(on), half);
    EXPECT_THAT(l.build_options, HasSubstr("-DHALF=1")) << c.name;
    // Local tiles of half take half the bytes: 8 x 16 halves of B.
    const KnobValues staged = *t.ParseConfig(FamilyConfig(4, 1, 1, 0));
    DeviceLimits tiny = with_fp16;
    tiny.local_mem_bytes = 8 * 16 * 2;
    EXPECT_TRUE(t.CheckConfig(staged, half, tiny).ok()) << c.name;
    tiny.local_mem_bytes -= 1;
    EXPECT_FALSE(t.CheckConfig(staged, half, tiny).ok()) << c.name;
  }
}

// IMB=1 reads B through an image: VW >= 4 or SB=1, a device with images
// that hold ceil(N/4) x batch*K texels; the launch passes B as an image.
TEST(GemmFamily, ImageKnobChecksTheDeviceAndPassesBAsAnImage) {
  const DeviceLimits images = ImageGpu();
  const char* const b_buffers[] = {"B", "weight", "input"};
  for (size_t i = 0; i < std::size(kGemmFamily); ++i) {
    const GemmFamilyCase& c = kGemmFamily[i];
    const KernelTemplate& t = testing::BuiltinTemplate(c.name);
    const Workload w = c.workload(20, 30, 50, "fp32");
    const uint64_t rows = c.workload == OneByOneWorkload ? 2 * 50 : 50;
    for (const auto& [vw, sb] : {std::pair{4, 0}, {8, 0}, {1, 1}, {2, 1}}) {
      EXPECT_TRUE(
          testing::CheckText(t, w, images, FamilyConfig(vw, sb, 0, 1).c_str())
              .ok())
          << c.name << " VW=" << vw << " SB=" << sb;
    }
    EXPECT_THAT(std::string(testing::CheckText(t, w, images,
                                               FamilyConfig(2, 0, 0, 1).c_str())
                                .message()),
                HasSubstr("VW >= 4 or SB=1"))
        << c.name;
    const std::string on = FamilyConfig(4, 0, 0, 1);
    EXPECT_THAT(
        std::string(testing::CheckText(t, w, testing::GpuLimits(), on.c_str())
                        .message()),
        HasSubstr("image support"))
        << c.name;
    // One texel more than the device's width, one row more than its height.
    const Workload wide = c.workload(20, 4 * 16384 + 1, 50, "fp32");
    EXPECT_THAT(
        std::string(testing::CheckText(t, wide, images, on.c_str()).message()),
        HasSubstr("image2d maximum"))
        << c.name;
    const Workload tall = c.workload(
        20, 30, c.workload == OneByOneWorkload ? 8193 : 16385, "fp32");
    EXPECT_THAT(
        std::string(testing::CheckText(t, tall, images, on.c_str()).message()),
        HasSubstr("image2d maximum"))
        << c.name;

    const LaunchDesc image = t.Launch(*t.ParseConfig(on), w);
    ASSERT_GE(image.args.size(), 5u);
    EXPECT_EQ(image.args[4].kind, ArgDesc::Kind::kImage) << c.name;
    EXPECT_EQ(image.args[4].buffer, b_buffers[i]);
    EXPECT_EQ(image.args[4].rows, rows) << c.name;
    EXPECT_EQ(image.args[4].row_elements, 30u) << c.name;
    EXPECT_THAT(image.build_options, HasSubstr("-DIMB=1 -DIMAGE_READS=1"));
    const LaunchDesc buffer =
        t.Launch(*t.ParseConfig(FamilyConfig(4, 0, 0, 0)), w);
    EXPECT_EQ(buffer.args[4].kind, ArgDesc::Kind::kBuffer) << c.name;
    EXPECT_EQ(buffer.args[4].buffer, b_buffers[i]);
    EXPECT_THAT(buffer.build_options, HasSubstr("-DIMB=0 -DIMAGE_READS=0"));
  }
}

}  // namespace
}  // namespace tunefleet::templates
