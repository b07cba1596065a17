// The library templates (kernels_templates/library/*.toml: CLBlast's GEMM
// and convgemm for gemm, dense and conv2d, its batched GEMM for 1x1
// conv2d), loaded from their spec files:
// their buffers, FLOPs, bytes and reference are those of the op's
// generated template, their configs run on the OpenCL device (PoCL here)
// through the real libclblast and verify, and without CLBlast they have no
// valid config.
#include <initializer_list>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "google/protobuf/util/message_differencer.h"
#include "gtest/gtest.h"
#include "kernels_templates/spec/spec_template.h"
#include "measure/measurer.h"
#include "tests/support/template_fixtures.h"
#include "tests/support/template_harness.h"
#include "trial/trial_request.h"

namespace tunefleet::templates {
namespace {

using ::testing::HasSubstr;
using tunefleet::v1::Measurement;

std::unique_ptr<SpecTemplate> LoadLibrarySpec(const std::string& name) {
  absl::StatusOr<std::unique_ptr<SpecTemplate>> t =
      SpecTemplate::Load(absl::StrCat(
          TUNEFLEET_SOURCE_DIR, "/kernels_templates/library/", name, ".toml"));
  EXPECT_TRUE(t.ok()) << name << ": " << t.status();
  return t.ok() ? *std::move(t) : nullptr;
}

class LibraryTemplates : public testing::MeasurerSuite {
 protected:
  static DeviceLimits Limits() {
    return trial::LimitsFromDeviceInfo(measurer_->device_info());
  }

  // Every valid config of `tmpl` on `w`, measured: OK and verified.
  static void ExpectAllConfigsMeasure(const KernelTemplate& tmpl,
                                      const Workload& w) {
    ASSERT_TRUE(tmpl.Accepts(w)) << w.Canonical();
    ASSERT_TRUE(tmpl.CheckWorkload(w, Limits()).ok()) << w.Canonical();
    v1::TimingPolicy quick;
    quick.set_repeat(2);
    quick.set_number(2);
    int valid = 0;
    for (int64_t v : tmpl.knobs()[0].values) {
      const KnobValues config = {v};
      if (!tmpl.CheckConfig(config, w, Limits()).ok()) continue;
      ++valid;
      const Measurement m = measurer_->Measure(
          trial::BuildMeasureRequest(tmpl, w, config, 1, quick));
      EXPECT_EQ(m.error(), Measurement::OK)
          << w.Canonical() << " " << tmpl.ConfigString(config) << ": "
          << Measurement::Error_Name(m.error()) << " " << m.error_message();
      EXPECT_LE(m.max_rel_error(), tmpl.Tolerance(w));
      EXPECT_EQ(m.times_ns_size(), 2);
      for (double t : m.times_ns()) EXPECT_GT(t, 0);
    }
    EXPECT_GT(valid, 0) << w.Canonical();
  }

  // The library template and the op's generated template share buffers,
  // FLOPs, bytes, reference and tolerance on `w`.
  static void ExpectComparable(const KernelTemplate& library,
                               const KernelTemplate& generated,
                               const Workload& w) {
    v1::TimingPolicy policy;
    const KnobValues library_config(library.knobs().size(),
                                    library.knobs()[0].values[0]);
    KnobValues generated_config;
    for (const Knob& k : generated.knobs()) {
      generated_config.push_back(k.values[0]);
    }
    const v1::MeasureRequest a =
        trial::BuildMeasureRequest(library, w, library_config, 1, policy);
    const v1::MeasureRequest b =
        trial::BuildMeasureRequest(generated, w, generated_config, 1, policy);
    ASSERT_EQ(a.buffers_size(), b.buffers_size());
    for (int i = 0; i < a.buffers_size(); ++i) {
      EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(
          a.buffers(i), b.buffers(i)))
          << a.buffers(i).ShortDebugString() << " vs "
          << b.buffers(i).ShortDebugString();
    }
    EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(
        a.verification(), b.verification()))
        << w.Canonical();
    EXPECT_EQ(a.workload_key(), b.workload_key());
    EXPECT_EQ(library.Flops(w), generated.Flops(w));
    EXPECT_EQ(library.Bytes(w), generated.Bytes(w));
  }

