// The direct convolution templates (conv2d_direct, depthwise_direct) on the
// OpenCL device (PoCL in CI): the reference kernels against an independent
// formulation, and random valid configs against the reference for odd
// shapes, every epilogue and fp16 storage (their logic off the device:
// tests/unit/kernels_templates/conv_templates_test.cc).
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernels_templates/builtin_templates.h"
#include "kernels_templates/registry.h"
#include "tests/support/template_fixtures.h"
#include "tests/support/template_harness.h"
#include "trial/trial_request.h"

namespace tunefleet::templates {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;
// The convolution written from the input side: output (p, q) takes input
// pixel (ih, iw) through tap (r, s) when ih + PH - p*SH = r*DH and likewise
// for columns. Independent of conv2d_reference's window arithmetic; its
// parameters are conv2d_reference's own (InputSideConv() takes them from
// the reference's text), since the test binds it with the reference's
// arguments.
constexpr char kInputSideConvBody[] = R"( {
  const int q = get_global_id(0), p = get_global_id(1);
  const int n = get_global_id(2) / K, k = get_global_id(2) % K;
  const int Cg = C / G, g = k / (K / G);
  float sum = 0.0f;
  for (int c = 0; c < Cg; ++c) {
    for (int ih = 0; ih < H; ++ih) {
      for (int iw = 0; iw < W; ++iw) {
        const int dy = ih + PH - p * SH, dx = iw + PW - q * SW;
        if (dy < 0 || dx < 0 || dy % DH != 0 || dx % DW != 0) continue;
        if (dy / DH >= R || dx / DW >= S) continue;
        sum += LOADF(input, ((n * C + g * Cg + c) * H + ih) * W + iw) *
               LOADF(weight, ((k * Cg + c) * R + dy / DH) * S + dx / DW);
      }
    }
  }
  const int i = ((n * K + k) * P + p) * Q + q;
  epilogue_store(sum, i, k, output, scale, shift, residual, act_a, act_b);
})";

// The kernel conv2d_input_side: conv2d_reference's parameter list (from
// conv/conv2d_reference.cl) with the body above; empty when that file has
// no kernel conv2d_reference.
std::string InputSideConv() {
  constexpr absl::string_view kHead = "__kernel void conv2d_reference(";
  const absl::string_view reference = *BuiltinFile("conv/conv2d_reference.cl");
  const size_t begin = reference.find(kHead);
  if (begin == absl::string_view::npos) return "";
  const size_t end = reference.find(") {", begin);
  if (end == absl::string_view::npos) return "";
  return absl::StrCat(
      "__kernel void conv2d_input_side(",
      reference.substr(begin + kHead.size(), end + 1 - begin - kHead.size()),
      kInputSideConvBody);
}

