// Spec templates with [[images]] (a buffer read as an image2d_t, a knob's
// choice) and [library] (a vendor-library call in place of a kernel), off
// the device: parsing, refusals by table and field, launches, the launch
// checks, the new device limits and the source hash.
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernels_templates/spec/spec_template.h"
#include "nlohmann/json.hpp"
#include "tests/support/image_spec.h"

namespace tunefleet::templates {
namespace {

using ::testing::HasSubstr;

constexpr char kSource[] = "__kernel void k() {}\n__kernel void r() {}\n";

// One edit of a spec: `from`, which the spec must hold, replaced by `to`;
// the spec so edited is refused with `message`.
struct SpecEdit {
  std::string from, to;
  const char* message;
};

// Each of `edits` alone makes `spec` refused as an invalid argument whose
// message holds the edit's message.
void ExpectEditsRefused(const std::string& spec,
                        const std::vector<SpecEdit>& edits) {
  for (const SpecEdit& c : edits) {
    ASSERT_THAT(spec, HasSubstr(c.from));
    std::string bad = spec;
    bad.replace(bad.find(c.from), c.from.size(), c.to);
    auto t = SpecTemplate::Parse(bad, "toml", kSource);
    ASSERT_FALSE(t.ok()) << c.message;
    EXPECT_EQ(t.status().code(), absl::StatusCode::kInvalidArgument)
        << c.message;
    EXPECT_THAT(std::string(t.status().message()), HasSubstr(c.message));
  }
}

// B (K x N) read as an image when IMG is 1.
std::string ImageSpec() {
  return testing::GemmImageSpecHead(
             "spec_image_test",
             "constraints = [{ expression = \"IMG == 0 || image_support\", "
             "reason = \"no images\" }]\n",
             /*a_workload_dtype=*/false) +
         R"spec([kernel]
name = "k"
global = ["N", "M"]
args = ["M", "N", "K", "A", "b_image", "C"]
options = [{ text = "-DIMG", when = "IMG == 1" }]
[reference]
name = "r"
global = ["N", "M"]
args = ["M", "N", "K", "A", "B", "C"]
)spec";
}

// A library call with an epilogue kernel that runs when ACT != 0.
constexpr char kLibrarySpec[] = R"spec(
name = "spec_library_test"
op = "gemm"
flops = "2 * M * N * K"
[knobs]
ACT = [0, 1]
[[buffers]]
name = "A"
elements = "M * K"
[[buffers]]
name = "B"
elements = "K * N"
[[buffers]]
name = "C"
elements = "M * N"
output = true
[library]
name = "clblast"
routine = "gemm"
args = ["M", "N", "K", "float:1.5", "A", "B", "C"]
[kernel]
when = "ACT != 0"
name = "k"
global = ["M * N"]
args = ["C", "M * N"]
[reference]
name = "r"
global = ["N", "M"]
args = ["M", "N", "K", "A", "B", "C"]
)spec";

Workload Gemm(const char* shape, Dtype dtype = Dtype::kFp32) {
  auto w = Workload::Parse("gemm", shape, DtypeName(dtype));
  EXPECT_TRUE(w.ok()) << w.status();
  return *w;
}

DeviceLimits ImageDevice() {
  DeviceLimits l;
  l.max_work_group_size = 256;
  l.max_work_item_sizes = {256, 256, 256};
  l.local_mem_bytes = 32768;
  l.max_mem_alloc_bytes = uint64_t{1} << 30;
  l.image_support = true;
  l.image2d_max_width = 16384;
  l.image2d_max_height = 16384;
  return l;
}

TEST(SpecImages, AKnobChoosesTheImageOrTheBuffer) {
  auto t = SpecTemplate::Parse(ImageSpec(), "toml", kSource);
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_FALSE((*t)->is_library());
  const Workload w = Gemm("M=8,N=30,K=16");
  const LaunchDesc image = (*t)->Launch({1}, w);
  ASSERT_EQ(image.args.size(), 6u);
  EXPECT_EQ(image.args[4].kind, ArgDesc::Kind::kImage);
  EXPECT_EQ(image.args[4].buffer, "B");
  EXPECT_EQ(image.args[4].rows, 16u);
  EXPECT_EQ(image.args[4].row_elements, 30u);
  EXPECT_EQ(image.args[3].kind, ArgDesc::Kind::kBuffer);
  EXPECT_EQ(image.build_options, "-DIMG");
  EXPECT_FALSE(image.library.has_value());
  const LaunchDesc buffer = (*t)->Launch({0}, w);
  EXPECT_EQ(buffer.args[4].kind, ArgDesc::Kind::kBuffer);
  EXPECT_EQ(buffer.args[4].buffer, "B");
  EXPECT_EQ(buffer.build_options, "");
  // The reference reads the buffer.
  EXPECT_EQ((*t)->ReferenceLaunch(w).args[4].kind, ArgDesc::Kind::kBuffer);
}