  // `library` on `w`: comparable with the built-in template `generated`
  // (ExpectComparable), and every valid config measured.
  static void ExpectLikeGeneratedAndMeasured(const KernelTemplate& library,
                                             const std::string& generated,
                                             const Workload& w) {
    ExpectComparable(library, testing::BuiltinTemplate(generated), w);
    ExpectAllConfigsMeasure(library, w);
  }
  // ExpectLikeGeneratedAndMeasured on the workload of `op` of each shape.
  static void ExpectEachLikeGeneratedAndMeasured(
      const KernelTemplate& library, const std::string& generated,
      const std::string& op, std::initializer_list<const char*> shapes) {
    for (const char* shape : shapes) {
      ExpectLikeGeneratedAndMeasured(library, generated,
                                     testing::MustParse(op, shape));
    }
  }
};

TEST_F(LibraryTemplates, GemmOddShapes) {
  const auto tmpl = LoadLibrarySpec("clblast_gemm");
  ASSERT_NE(tmpl, nullptr);
  EXPECT_EQ(tmpl->op(), "gemm");
  ExpectEachLikeGeneratedAndMeasured(
      *tmpl, "gemm_tiled", "gemm",
      {"M=33,N=17,K=9", "M=1,N=64,K=100", "M=128,N=96,K=64"});
}

TEST_F(LibraryTemplates, DenseWithAndWithoutEpilogue) {
  const auto tmpl = LoadLibrarySpec("clblast_dense");
  ASSERT_NE(tmpl, nullptr);
  for (const char* shape :
       {"M=19,N=23,K=31", "M=19,N=23,K=31,act=relu,affine=scale_shift",
        "M=8,N=40,K=16,act=hardswish,affine=shift", "M=4,N=10,K=8,act=clip"}) {
    const Workload w = testing::MustParse("dense", shape);
    ExpectLikeGeneratedAndMeasured(*tmpl, "dense_gemm", w);
    // The epilogue kernel runs only where the attrs ask for one.
    const LaunchDesc launch = tmpl->Launch({0}, w);
    ASSERT_TRUE(launch.library.has_value());
    EXPECT_EQ(launch.source.empty(), absl::StrContains(shape, "act") == false)
        << shape;
  }
}

TEST_F(LibraryTemplates, Conv2dPaddingStrideDilationBatches) {
  const auto tmpl = LoadLibrarySpec("clblast_conv2d");
  ASSERT_NE(tmpl, nullptr);
  ExpectEachLikeGeneratedAndMeasured(
      *tmpl, "conv2d_direct", "conv2d",
      {"N=1,C=3,H=16,W=16,K=8,R=3,S=3,PH=1,PW=1",
       "N=2,C=3,H=9,W=7,K=5,R=3,S=3,SH=2,SW=2,PH=1,PW=1",
       "N=2,C=4,H=10,W=10,K=8,R=3,S=3,PH=1,PW=1,affine=scale_shift,"
       "act=hardswish",
       "N=3,C=5,H=12,W=12,K=7,R=3,S=3,DH=2,DW=2,PH=2,PW=2,act=relu",
       "N=2,C=16,H=7,W=7,K=8,R=1,S=1"});
  // Groups other than 1 are not CLBlast's.
  EXPECT_FALSE(tmpl->Accepts(
      testing::Conv("N=1,C=4,H=8,W=8,K=4,R=3,S=3,G=2,PH=1,PW=1")));
  // One image: PER_IMAGE=1 would only repeat PER_IMAGE=0.
  EXPECT_FALSE(tmpl->CheckConfig({1},
                                 testing::Conv("N=1,C=3,H=8,W=8,K=4,R=3,S=3"),
                                 Limits())
                   .ok());
}