// The reference kernels are the ground truth of every other test, so they
// are checked against independent formulations: conv2d_reference against
// the input-side kernel above, depthwise_reference against
// conv2d_reference with G = K = C (the same buffers and seeds).
TEST(ConvOnDevice, ReferencesAgreeWithIndependentFormulations) {
  const KernelTemplate& conv = testing::Conv2dDirect();
  const KernelTemplate& dw = testing::DepthwiseDirect();
  const std::string input_side = InputSideConv();
  ASSERT_THAT(input_side, Not(IsEmpty()));
  // dtype.cl and epilogue.cl, as the references' sources start.
  const std::string source =
      absl::StrCat(*BuiltinFile("common/dtype.cl"), "\n",
                   *BuiltinFile("common/epilogue.cl"), "\n", input_side);
  v1::TimingPolicy quick;
  quick.set_repeat(1);
  quick.set_number(1);
  for (const char* shape :
       {"N=2,C=4,H=9,W=7,K=6,R=3,S=3,SH=2,SW=1,PH=1,PW=2,DH=1,DW=2,G=2,"
        "affine=scale_shift,act=hardswish",
        "C=3,H=6,W=11,K=2,R=5,S=3,SH=1,SW=3,PH=2,PW=1,DH=2,DW=1,act=relu",
        "C=2,H=1,W=1,K=3,R=3,S=3,PH=1,PW=1,affine=shift",
        "N=2,C=4,H=5,W=6,K=4,R=3,S=3,PH=1,PW=1,G=2,residual=add,act=silu,"
        "post=scale_shift"}) {
    const Workload w = testing::Conv(shape);
    v1::MeasureRequest r = trial::BuildReferenceRequest(conv, w, 1, quick);
    v1::KernelLaunch* ref = r.mutable_verification()->mutable_reference();
    ref->set_source(source);
    ref->set_kernel_name("conv2d_input_side");
    r.mutable_verification()->set_reference_key(
        absl::StrCat(w.Canonical(), "|input_side"));
    const v1::Measurement m = testing::Device().Measure(r);
    EXPECT_EQ(m.error(), v1::Measurement::OK)
        << shape << ": " << m.error_message();
  }
  for (const char* shape :
       {"N=2,C=3,H=9,W=7,R=3,S=3,SH=2,SW=1,PH=1,PW=2,DH=1,DW=2,"
        "affine=scale_shift,act=clip",
        "C=4,H=6,W=11,R=5,S=3,SW=3,PH=2,PW=1,DH=2,act=hardsigmoid",
        "N=2,C=3,H=7,W=6,R=3,S=3,PH=1,PW=1,affine=scale_shift,residual=add,"
        "act=leakyrelu,post=scale_shift"}) {
    const Workload d = testing::Depthwise(shape);
    const Workload as_conv = testing::Conv(
        absl::StrCat(d.ShapeString(), ",K=", d.dim("C"), ",G=", d.dim("C")));
    v1::MeasureRequest r = trial::BuildReferenceRequest(dw, d, 1, quick);
    const v1::MeasureRequest c =
        trial::BuildReferenceRequest(conv, as_conv, 1, quick);
    *r.mutable_verification() = c.verification();
    const v1::Measurement m = testing::Device().Measure(r);
    EXPECT_EQ(m.error(), v1::Measurement::OK)
        << shape << ": " << m.error_message();
  }
}

// Odd shapes over the features of a direct convolution: spatial sizes 1, 3,
// 7 and 13, H != W, stride 2, padding 1 and 2, dilation 2, kernels 1x1,
// 3x3, 5x5 and 3x1, groups, a batch of 2, and every epilogue.
TEST(ConvOnDevice, Conv2dRandomConfigsMatchReference) {
  const KernelTemplate& conv = testing::Conv2dDirect();
  const std::vector<Workload> shapes = {
      testing::Conv("C=3,H=7,W=13,K=5,R=3,S=3,PH=1,PW=1,affine=scale_shift,"
                    "act=hardswish"),
      testing::Conv("N=2,C=4,H=13,W=7,K=8,R=5,S=5,SH=2,SW=2,PH=2,PW=2,G=2,"
                    "affine=shift,act=relu"),
      testing::Conv(
          "C=8,H=9,W=11,K=8,R=3,S=3,PH=2,PW=2,DH=2,DW=2,G=4,act=clip"),
      testing::Conv("C=5,H=1,W=1,K=3,R=3,S=3,PH=1,PW=1,act=hardsigmoid"),
      testing::Conv("C=6,H=7,W=3,K=7,R=3,S=1,PH=1,affine=scale_shift"),
      testing::Conv("N=2,C=4,H=3,W=5,K=6,R=1,S=1,SH=2,SW=2,affine=shift"),
  };
  EXPECT_THAT(testing::CheckRandomConfigs(conv, shapes, 4, 101), IsEmpty());
}