TEST(SpecImages, LaunchChecksRefuseImagesTheDeviceCannotHold) {
  auto t = SpecTemplate::Parse(ImageSpec(), "toml", kSource);
  ASSERT_TRUE(t.ok()) << t.status();
  DeviceLimits limits = ImageDevice();
  // 4 * 16384 elements fill 16384 texels; one more does not fit.
  EXPECT_TRUE((*t)->CheckConfig({1}, Gemm("M=1,N=65536,K=2"), limits).ok());
  absl::Status wide = (*t)->CheckConfig({1}, Gemm("M=1,N=65537,K=2"), limits);
  EXPECT_THAT(std::string(wide.message()),
              HasSubstr("image b_image is 16385x2 texels"));
  EXPECT_THAT(std::string(wide.message()), HasSubstr("image2d_max_width"));
  EXPECT_TRUE((*t)->CheckConfig({0}, Gemm("M=1,N=65537,K=2"), limits).ok());
  limits.image2d_max_height = 8;
  EXPECT_FALSE((*t)->CheckConfig({1}, Gemm("M=8,N=32,K=16"), limits).ok());
  // Without image support the spec's own constraint refuses first.
  limits = ImageDevice();
  limits.image_support = false;
  EXPECT_THAT(
      std::string(
          (*t)->CheckConfig({1}, Gemm("M=8,N=32,K=16"), limits).message()),
      HasSubstr("no images"));
  EXPECT_TRUE((*t)->CheckConfig({0}, Gemm("M=8,N=32,K=16"), limits).ok());
}

TEST(SpecImages, TheJsonFormCarriesTheTables) {
  auto toml = SpecTemplate::Parse(ImageSpec(), "toml", kSource);
  ASSERT_TRUE(toml.ok()) << toml.status();
  // The same spec as JSON (what a client may send), through toml++.
  auto j = nlohmann::json::parse(R"({
    "name": "spec_image_test", "op": "gemm", "flops": "2 * M * N * K",
    "knobs": {"IMG": [0, 1]},
    "buffers": [{"name": "A", "elements": "M * K"},
                {"name": "B", "elements": "K * N"},
                {"name": "C", "elements": "M * N", "output": true}],
    "images": [{"name": "b_image", "buffer": "B", "rows": "K",
                "row_elements": "N", "when": "IMG == 1"}],
    "library": {"name": "clblast", "routine": "gemm",
                "args": ["M", "N", "K", "A", "B", "C"]},
    "kernel": {"name": "k", "global": ["N", "M"],
               "args": ["M", "N", "K", "A", "b_image", "C"]},
    "reference": {"name": "r", "global": ["N", "M"],
                  "args": ["M", "N", "K", "A", "B", "C"]}})");
  auto t = SpecTemplate::Parse(j.dump(), "json", kSource);
  ASSERT_TRUE(t.ok()) << t.status();
  const LaunchDesc l = (*t)->Launch({1}, Gemm("M=4,N=8,K=3"));
  EXPECT_EQ(l.args[4].kind, ArgDesc::Kind::kImage);
  EXPECT_EQ(l.args[4].rows, 3u);
  ASSERT_TRUE(l.library.has_value());
  EXPECT_EQ(l.library->routine, "gemm");
  EXPECT_EQ((*t)->model().images.size(), 1u);
}