TEST_F(LibraryTemplates, Conv2d1x1AsBatchedGemm) {
  const auto tmpl = LoadLibrarySpec("clblast_conv2d_1x1");
  ASSERT_NE(tmpl, nullptr);
  ExpectEachLikeGeneratedAndMeasured(
      *tmpl, "conv2d_direct", "conv2d",
      {"N=1,C=32,H=2,W=96,K=20,R=1,S=1,affine=scale_shift,act=hardswish",
       "N=3,C=5,H=7,W=9,K=6,R=1,S=1", "N=2,C=16,H=3,W=5,K=8,R=1,S=1,act=relu"});
  // Only what a GEMM computes: 1x1, stride 1, no padding, one group.
  for (const char* shape : {"N=1,C=4,H=8,W=8,K=4,R=3,S=3,PH=1,PW=1",
                            "N=1,C=4,H=8,W=8,K=4,R=1,S=1,SH=2,SW=2",
                            "N=1,C=4,H=8,W=8,K=4,R=1,S=1,G=2"}) {
    EXPECT_FALSE(tmpl->Accepts(testing::Conv(shape))) << shape;
  }
}

// The extended epilogue in library/epilogue_inplace.cl after the call: a
// residual of the output's shape, the post-activation scale and shift,
// leakyrelu, sigmoid and silu, each of which alone makes the epilogue
// kernel run, against the generated templates' references (fp32: PoCL
// lists no cl_khr_fp16, which CLBlast's fp16 routines need).
TEST_F(LibraryTemplates, ExtendedEpilogueAfterTheCall) {
  struct Case {
    const char* spec;
    const char* generated;
    const char* op;
    const char* shape;
  };
  const Case cases[] = {
      {"clblast_dense", "dense_gemm", "dense", "M=19,N=23,K=31,residual=add"},
      {"clblast_dense", "dense_gemm", "dense",
       "M=8,N=40,K=16,affine=scale_shift,act=silu,post=scale_shift"},
      {"clblast_dense", "dense_gemm", "dense", "M=4,N=10,K=8,act=leakyrelu"},
      {"clblast_conv2d", "conv2d_direct", "conv2d",
       "N=2,C=3,H=9,W=7,K=5,R=3,S=3,SH=2,SW=2,PH=1,PW=1,affine=shift,"
       "residual=add,act=sigmoid,post=scale_shift"},
      {"clblast_conv2d", "conv2d_direct", "conv2d",
       "N=1,C=4,H=8,W=8,K=6,R=3,S=3,PH=1,PW=1,post=scale_shift"},
      {"clblast_conv2d_1x1", "conv2d_direct", "conv2d",
       "N=3,C=5,H=7,W=9,K=6,R=1,S=1,affine=scale_shift,residual=add,"
       "act=leakyrelu"},
      {"clblast_conv2d_1x1", "conv2d_direct", "conv2d",
       "N=1,C=8,H=3,W=5,K=4,R=1,S=1,act=silu,post=scale_shift"},
  };
  for (const Case& c : cases) {
    const auto tmpl = LoadLibrarySpec(c.spec);
    ASSERT_NE(tmpl, nullptr);
    const Workload w = testing::MustParse(c.op, c.shape);
    ExpectLikeGeneratedAndMeasured(*tmpl, c.generated, w);
    const LaunchDesc launch = tmpl->Launch({0}, w);
    ASSERT_TRUE(launch.library.has_value());
    EXPECT_FALSE(launch.source.empty()) << c.shape;
  }
}

TEST_F(LibraryTemplates, NoValidConfigWithoutClblast) {
  DeviceLimits limits = Limits();
  ASSERT_TRUE(limits.library_clblast);
  limits.library_clblast = false;
  const Workload gemm = testing::MustParse("gemm", "M=16,N=16,K=16");
  const auto tmpl = LoadLibrarySpec("clblast_gemm");
  ASSERT_NE(tmpl, nullptr);
  for (int64_t v : tmpl->knobs()[0].values) {
    const absl::Status s = tmpl->CheckConfig({v}, gemm, limits);
    EXPECT_FALSE(s.ok());
    EXPECT_THAT(std::string(s.message()),
                HasSubstr("CLBlast is not available on this device's agents"));
  }
}

}  // namespace
}  // namespace tunefleet::templates