// Runs each hand-picked {shape, config} case (the shape parsed by `parse`)
// on the device; expects every config to be valid and to match the
// reference.
void ExpectChosenConfigsMatch(
    const KernelTemplate& tmpl,
    Workload (*parse)(absl::string_view, absl::string_view),
    const std::vector<std::pair<const char*, const char*>>& cases) {
  const DeviceLimits limits = testing::DeviceLimits();
  for (const auto& [shape, text] : cases) {
    const Workload w = parse(shape, "fp32");
    auto config = tmpl.ParseConfig(text);
    ASSERT_TRUE(config.ok()) << config.status();
    ASSERT_TRUE(tmpl.CheckConfig(*config, w, limits).ok()) << text;
    const auto m = testing::RunConfig(tmpl, w, *config);
    EXPECT_EQ(m.error(), v1::Measurement::OK)
        << shape << " " << text << ": " << m.error_message();
  }
}

// Hand-picked configs for the paths random ones may miss: both local tiles
// with a partial last channel step, vector loads from local and global
// memory at image edges, strided gathers, and partial unrolling.
TEST(ConvOnDevice, Conv2dEdgePathsMatchReference) {
  ExpectChosenConfigsMatch(
      testing::Conv2dDirect(), testing::Conv,
      {{"C=5,H=13,W=11,K=6,R=3,S=3,PH=1,PW=1,affine=scale_shift,act=relu",
        "KWI=2,KWG=4,PWI=2,QWI=4,WGP=2,WGQ=2,VW=4,CB=4,LI=1,LW=1,UNROLL=4,HALF="
        "0,IMI=0"},
       {"N=2,C=6,H=7,W=13,K=6,R=3,S=3,SH=2,SW=2,PH=1,PW=1,G=3,act=hardswish",
        "KWI=1,KWG=2,PWI=1,QWI=4,WGP=4,WGQ=2,VW=2,CB=1,LI=0,LW=0,UNROLL=8,HALF="
        "0,IMI=0"},
       {"C=3,H=7,W=9,K=4,R=5,S=5,PH=2,PW=2,DH=1,DW=1",
        "KWI=4,KWG=4,PWI=4,QWI=4,WGP=1,WGQ=4,VW=4,CB=2,LI=1,LW=0,UNROLL=2,HALF="
        "0,IMI=0"},
       {"C=4,H=9,W=10,K=3,R=3,S=3,PH=2,PW=2,DH=2,DW=2,affine=shift",
        "KWI=1,KWG=4,PWI=2,QWI=2,WGP=4,WGQ=4,VW=2,CB=8,LI=0,LW=1,UNROLL=4,HALF="
        "0,IMI=0"}});
}

TEST(ConvOnDevice, DepthwiseRandomConfigsMatchReference) {
  const KernelTemplate& dw = testing::DepthwiseDirect();
  const std::vector<Workload> shapes = {
      testing::Depthwise("C=3,H=7,W=13,R=3,S=3,PH=1,PW=1,affine=scale_shift,"
                         "act=hardswish"),
      testing::Depthwise(
          "N=2,C=5,H=13,W=7,R=5,S=5,SH=2,SW=2,PH=2,PW=2,affine=shift,"
          "act=relu"),
      testing::Depthwise("C=4,H=9,W=11,R=3,S=3,PH=2,PW=2,DH=2,DW=2,act=clip"),
      testing::Depthwise("C=2,H=1,W=1,R=3,S=3,PH=1,PW=1,act=hardsigmoid"),
      testing::Depthwise("C=6,H=7,W=3,R=3,S=1,PH=1,affine=scale_shift"),
      testing::Depthwise("N=2,C=3,H=3,W=5,R=1,S=1"),
  };
  EXPECT_THAT(testing::CheckRandomConfigs(dw, shapes, 4, 201), IsEmpty());
  ExpectChosenConfigsMatch(
      dw, testing::Depthwise,
      {{"C=5,H=13,W=11,R=3,S=3,PH=1,PW=1,affine=scale_shift,act=relu",
        "PWI=2,QWI=4,WGP=2,WGQ=2,CWG=4,VW=4,LI=1,UNROLL=4,HALF=0,IMI=0,RT=0"},
       {"N=2,C=3,H=13,W=13,R=3,S=3,SH=2,SW=2,PH=1,PW=1,act=hardswish",
        "PWI=1,QWI=4,WGP=4,WGQ=2,CWG=2,VW=2,LI=0,UNROLL=8,HALF=0,IMI=0,RT=0"},
       {"C=3,H=9,W=10,R=3,S=3,PH=2,PW=2,DH=2,DW=2",
        "PWI=2,QWI=2,WGP=4,WGQ=4,CWG=2,VW=2,LI=1,UNROLL=2,HALF=0,IMI=0,RT=0"}});
}