TEST(SpecImages, BadImagesNameTheTableAndField) {
  const std::string spec = ImageSpec();
  ExpectEditsRefused(
      spec,
      {
          SpecEdit{"buffer = \"B\"\nrows", "buffer = \"D\"\nrows",
                   "images.buffer of image b_image: 'D' is not a [[buffers]] "
                   "name"},
          SpecEdit{"name = \"b_image\"", "name = \"A\"",
                   "images.name: A is a buffer's name"},
          SpecEdit{"name = \"b_image\"", "name = \"IMG\"",
                   "images.name: IMG is taken by a dim, knob, let or limit"},
          SpecEdit{"name = \"b_image\"", "name = \"1x\"",
                   "images.name: '1x' is not an identifier"},
          SpecEdit{"rows = \"K\"", "rows = \"K *\"",
                   "images.rows of image b_image: expression 'K *'"},
          SpecEdit{"row_elements = \"N\"\n", "",
                   "images.row_elements of image b_image: missing "
                   "\"row_elements\""},
          SpecEdit{"when = \"IMG == 1\"", "when = \"image_support\"",
                   "images.when of image b_image: reads image_support, a "
                   "device limit"},
          SpecEdit{"args = [\"M\", \"N\", \"K\", \"A\", \"B\", \"C\"]",
                   "args = [\"M\", \"N\", \"K\", \"A\", \"b_image\", \"C\"]",
                   "reference.args: image b_image is for [kernel].args only"},
          SpecEdit{"global = [\"N\", \"M\"]\nargs",
                   "when = \"IMG\"\nglobal = "
                   "[\"N\", \"M\"]\nargs",
                   "kernel.when: only the [kernel] of a library spec"},
      });
  // Two images of one name.
  const std::string image =
      "[[images]]\nname = \"b_image\"\nbuffer = \"A\"\nrows = \"M\"\n"
      "row_elements = \"K\"\n[kernel]";
  std::string twice = spec;
  twice.replace(twice.find("[kernel]"), 8, image);
  auto t = SpecTemplate::Parse(twice, "toml", kSource);
  EXPECT_THAT(std::string(t.status().message()),
              HasSubstr("images.name: image b_image is repeated"));
}

TEST(SpecLibrary, ALaunchIsTheCallAndTheEpilogueWhenItRuns) {
  auto t = SpecTemplate::Parse(kLibrarySpec, "toml", kSource);
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_TRUE((*t)->is_library());
  const Workload w = Gemm("M=4,N=6,K=5");
  const LaunchDesc call = (*t)->Launch({0}, w);
  ASSERT_TRUE(call.library.has_value());
  EXPECT_EQ(call.library->name, "clblast");
  EXPECT_EQ(call.library->routine, "gemm");
  ASSERT_EQ(call.library->args.size(), 7u);
  EXPECT_EQ(call.library->args[0].kind, ArgDesc::Kind::kInt);
  EXPECT_EQ(call.library->args[1].value, 6);
  EXPECT_EQ(call.library->args[3].kind, ArgDesc::Kind::kFloat);
  EXPECT_FLOAT_EQ(call.library->args[3].real, 1.5f);
  EXPECT_EQ(call.library->args[6].kind, ArgDesc::Kind::kBuffer);
  EXPECT_EQ(call.library->args[6].buffer, "C");
  // ACT == 0: no kernel.
  EXPECT_TRUE(call.source.empty());
  EXPECT_TRUE(call.kernel_name.empty());
  EXPECT_TRUE(call.global.empty());
  EXPECT_TRUE(call.args.empty());
  const LaunchDesc epilogue = (*t)->Launch({1}, w);
  ASSERT_TRUE(epilogue.library.has_value());
  EXPECT_EQ(epilogue.kernel_name, "k");
  EXPECT_EQ(epilogue.global, (std::vector<uint64_t>{24}));
  ASSERT_EQ(epilogue.args.size(), 2u);
  EXPECT_EQ(epilogue.args[1].value, 24);
  EXPECT_FALSE(epilogue.source.empty());
  // The reference is a kernel.
  const LaunchDesc reference = (*t)->ReferenceLaunch(w);
  EXPECT_FALSE(reference.library.has_value());
  EXPECT_EQ(reference.kernel_name, "r");
  // Launch checks apply to the kernel only: a skipped epilogue passes any
  // device, a running one must fit it.
  DeviceLimits small = ImageDevice();
  small.max_work_group_size = 0;
  EXPECT_TRUE((*t)->CheckConfig({0}, w, small).ok());
}

TEST(SpecLibrary, NoKernelAndNoSharedSource) {
  // No [kernel]; the reference has its own source, so no `source` at all.
  std::string spec = kLibrarySpec;
  const size_t kernel = spec.find("[kernel]");
  spec.erase(kernel, spec.find("[reference]") - kernel);
  spec += "source = \"reference.cl\"\n";
  auto t = SpecTemplate::Parse(spec, "toml", "", kSource);
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_FALSE((*t)->model().has_kernel);
  const LaunchDesc l = (*t)->Launch({1}, Gemm("M=4,N=6,K=5"));
  ASSERT_TRUE(l.library.has_value());
  EXPECT_TRUE(l.source.empty());
  EXPECT_TRUE((*t)->CheckConfig({1}, Gemm("M=4,N=6,K=5"), DeviceLimits{}).ok());
  EXPECT_EQ((*t)->ReferenceLaunch(Gemm("M=4,N=6,K=5")).source, kSource);
  // Without [library], [kernel] is required again.
  std::string plain = spec;
  const size_t library = plain.find("[library]");
  plain.erase(library, plain.find("[reference]") - library);
  EXPECT_THAT(
      std::string(
          SpecTemplate::Parse(plain, "toml", "", kSource).status().message()),
      HasSubstr("missing table \"kernel\""));
}

