// The direct convolution templates (conv2d_direct, depthwise_direct) off the
// device: shape arithmetic, workload and config checks, derived features
// and template selection.
#include <string>
#include <tuple>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernels_templates/builtin_templates.h"
#include "kernels_templates/registry.h"
#include "tests/support/template_fixtures.h"

namespace tunefleet::templates {
namespace {

using testing::CheckText;
using testing::ExpectRefusals;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

// Limits of a small GPU-like device, for constraint checks off the device:
// at most 16 work-items along the third dimension.
DeviceLimits SmallDevice() {
  DeviceLimits d = testing::GpuLimits(256, 32, 8);
  d.max_work_item_sizes[2] = 16;
  return d;
}

// A conv2d_direct config and a depthwise_direct one, every knob fixed but
// HALF (half arithmetic), IMI (the input read as an image) and, for the
// depthwise one, LI.
std::string ConvConfig(int half, int imi) {
  return absl::StrCat(
      "KWI=2,KWG=4,PWI=2,QWI=4,WGP=4,WGQ=4,VW=4,CB=1,LI=0,LW=0,UNROLL=1,HALF=",
      half, ",IMI=", imi);
}
std::string DepthwiseConfig(int li, int half, int imi) {
  return absl::StrCat("PWI=2,QWI=4,WGP=4,WGQ=4,CWG=2,VW=4,LI=", li,
                      ",UNROLL=1,HALF=", half, ",IMI=", imi, ",RT=0");
}

// The output size of a square convolution along one axis, as
// conv2d_direct computes it: its reference launch runs one work-item per
// output column and row.
int64_t OutputSize(int in, int kernel, int stride, int pad, int dilation) {
  const Workload w = testing::Conv(
      absl::StrCat("C=1,K=1,H=", in, ",W=", in, ",R=", kernel, ",S=", kernel,
                   ",SH=", stride, ",SW=", stride, ",PH=", pad, ",PW=", pad,
                   ",DH=", dilation, ",DW=", dilation));
  const LaunchDesc l = testing::Conv2dDirect().ReferenceLaunch(w);
  EXPECT_EQ(l.global[0], l.global[1]) << w.Canonical();
  return static_cast<int64_t>(l.global[1]);
}

TEST(ConvShapes, OutputSizeFollowsTheOnnxFormula) {
  EXPECT_EQ(OutputSize(7, 3, 1, 1, 1), 7);   // "same" 3x3
  EXPECT_EQ(OutputSize(13, 5, 2, 2, 1), 7);  // (13+4-4-1)/2+1
  EXPECT_EQ(OutputSize(14, 3, 2, 1, 1), 7);  // (14+2-2-1)/2+1, floor
  EXPECT_EQ(OutputSize(9, 3, 1, 2, 2), 9);   // dilation 2, pad 2
  EXPECT_EQ(OutputSize(1, 3, 1, 1, 1), 1);   // 1x1 image, pad 1
  EXPECT_EQ(OutputSize(4, 3, 2, 0, 1), 1);   // (4-2-1)/2+1
  EXPECT_EQ(OutputSize(5, 3, 1, 0, 3), 0);   // window 7 > 5: empty
  const Workload w =
      testing::Conv("C=4,H=13,W=7,K=8,R=5,S=3,SH=2,PH=2,PW=1,DW=2");
  const LaunchDesc l = testing::Conv2dDirect().ReferenceLaunch(w);
  EXPECT_EQ(l.global[1], 7u);  // P
  EXPECT_EQ(l.global[0], 5u);  // Q = (7+2-4-1)/1+1
  // The local input tile of 4 x 4 outputs: (4-1)*SH + (R-1)*DH + 1 = 11
  // rows by (4-1)*SW + (S-1)*DW + 1 = 8 columns of floats, which a device
  // of 4 KiB local memory sees as that fraction of it.
  DeviceLimits device = SmallDevice();
  device.local_mem_bytes = 4096;
  const KnobValues tile = *testing::Conv2dDirect().ParseConfig(
      "KWI=1,KWG=1,PWI=1,QWI=1,WGP=4,WGQ=4,VW=1,CB=1,LI=1,LW=0,UNROLL=1,HALF=0,"
      "IMI=0");
  double fraction = -1;
  for (const Feature& f :
       testing::Conv2dDirect().DerivedFeatures(tile, w, device)) {
    if (f.name == "local_mem_fraction") fraction = f.value;
  }
  EXPECT_EQ(fraction * 4096, 11.0 * 8 * 4);
}

TEST(ConvShapes, FlopsAndBytes) {
  const KernelTemplate& conv = testing::Conv2dDirect();
  const KernelTemplate& dw = testing::DepthwiseDirect();
  // P = 7, Q = 4, C/G = 2.
  const Workload c =
      testing::Conv("N=2,C=4,H=13,W=7,K=8,R=5,S=5,SH=2,SW=2,PH=2,PW=2,G=2");
  EXPECT_EQ(conv.Flops(c), 2.0 * 2 * 8 * 7 * 4 * 2 * 25);
  EXPECT_EQ(conv.Bytes(c), 4.0 * (2 * 4 * 13 * 7 + 8 * 2 * 25 + 2 * 8 * 7 * 4));
  const Workload d = testing::Depthwise(
      "N=2,C=5,H=13,W=7,R=5,S=5,SH=2,SW=2,PH=2,PW=2", "fp16");
  EXPECT_EQ(dw.Flops(d), 2.0 * 2 * 5 * 7 * 4 * 25);
  EXPECT_EQ(dw.Bytes(d), 2.0 * (2 * 5 * 13 * 7 + 5 * 25 + 2 * 5 * 7 * 4));
  EXPECT_EQ(dw.Tolerance(d), 1e-2);
  EXPECT_EQ(conv.Tolerance(c), 1e-4);
}

TEST(ConvChecks, WorkloadRefusals) {
  const KernelTemplate& conv = testing::Conv2dDirect();
  const KernelTemplate& dw = testing::DepthwiseDirect();
  const DeviceLimits limits = SmallDevice();
  const Workload bad_c = testing::Conv("C=6,H=8,W=8,K=8,R=3,S=3,G=4");
  const Workload bad_k = testing::Conv("C=8,H=8,W=8,K=6,R=3,S=3,G=4");
  for (const Workload& w : {bad_c, bad_k}) {
    EXPECT_TRUE(conv.Accepts(w));  // the op is ours; the shape is refused
    const absl::Status s = conv.CheckWorkload(w, limits);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(s.message(), HasSubstr("G=4 must divide"));
  }
  EXPECT_TRUE(
      conv.CheckWorkload(testing::Conv("C=8,H=8,W=8,K=4,R=3,S=3,G=4"), limits)
          .ok());
  // The dilated window does not fit in the padded input.
  const absl::Status empty =
      conv.CheckWorkload(testing::Conv("C=2,H=4,W=9,K=2,R=3,S=3,DH=2"), limits);
  EXPECT_THAT(empty.message(), HasSubstr("output is empty"));
  EXPECT_FALSE(
      dw.CheckWorkload(testing::Depthwise("C=2,H=9,W=2,R=3,S=3"), limits).ok());
  // Buffers over the max allocation.
  DeviceLimits tiny = limits;
  tiny.max_mem_alloc_bytes = 1024;
  EXPECT_THAT(
      conv.CheckWorkload(testing::Conv("C=8,H=16,W=16,K=8,R=3,S=3"), tiny)
          .message(),
      HasSubstr("max allocation"));
  // Ops of the other template.
  EXPECT_FALSE(conv.Accepts(testing::Depthwise("C=2,H=5,W=5,R=3,S=3")));
  EXPECT_FALSE(dw.Accepts(testing::Conv("C=2,H=5,W=5,K=2,R=3,S=3")));
  EXPECT_FALSE(
      dw.CheckWorkload(testing::Conv("C=2,H=5,W=5,K=2,R=3,S=3"), limits).ok());
}

TEST(ConvChecks, ConfigConstraints) {
  const KernelTemplate& conv = testing::Conv2dDirect();
  const KernelTemplate& dw = testing::DepthwiseDirect();
  const DeviceLimits limits = SmallDevice();
  const Workload c = testing::Conv("C=16,H=24,W=24,K=32,R=3,S=3,PH=1,PW=1");
  EXPECT_TRUE(CheckText(conv, c, limits,
                        "KWI=4,KWG=16,PWI=2,QWI=4,WGP=4,WGQ=8,VW=4,CB=4,LI=1,"
                        "LW=1,UNROLL=2,HALF=0,IMI=0")
                  .ok());
  ExpectRefusals(conv, c, limits,
                 {{"KWI=8,KWG=4,PWI=1,QWI=1,WGP=1,WGQ=1,VW=1,CB=1,LI=0,LW=0,"
                   "UNROLL=1,HALF=0,IMI=0",
                   "KWI must divide KWG"},
                  {"KWI=1,KWG=1,PWI=1,QWI=2,WGP=1,WGQ=1,VW=4,CB=1,LI=0,LW=0,"
                   "UNROLL=1,HALF=0,IMI=0",
                   "VW must divide QWI"},
                  {"KWI=8,KWG=8,PWI=4,QWI=4,WGP=1,WGQ=1,VW=1,CB=1,LI=0,LW=0,"
                   "UNROLL=1,HALF=0,IMI=0",
                   "register tile"},
                  {"KWI=1,KWG=1,PWI=1,QWI=1,WGP=1,WGQ=1,VW=1,CB=2,LI=0,LW=0,"
                   "UNROLL=1,HALF=0,IMI=0",
                   "CB > 1"},
                  // 32 x 8 x 2 = 512 work-items > 256.
                  {"KWI=1,KWG=2,PWI=1,QWI=1,WGP=8,WGQ=32,VW=1,CB=1,LI=0,LW=0,"
                   "UNROLL=1,HALF=0,IMI=0",
                   "work-group size"},
                  // 32 work-items along dim 2 (channels), over the device's 16.
                  {"KWI=1,KWG=32,PWI=1,QWI=1,WGP=1,WGQ=4,VW=1,CB=1,LI=0,LW=0,"
                   "UNROLL=1,HALF=0,IMI=0",
                   "work-item sizes"},
                  // Input tile 8 x 18 x 130 floats = 73 KiB > 32 KiB.
                  {"KWI=1,KWG=1,PWI=4,QWI=8,WGP=4,WGQ=16,VW=1,CB=8,LI=1,LW=0,"
                   "UNROLL=1,HALF=0,IMI=0",
                   "local memory"}});
  // UNROLL beyond the taps of a 1x1 (stride 2) convolution.
  ExpectRefusals(conv, testing::Conv("C=4,H=8,W=8,K=4,R=1,S=1,SH=2,SW=2"),
                 limits,
                 {{"KWI=1,KWG=1,PWI=1,QWI=1,WGP=1,WGQ=1,VW=1,CB=1,LI=0,LW=0,"
                   "UNROLL=2,HALF=0,IMI=0",
                   "UNROLL"}});

  const Workload d = testing::Depthwise("C=32,H=24,W=24,R=3,S=3,PH=1,PW=1");
  EXPECT_TRUE(
      CheckText(
          dw, d, limits,
          "PWI=2,QWI=4,WGP=4,WGQ=8,CWG=4,VW=4,LI=1,UNROLL=4,HALF=0,IMI=0,RT=0")
          .ok());
  ExpectRefusals(
      dw, d, limits,
      {{"PWI=1,QWI=2,WGP=4,WGQ=8,CWG=4,VW=4,LI=0,UNROLL=1,HALF=0,IMI=0,RT=0",
        "VW must divide QWI"},
       {"PWI=1,QWI=1,WGP=16,WGQ=32,CWG=1,VW=1,LI=0,UNROLL=1,HALF=0,IMI=0,RT=0",
        "work-group size"},
       {"PWI=4,QWI=8,WGP=4,WGQ=8,CWG=8,VW=1,LI=1,UNROLL=1,HALF=0,IMI=0,RT=0",
        "local memory"},
       {"PWI=2,QWI=4,WGP=4,WGQ=8,CWG=4,VW=4,LI=1,UNROLL=1,HALF=0,IMI=0,RT=1",
        "RT=1"},
       {"PWI=2,QWI=4,WGP=4,WGQ=8,CWG=4,VW=4,LI=0,UNROLL=2,HALF=0,IMI=0,RT=1",
        "RT=1"}});
  EXPECT_TRUE(
      CheckText(
          dw, d, limits,
          "PWI=2,QWI=4,WGP=4,WGQ=8,CWG=4,VW=4,LI=0,UNROLL=1,HALF=0,IMI=0,RT=1")
          .ok());
}

TEST(ConvChecks, DerivedFeaturesHaveFixedNamesAndSaneValues) {
  const KernelTemplate& conv = testing::Conv2dDirect();
  const KernelTemplate& dw = testing::DepthwiseDirect();
  const DeviceLimits limits = SmallDevice();
  const Workload c = testing::Conv("N=1,C=16,H=24,W=96,K=32,R=3,S=3,PH=1,PW=1");
  const KnobValues a = *conv.ParseConfig(
      "KWI=4,KWG=8,PWI=2,QWI=4,WGP=4,WGQ=8,VW=4,CB=1,LI=0,LW=0,UNROLL=1,HALF=0,"
      "IMI=0");
  const KnobValues b = *conv.ParseConfig(
      "KWI=1,KWG=1,PWI=1,QWI=1,WGP=1,WGQ=1,VW=1,CB=4,LI=1,LW=1,UNROLL=8,HALF=0,"
      "IMI=0");
  const auto fa = conv.DerivedFeatures(a, c, limits);
  const auto fb = conv.DerivedFeatures(b, c, limits);
  ASSERT_EQ(fa.size(), fb.size());
  for (size_t i = 0; i < fa.size(); ++i) EXPECT_EQ(fa[i].name, fb[i].name);
  // Config a: 8 x 4 x 2 = 64 work-items per group, tiles of 8 channels x 8
  // rows x 32 columns: 4 x 3 x 3 = 36 groups, no padding work.
  EXPECT_DOUBLE_EQ(fa[0].value, 6.0);            // log2_work_group_size
  EXPECT_DOUBLE_EQ(fa[1].value, std::log2(36));  // log2_work_groups
  EXPECT_DOUBLE_EQ(fa[3].value, 5.0);            // log2_register_tile
  EXPECT_DOUBLE_EQ(fa[10].value, 1.0);           // padding_factor
  EXPECT_GT(fa[6].value, fb[6].value);           // arithmetic intensity
  EXPECT_GT(fb[4].value, 0.0);                   // local memory in use
  const auto fd = dw.DerivedFeatures(
      *dw.ParseConfig(
          "PWI=2,QWI=4,WGP=4,WGQ=8,CWG=2,VW=4,LI=1,UNROLL=4,HALF=0,IMI=0,RT=0"),
      testing::Depthwise("C=32,H=24,W=96,R=3,S=3,PH=1,PW=1"), limits);
  EXPECT_EQ(fd.size(), fa.size());
  EXPECT_DOUBLE_EQ(fd[10].value, 1.0);
}

TEST(ConvChecks, RegistryPicksTheSpecialisedTemplateFirst) {
  auto pick = [](const Workload& w) {
    auto t = FindTemplateFor(w, "");
    EXPECT_TRUE(t.ok()) << t.status();
    return t.ok() ? std::string((*t)->name()) : std::string();
  };
  EXPECT_EQ(pick(testing::Conv("C=16,H=8,W=8,K=32,R=1,S=1")),
            "conv2d_1x1_gemm");
  EXPECT_EQ(pick(testing::Conv("C=16,H=8,W=8,K=32,R=3,S=3,PH=1,PW=1")),
            "conv2d_direct");
  // 1x1 convolutions the GEMM does not take.
  EXPECT_EQ(pick(testing::Conv("C=16,H=8,W=8,K=32,R=1,S=1,SH=2,SW=2")),
            "conv2d_direct");
  EXPECT_EQ(pick(testing::Conv("C=16,H=8,W=8,K=32,R=1,S=1,G=2")),
            "conv2d_direct");
  EXPECT_EQ(pick(testing::Depthwise("C=16,H=8,W=8,R=3,S=3,PH=1,PW=1")),
            "depthwise_direct");
  auto named = FindTemplateFor(testing::Conv("C=4,H=8,W=8,K=4,R=1,S=1"),
                               "conv2d_direct");
  ASSERT_TRUE(named.ok()) << named.status();
}

// HALF=1 (half arithmetic) needs fp16 storage and a device listing
// cl_khr_fp16; no device tunefleet is tested on lists it, so these checks
// are all it gets here.
TEST(ConvChecks, HalfArithmeticNeedsFp16StorageAndTheExtension) {
  const DeviceLimits plain = SmallDevice();
  DeviceLimits with_fp16 = plain;
  with_fp16.fp16 = true;
  const std::string shape = "C=16,H=24,W=24,R=3,S=3,PH=1,PW=1";
  for (const auto& [tmpl, w16, w32, config] :
       {std::tuple{&testing::Conv2dDirect(),
                   testing::Conv(shape + ",K=32", "fp16"),
                   testing::Conv(shape + ",K=32", "fp32"), ConvConfig(1, 0)},
        std::tuple{
            &testing::DepthwiseDirect(), testing::Depthwise(shape, "fp16"),
            testing::Depthwise(shape, "fp32"), DepthwiseConfig(0, 1, 0)}}) {
    EXPECT_TRUE(CheckText(*tmpl, w16, with_fp16, config.c_str()).ok())
        << tmpl->name();
    EXPECT_THAT(CheckText(*tmpl, w16, plain, config.c_str()).message(),
                HasSubstr("cl_khr_fp16"));
    EXPECT_THAT(CheckText(*tmpl, w32, with_fp16, config.c_str()).message(),
                HasSubstr("fp16 storage"));
    EXPECT_THAT(tmpl->Launch(*tmpl->ParseConfig(config), w16).build_options,
                HasSubstr("-DHALF=1"));
  }
}

// IMI=1 reads the input through an image of ceil(W/4) x N*C*H texels: the
// device must have images that large; the launch passes the input as one.
TEST(ConvChecks, ImageKnobChecksTheDeviceAndPassesTheInputAsAnImage) {
  DeviceLimits images = SmallDevice();
  images.image_support = true;
  images.image2d_max_width = 16384;
  images.image2d_max_height = 16384;
  // 2 x 16 x 23 = 736 rows of ceil(21/4) = 6 texels.
  const std::string shape = "N=2,C=16,H=23,W=21,R=3,S=3,PH=1,PW=1";
  // 2 x 16 x 513 = 16416 rows: one device row short.
  const std::string tall = "N=2,C=16,H=513,W=21,R=3,S=3,PH=1,PW=1";
  // ceil(65540 / 4) = 16385 texels per row: one texel too wide.
  const std::string wide = "N=1,C=1,H=3,W=65540,R=3,S=3";
  for (const auto& [tmpl, is_conv, config, arg] :
       {std::tuple{&testing::Conv2dDirect(), true, ConvConfig(0, 1), 16},
        std::tuple{&testing::DepthwiseDirect(), false, DepthwiseConfig(1, 0, 1),
                   14}}) {
    auto parse = [&](const std::string& s) {
      return is_conv ? testing::Conv(s + ",K=16") : testing::Depthwise(s);
    };
    const Workload w = parse(shape);
    EXPECT_TRUE(CheckText(*tmpl, w, images, config.c_str()).ok())
        << tmpl->name();
    EXPECT_THAT(CheckText(*tmpl, w, SmallDevice(), config.c_str()).message(),
                HasSubstr("image support"));
    EXPECT_THAT(CheckText(*tmpl, parse(tall), images, config.c_str()).message(),
                HasSubstr("image2d maximum"));
    EXPECT_THAT(CheckText(*tmpl, parse(wide), images, config.c_str()).message(),
                HasSubstr("image2d maximum"));

    const LaunchDesc l = tmpl->Launch(*tmpl->ParseConfig(config), w);
    ASSERT_GT(l.args.size(), static_cast<size_t>(arg));
    EXPECT_EQ(l.args[arg].kind, ArgDesc::Kind::kImage) << tmpl->name();
    EXPECT_EQ(l.args[arg].buffer, "input");
    EXPECT_EQ(l.args[arg].rows, 2u * 16 * 23);
    EXPECT_EQ(l.args[arg].row_elements, 21u);
    EXPECT_THAT(l.build_options, HasSubstr("-DIMI=1 -DIMAGE_READS=1"));
    std::string off = config;
    off.replace(off.find("IMI=1"), 5, "IMI=0");
    const LaunchDesc b = tmpl->Launch(*tmpl->ParseConfig(off), w);
    EXPECT_EQ(b.args[arg].kind, ArgDesc::Kind::kBuffer) << tmpl->name();
    EXPECT_EQ(b.args[arg].buffer, "input");
  }
}

}  // namespace
}  // namespace tunefleet::templates