// RT=1 (register-tiled rows): the aligned vector loads of the columns
// under a work-item (W a multiple of VW) and the one-by-one loads (W not,
// the right edge, SW=2), input rows feeding several output rows (PWI > 1
// with stride and dilation along H), left padding wider than the window
// reaches (PW=2 with S=3, DW=1), 1-wide windows, the epilogue and fp16
// storage; random RT=1 configs and hand-picked ones.
TEST(ConvOnDevice, DepthwiseRegisterTiledRowsMatchReference) {
  const KernelTemplate& dw = testing::DepthwiseDirect();
  const DeviceLimits limits = testing::DeviceLimits();
  const char* shapes[] = {
      "N=2,C=5,H=13,W=24,R=3,S=3,PH=1,PW=1,affine=scale_shift,act=relu",
      "C=3,H=9,W=13,R=3,S=3,PH=1,PW=1,residual=add,act=silu",
      "C=4,H=11,W=16,R=3,S=3,SH=2,SW=2,PH=1,PW=1,post=scale_shift",
      "C=3,H=12,W=20,R=3,S=3,PH=2,PW=2,DH=2,DW=2,act=clip",
      "C=2,H=10,W=12,R=3,S=3,PH=2,PW=2",
      "C=6,H=7,W=8,R=5,S=1,PH=2",
      "C=2,H=1,W=1,R=3,S=3,PH=1,PW=1",
  };
  const char* chosen[] = {
      "PWI=4,QWI=8,WGP=2,WGQ=2,CWG=2,VW=4,LI=0,UNROLL=1,HALF=0,IMI=0,RT=1",
      "PWI=2,QWI=4,WGP=4,WGQ=2,CWG=1,VW=2,LI=0,UNROLL=1,HALF=0,IMI=0,RT=1",
      "PWI=1,QWI=1,WGP=2,WGQ=8,CWG=4,VW=1,LI=0,UNROLL=1,HALF=0,IMI=0,RT=1",
  };
  uint64_t seed = 701;
  int runs = 0;
  for (const char* shape : shapes) {
    for (const char* dtype : {"fp32", "fp16"}) {
      const Workload w = testing::Depthwise(shape, dtype);
      std::vector<KnobValues> configs =
          testing::RandomConfigsWith(dw, w, "RT", 1, 3, seed++);
      for (const char* text : chosen) {
        configs.push_back(*dw.ParseConfig(text));
      }
      for (const KnobValues& config : configs) {
        if (!dw.CheckConfig(config, w, limits).ok()) continue;
        const auto m = testing::RunConfig(dw, w, config);
        EXPECT_EQ(m.error(), v1::Measurement::OK)
            << w.Canonical() << " " << dw.ConfigString(config) << ": "
            << m.error_message();
        ++runs;
      }
    }
  }
  EXPECT_GE(runs, 50);
}