TEST(SpecLibrary, TheSourceHashFollowsTheCall) {
  auto t = SpecTemplate::Parse(kLibrarySpec, "toml", kSource);
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_THAT(std::string((*t)->source()),
              HasSubstr("// tunefleet library call: clblast gemm(M, N, K, "
                        "float:1.5, A, B, C)\n"));
  // source() shipped back (as a client sends it) gives the same template.
  auto again =
      SpecTemplate::Parse(kLibrarySpec, "toml", std::string((*t)->source()));
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ((*again)->SourceHash(), (*t)->SourceHash());
  EXPECT_EQ((*again)->source(), (*t)->source());
  for (const auto& [from, to] :
       {std::pair{"routine = \"gemm\"", "routine = \"gemv\""},
        {"\"float:1.5\"", "\"float:2\""},
        {"name = \"clblast\"", "name = \"clml\""}}) {
    auto other = SpecTemplate::Parse(
        absl::StrReplaceAll(kLibrarySpec, {{from, to}}), "toml", kSource);
    ASSERT_TRUE(other.ok()) << other.status();
    EXPECT_NE((*other)->SourceHash(), (*t)->SourceHash()) << to;
  }
  // A newline in an argument cannot end the comment.
  auto hostile = SpecTemplate::Parse(
      absl::StrReplaceAll(kLibrarySpec,
                          {{"\"float:1.5\"", "\"float:1.5\\n+ 0\""}}),
      "toml", kSource);
  ASSERT_TRUE(hostile.ok()) << hostile.status();
  EXPECT_THAT(std::string((*hostile)->source()),
              HasSubstr("float:1.5\\n+ 0, A, B, C)\n"));
}

TEST(SpecLibrary, BadLibrariesNameTheField) {
  ExpectEditsRefused(
      kLibrarySpec,
      {
          SpecEdit{"routine = \"gemm\"\n", "", "library.routine: missing"},
          SpecEdit{"name = \"clblast\"", "name = \"clblast 1.5\"",
                   "library.name: 'clblast 1.5' is not an identifier"},
          SpecEdit{"\"float:1.5\"", "\"float:1.5 *\"",
                   "library.args: expression '1.5 *'"},
          SpecEdit{"args = [\"M\", \"N\", \"K\", \"float",
                   "args = \"M\"\nx = [\"",
                   "library.args: \"args\" must be a list"},
          SpecEdit{"when = \"ACT != 0\"", "when = \"library_clblast\"",
                   "kernel.when: reads library_clblast, a device limit"},
      });
  std::string image_arg = absl::StrReplaceAll(
      ImageSpec(), {{"[kernel]",
                     "[library]\nname = \"clblast\"\nroutine = "
                     "\"gemm\"\nargs = [\"b_image\"]\n[kernel]"}});
  EXPECT_THAT(
      std::string(
          SpecTemplate::Parse(image_arg, "toml", kSource).status().message()),
      HasSubstr("library.args: image b_image is for [kernel].args"));
}

TEST(SpecLimits, ConstraintsReadTheNewDeviceLimits) {
  const std::string spec = absl::StrReplaceAll(
      kLibrarySpec,
      {{"[knobs]",
        "constraints = [\"library_clblast == 1\", \"ACT == 0 || "
        "image2d_from_buffer\", \"library_clml == 0\"]\n[knobs]"}});
  auto t = SpecTemplate::Parse(spec, "toml", kSource);
  ASSERT_TRUE(t.ok()) << t.status();
  const Workload w = Gemm("M=4,N=6,K=5");
  DeviceLimits limits = ImageDevice();
  EXPECT_THAT(std::string((*t)->CheckConfig({0}, w, limits).message()),
              HasSubstr("library_clblast == 1"));
  limits.library_clblast = true;
  EXPECT_TRUE((*t)->CheckConfig({0}, w, limits).ok());
  EXPECT_FALSE((*t)->CheckConfig({1}, w, limits).ok());
  limits.image2d_from_buffer = true;
  EXPECT_TRUE((*t)->CheckConfig({1}, w, limits).ok());
  limits.library_clml = true;
  EXPECT_FALSE((*t)->CheckConfig({1}, w, limits).ok());
}

}  // namespace
}  // namespace tunefleet::templates
