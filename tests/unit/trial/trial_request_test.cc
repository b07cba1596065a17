// BuildMeasureRequest's image arguments and library calls, that
// MeasureRequestBuilder builds the same requests, and the limits
// LimitsFromDeviceInfo reads (libraries, image2d_from_buffer).
#include "trial/trial_request.h"

#include <memory>
#include <string>
#include <utility>

#include "absl/status/statusor.h"
#include "gtest/gtest.h"
#include "kernels_templates/spec/spec_template.h"
#include "tests/support/image_spec.h"

namespace tunefleet::trial {
namespace {

constexpr char kSource[] = "__kernel void k() {}\n";

// A library call with an epilogue that reads B through an image when IMG
// is 1.
std::string Spec() {
  return testing::GemmImageSpecHead("trial_request_test", "",
                                    /*a_workload_dtype=*/false) +
         R"spec([library]
name = "clblast"
routine = "gemm"
args = ["M", "N", "K", "float:0.5", "A", "B", "C"]
[kernel]
name = "k"
global = ["M * N"]
args = ["b_image", "C"]
[reference]
name = "k"
global = ["M * N"]
args = ["B", "C"]
)spec";
}

// Spec()'s template and the fp16 gemm M=3,N=10,K=7 it is measured on.
struct ParsedGemm {
  std::unique_ptr<templates::SpecTemplate> tmpl;
  templates::Workload workload;
};
absl::StatusOr<ParsedGemm> ParseGemm() {
  auto t = templates::SpecTemplate::Parse(Spec(), "toml", kSource);
  if (!t.ok()) return t.status();
  auto w = templates::Workload::Parse("gemm", "M=3,N=10,K=7", "fp16");
  if (!w.ok()) return w.status();
  return ParsedGemm{*std::move(t), *std::move(w)};
}

TEST(TrialRequest, BuilderMakesWhatBuildMeasureRequestMakes) {
  auto g = ParseGemm();
  ASSERT_TRUE(g.ok()) << g.status();
  tunefleet::v1::TimingPolicy timing;
  timing.set_repeat(3);
  timing.set_timeout_ms(500);
  const MeasureRequestBuilder builder(*g->tmpl, g->workload, timing);
  for (int64_t img : {0, 1}) {
    const tunefleet::v1::MeasureRequest expected =
        BuildMeasureRequest(*g->tmpl, g->workload, {img}, 7 + img, timing);
    const tunefleet::v1::MeasureRequest built = builder.Build({img}, 7 + img);
    EXPECT_EQ(built.trial_id(), 7 + img);
    EXPECT_EQ(built.kernel().args(0).has_image(), img == 1);
    EXPECT_EQ(built.verification().reference_key(),
              expected.verification().reference_key());
    EXPECT_EQ(built.SerializeAsString(), expected.SerializeAsString())
        << "IMG=" << img;
  }
}

TEST(TrialRequest, LeanRequestsNameSourcesByHashAndFillBackWhole) {
  auto g = ParseGemm();
  ASSERT_TRUE(g.ok()) << g.status();
  const MeasureRequestBuilder builder(*g->tmpl, g->workload, {});
  for (int64_t img : {0, 1}) {
    const tunefleet::v1::MeasureRequest whole = builder.Build({img}, 5);
    LeanRequest lean = builder.BuildLean({img}, 5);
    ASSERT_NE(lean.sources, nullptr);
    const tunefleet::v1::KernelLaunch& ref =
        lean.request.verification().reference();
    EXPECT_TRUE(ref.source().empty());
    EXPECT_EQ(ref.source_hash(),
              SourceHash(whole.verification().reference().source()));
    EXPECT_TRUE(lean.request.kernel().source().empty());
    EXPECT_EQ(lean.request.kernel().source_hash(),
              whole.kernel().source().empty()
                  ? ""
                  : SourceHash(whole.kernel().source()));
    FillSources(*lean.sources, &lean.request);
    EXPECT_EQ(lean.request.SerializeAsString(), whole.SerializeAsString())
        << "IMG=" << img;
  }
}

TEST(TrialRequest, CarriesImagesAndTheLibraryCall) {
  auto g = ParseGemm();
  ASSERT_TRUE(g.ok()) << g.status();
  const tunefleet::v1::MeasureRequest r =
      BuildMeasureRequest(*g->tmpl, g->workload, {1}, 42, {});
  const tunefleet::v1::KernelLaunch& k = r.kernel();
  ASSERT_TRUE(k.has_library());
  EXPECT_EQ(k.library().library(), "clblast");
  EXPECT_EQ(k.library().routine(), "gemm");
  ASSERT_EQ(k.library().args_size(), 7);
  EXPECT_EQ(k.library().args(1).i32(), 10);
  EXPECT_FLOAT_EQ(k.library().args(3).f32(), 0.5f);
  EXPECT_EQ(k.library().args(6).buffer(), "C");
  ASSERT_EQ(k.args_size(), 2);
  ASSERT_EQ(k.args(0).value_case(), tunefleet::v1::KernelArg::kImage);
  EXPECT_EQ(k.args(0).image().buffer(), "B");
  EXPECT_EQ(k.args(0).image().rows(), 7u);
  EXPECT_EQ(k.args(0).image().row_elements(), 10u);
  EXPECT_EQ(k.kernel_name(), "k");
  // The reference is a plain kernel over the buffer.
  EXPECT_FALSE(r.verification().reference().has_library());
  EXPECT_EQ(r.verification().reference().args(0).buffer(), "B");
  // IMG=0: the buffer itself.
  const tunefleet::v1::MeasureRequest plain =
      BuildMeasureRequest(*g->tmpl, g->workload, {0}, 43, {});
  EXPECT_EQ(plain.kernel().args(0).buffer(), "B");
  EXPECT_TRUE(plain.kernel().has_library());
}

TEST(TrialRequest, PlainTemplatesHaveNoLibraryCall) {
  std::string spec = Spec();
  const size_t library = spec.find("[library]");
  spec.erase(library, spec.find("[kernel]") - library);
  auto t = templates::SpecTemplate::Parse(spec, "toml", kSource);
  ASSERT_TRUE(t.ok()) << t.status();
  auto w = templates::Workload::Parse("gemm", "M=3,N=10,K=7");
  ASSERT_TRUE(w.ok()) << w.status();
  EXPECT_FALSE(BuildMeasureRequest(**t, *w, {1}, 1, {}).kernel().has_library());
}

TEST(TrialRequest, LimitsReadTheLibrariesAndImageExtensions) {
  tunefleet::v1::DeviceInfo info;
  EXPECT_FALSE(LimitsFromDeviceInfo(info).library_clblast);
  info.add_libraries("clblast 1.5.3");
  info.add_extensions("cl_khr_image2d_from_buffer");
  templates::DeviceLimits l = LimitsFromDeviceInfo(info);
  EXPECT_TRUE(l.library_clblast);
  EXPECT_FALSE(l.library_clml);
  EXPECT_TRUE(l.image2d_from_buffer);
  info.add_libraries("clml");
  EXPECT_TRUE(LimitsFromDeviceInfo(info).library_clml);
  // The first word names the library: "clblastx" is another one.
  tunefleet::v1::DeviceInfo other;
  other.add_libraries("clblastx 1.0");
  other.add_libraries("libclml 2");
  EXPECT_FALSE(LimitsFromDeviceInfo(other).library_clblast);
  EXPECT_FALSE(LimitsFromDeviceInfo(other).library_clml);
}

// The provenance hash names what the agent builds: source and build
// options (and a library routine), whether the source travels in full or by
// its hash.
TEST(KernelSha256, NamesTheProgramTheAgentBuilds) {
  tunefleet::v1::KernelLaunch launch;
  launch.set_source("__kernel void k() {}");
  launch.set_build_options("-DMWG=64");
  const std::string hash = KernelSha256(launch);
  EXPECT_EQ(hash.size(), 64u);
  EXPECT_EQ(hash.find_first_not_of("0123456789abcdef"), std::string::npos);

  tunefleet::v1::KernelLaunch by_hash = launch;
  by_hash.clear_source();
  by_hash.set_source_hash(SourceHash(launch.source()));
  const SourceTexts sources = {{by_hash.source_hash(), launch.source()}};
  EXPECT_EQ(KernelSha256(by_hash, &sources), hash);

  tunefleet::v1::KernelLaunch other = launch;
  other.set_build_options("-DMWG=32");
  EXPECT_NE(KernelSha256(other), hash);
  other = launch;
  other.mutable_library()->set_library("clblast");
  other.mutable_library()->set_routine("gemm");
  EXPECT_NE(KernelSha256(other), hash);
  // Fields never run together: "ab" + "" is not "a" + "b".
  tunefleet::v1::KernelLaunch split = launch;
  split.set_source(launch.source() + "-DMWG=6");
  split.set_build_options("4");
  EXPECT_NE(KernelSha256(split), hash);
}

}  // namespace
}  // namespace tunefleet::trial