TEST(ConvOnDevice, HalfStorageMatchesReference) {
  const KernelTemplate& conv = testing::Conv2dDirect();
  const KernelTemplate& dw = testing::DepthwiseDirect();
  EXPECT_THAT(
      testing::CheckRandomConfigs(
          conv,
          {testing::Conv("C=4,H=7,W=9,K=6,R=3,S=3,PH=1,PW=1,affine=scale_shift,"
                         "act=relu",
                         "fp16"),
           testing::Conv(
               "N=2,C=4,H=13,W=13,K=4,R=3,S=3,SH=2,SW=2,PH=1,PW=1,G=2,"
               "act=hardswish",
               "fp16")},
          3, 301),
      IsEmpty());
  EXPECT_THAT(
      testing::CheckRandomConfigs(
          dw,
          {testing::Depthwise("C=8,H=13,W=13,R=3,S=3,SH=2,SW=2,PH=1,PW=1,"
                              "affine=scale_shift,act=relu",
                              "fp16"),
           testing::Depthwise("C=3,H=7,W=12,R=5,S=5,PH=2,PW=2", "fp16")},
          3, 401),
      IsEmpty());
}

// The extended epilogue (common/epilogue.cl): a residual of the output's
// shape, the post-activation scale and shift, leakyrelu, sigmoid and silu,
// alone and together, on both direct templates, fp32 and fp16 storage,
// random configs against the references (odd sizes, so vector stores and
// residual loads meet row ends).
TEST(ConvOnDevice, ExtendedEpilogueRandomConfigsMatchReference) {
  const KernelTemplate& conv = testing::Conv2dDirect();
  const KernelTemplate& dw = testing::DepthwiseDirect();
  uint64_t seed = 601;
  for (const char* dtype : {"fp32", "fp16"}) {
    EXPECT_THAT(
        testing::CheckRandomConfigs(
            conv,
            {testing::Conv("C=5,H=7,W=13,K=6,R=3,S=3,PH=1,PW=1,"
                           "affine=scale_shift,residual=add,act=relu",
                           dtype),
             testing::Conv("N=2,C=4,H=9,W=7,K=8,R=3,S=3,SH=2,SW=2,PH=1,PW=1,"
                           "G=2,affine=shift,act=leakyrelu,post=scale_shift",
                           dtype),
             testing::Conv("C=6,H=5,W=11,K=5,R=1,S=1,residual=add,act=sigmoid",
                           dtype),
             testing::Conv("N=2,C=3,H=6,W=9,K=7,R=3,S=3,PH=1,PW=1,"
                           "affine=scale_shift,residual=add,act=silu,"
                           "post=scale_shift",
                           dtype)},
            3, seed),
        IsEmpty())
        << dtype;
    seed += 10;
    EXPECT_THAT(
        testing::CheckRandomConfigs(
            dw,
            {testing::Depthwise("C=5,H=9,W=13,R=3,S=3,PH=1,PW=1,"
                                "affine=scale_shift,residual=add,act=silu",
                                dtype),
             testing::Depthwise("N=2,C=6,H=11,W=7,R=5,S=5,SH=2,SW=2,PH=2,"
                                "PW=2,act=sigmoid,post=scale_shift",
                                dtype),
             testing::Depthwise("C=3,H=7,W=10,R=3,S=3,PH=1,PW=1,affine=shift,"
                                "residual=add,act=leakyrelu,post=scale_shift",
                                dtype)},
            3, seed),
        IsEmpty())
        << dtype;
    seed += 10;
  }
}

// IMI=1 (the input through an image2d_t, texels of four pixels along W)
// on both direct templates, fp32 and fp16 storage, W a multiple of 4 (the
// copy path on PoCL) and not (the packing kernel), against the reference:
// hand-picked configs for each way of reading texels (vector windows at
// stride 1, gathers at stride 2 and with dilation, local tiles with the
// left padding before texel 0), then random ones. Making the image is
// timed (pack_ns > 0) where the device cannot view a buffer as an image.
TEST(ConvOnDevice, ImageInputMatchesReferenceOnCopyAndPackPaths) {
  const DeviceLimits limits = testing::DeviceLimits();
  ASSERT_TRUE(limits.image_support);
  struct Case {
    const KernelTemplate* tmpl;
    Workload (*parse)(absl::string_view, absl::string_view);
    const char* shape;
    std::vector<const char*> chosen;
  };
  const std::vector<const char*> conv_chosen = {
      "KWI=2,KWG=4,PWI=2,QWI=4,WGP=2,WGQ=2,VW=4,CB=1,LI=0,LW=0,UNROLL=2,"
      "HALF=0,IMI=1",
      "KWI=1,KWG=2,PWI=1,QWI=2,WGP=4,WGQ=2,VW=2,CB=2,LI=1,LW=1,UNROLL=4,"
      "HALF=0,IMI=1",
      "KWI=2,KWG=2,PWI=2,QWI=1,WGP=2,WGQ=8,VW=1,CB=4,LI=1,LW=0,UNROLL=1,"
      "HALF=0,IMI=1",
  };
  const std::vector<const char*> dw_chosen = {
      "PWI=2,QWI=4,WGP=2,WGQ=2,CWG=4,VW=4,LI=0,UNROLL=4,HALF=0,IMI=1,RT=0",
      "PWI=1,QWI=4,WGP=4,WGQ=2,CWG=2,VW=2,LI=1,UNROLL=2,HALF=0,IMI=1,RT=0",
      "PWI=2,QWI=2,WGP=4,WGQ=4,CWG=1,VW=1,LI=0,UNROLL=1,HALF=0,IMI=1,RT=0",
  };
  const KernelTemplate* conv = &testing::Conv2dDirect();
  const KernelTemplate* dw = &testing::DepthwiseDirect();
  const Case cases[] = {
      {conv, testing::Conv,
       "N=2,C=5,H=9,W=11,K=7,R=3,S=3,PH=1,PW=1,affine=scale_shift,act=relu",
       conv_chosen},
      {conv, testing::Conv,
       "C=4,H=8,W=16,K=6,R=3,S=3,SH=2,SW=2,PH=1,PW=1,residual=add,act=silu",
       conv_chosen},
      {conv, testing::Conv, "C=6,H=10,W=12,K=6,R=3,S=3,PH=2,PW=2,DH=2,DW=2,G=3",
       conv_chosen},
      {dw, testing::Depthwise,
       "N=2,C=5,H=9,W=11,R=3,S=3,PH=1,PW=1,affine=shift,act=relu", dw_chosen},
      {dw, testing::Depthwise,
       "C=8,H=12,W=16,R=5,S=5,SH=2,SW=2,PH=2,PW=2,residual=add,"
       "post=scale_shift",
       dw_chosen},
      {dw, testing::Depthwise, "C=3,H=9,W=13,R=3,S=3,PH=2,PW=2,DH=2,DW=2",
       dw_chosen},
  };
  uint64_t seed = 501;
  for (const Case& c : cases) {
    const KernelTemplate& t = *c.tmpl;
    for (const char* dtype : {"fp32", "fp16"}) {
      const Workload w = c.parse(c.shape, dtype);
      std::vector<KnobValues> configs;
      for (const char* text : c.chosen) {
        configs.push_back(*t.ParseConfig(text));
      }
      for (KnobValues& r :
           testing::RandomConfigsWith(t, w, "IMI", 1, 2, seed++)) {
        configs.push_back(std::move(r));
      }
      ASSERT_GT(configs.size(), c.chosen.size()) << w.Canonical();
      for (const KnobValues& config : configs) {
        ASSERT_TRUE(t.CheckConfig(config, w, limits).ok())
            << w.Canonical() << " " << t.ConfigString(config);
        const auto m = testing::RunConfig(t, w, config);
        EXPECT_EQ(m.error(), v1::Measurement::OK)
            << w.Canonical() << " " << t.ConfigString(config) << ": "
            << m.error_message();
        if (!limits.image2d_from_buffer) {
          EXPECT_GT(m.pack_ns(), 0.0)
              << w.Canonical() << " " << t.ConfigString(config);
        }
      }
    }
  }
}

}  // namespace
}  // namespace tunefleet::templates
