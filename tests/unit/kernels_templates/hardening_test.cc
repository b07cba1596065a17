// Hostile input to tunefleet_templates: shapes that are 0, negative or whose
// products overflow; users' specs whose expressions yield absurd sizes, that
// nest too deep or list too much; a registry past its cap.
#include <cmath>
#include <limits>
#include <memory>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernels_templates/registry.h"
#include "kernels_templates/spec/spec_template.h"
#include "kernels_templates/workload.h"
#include "tests/support/template_fixtures.h"

namespace tunefleet::templates {
namespace {

using ::testing::HasSubstr;
using ::tunefleet::testing::SaxpySpecText;

TEST(Validation, WorkloadShapesRefuseZeroNegativeAndOverflow) {
  using templates::Workload;
  EXPECT_THAT(
      std::string(Workload::Parse("gemm", "M=0,N=8,K=8").status().message()),
      HasSubstr("shape dim M must be between 1"));
  EXPECT_THAT(
      std::string(Workload::Parse("gemm", "M=-1,N=8,K=8").status().message()),
      HasSubstr("shape dim M must be between 1"));
  // Past int64: not an integer at all.
  EXPECT_THAT(
      std::string(Workload::Parse("gemm", "M=99999999999999999999,N=8,K=8")
                      .status()
                      .message()),
      HasSubstr("non-integer value"));
  // Each dim fine, the product not.
  EXPECT_THAT(std::string(Workload::Parse("conv2d",
                                          "N=1024,C=65536,H=65536,W=65536,"
                                          "K=8,R=3,S=3")
                              .status()
                              .message()),
              HasSubstr("the product of its dims N*C*H*W*K*R*S*SH*SW*PH*PW*"
                        "DH*DW*G exceeds 2^53"));
  // 2^53 itself is allowed: 2^21 * 2^21 * 2^11.
  EXPECT_TRUE(Workload::Parse("gemm", "M=2097152,N=2097152,K=2048").ok());
  EXPECT_FALSE(Workload::Parse("gemm", "M=2097152,N=2097152,K=2049").ok());
  EXPECT_THAT(
      std::string(
          Workload::Create("pool2d",
                           {{"C", 8}, {"H", 8}, {"W", 8}, {"R", 2}, {"S", 2}},
                           Dtype::kFp32, {{"mode", "max"}, {"mode", "avg"}})
              .status()
              .message()),
      HasSubstr("attribute mode is given more than once"));
  std::vector<templates::Dim> many(100, templates::Dim{"M", 1});
  EXPECT_THAT(std::string(Workload::Create("gemm", many).status().message()),
              HasSubstr("has 100 dims"));
}

TEST(Validation, SpecTemplatesClampWhatTheirExpressionsYield) {
  // Huge or NaN sizes from expressions must not reach an integer
  // conversion unclamped (undefined behaviour).
  const std::string spec = absl::StrReplaceAll(
      SaxpySpecText(),
      {{"name = \"saxpy_val\"", "name = \"saxpy_clamp\""},
       {"global = [\"ceil(N / (VW * WG)) * WG\"]", "global = [\"N * 1e300\"]"},
       {"args = [\"N\", \"float:2\", \"x\", \"y\"]\n[reference]",
        "args = [\"N * 1e30\", \"float:N * 1e300\", \"x\", \"y\"]\n"
        "[reference]"},
       {"elements = \"N\"\n[[buffers]]",
        "elements = \"N ^ 400\"\n[[buffers]]"}});
  auto t = templates::SpecTemplate::Parse(spec, "toml", "kernel void f() {}");
  ASSERT_TRUE(t.ok()) << t.status();
  ASSERT_TRUE(templates::RegisterOp((*t)->Op()).ok());
  auto w = templates::Workload::Parse("saxpy_val", "N=1000");
  ASSERT_TRUE(w.ok()) << w.status();
  const templates::LaunchDesc l = (*t)->Launch({1, 16}, *w);
  EXPECT_EQ(l.global, std::vector<uint64_t>{uint64_t{1} << 53});
  ASSERT_EQ(l.args.size(), 4u);
  EXPECT_EQ(l.args[0].value, std::numeric_limits<int32_t>::max());
  EXPECT_EQ(l.args[1].real, std::numeric_limits<float>::max());
  // N ^ 400 is not finite: the buffer falls back to 1 element, and the
  // workload check refuses it.
  EXPECT_EQ((*t)->Buffers(*w)[0].elements, 1u);
  EXPECT_FALSE((*t)->CheckWorkload(*w, templates::DeviceLimits{}).ok());
}

TEST(Validation, SpecTemplatesRefuseDeepNestingAndTooManyItems) {
  std::string deep = "{\"name\": \"deep\", \"op\": \"deep\", \"dims\": ";
  for (int i = 0; i < 100000; ++i) deep += "[";
  auto nested = templates::SpecTemplate::Parse(deep, "json", "x");
  EXPECT_THAT(std::string(nested.status().message()),
              HasSubstr("nested deeper than 32 levels"));
  std::string knobs;
  for (int i = 0; i < 40; ++i) absl::StrAppend(&knobs, "K", i, " = [1]\n");
  auto many = templates::SpecTemplate::Parse(
      absl::StrReplaceAll(SaxpySpecText(),
                          {{"VW = [1, 2, 4]\n", knobs}, {"VW * ", ""}}),
      "toml", "x");
  EXPECT_THAT(std::string(many.status().message()),
              HasSubstr("knobs: 41 knobs; at most 32"));
  auto big =
      templates::SpecTemplate::Parse(std::string(2 << 20, ' '), "toml", "x");
  EXPECT_THAT(std::string(big.status().message()),
              HasSubstr("the spec is 2097152 bytes; at most 1048576"));
}

// Issue 34: a dotted TOML key 20,000 segments deep (40 KB) once took the
// server past 4 GB; the caps are now read on the text before toml++ runs.
TEST(Validation, SpecTextCapsAreCheckedBeforeParsing) {
  std::string deep = "a";
  for (int i = 1; i < 20000; ++i) deep += ".a";
  for (const std::string& text :
       {deep + " = 1\n", "[" + deep + "]\n", "[[" + deep + "]]\n",
        "x = " + std::string(200, '[') + std::string(200, ']') + "\n",
        "x = " + std::string(40, '{') + "\n"}) {
    auto t = SpecTemplate::Parse(text + SaxpySpecText(), "toml", "x");
    EXPECT_THAT(std::string(t.status().message()),
                HasSubstr("nested deeper than 32 levels"))
        << text.substr(0, 40);
  }
  std::string wide = "x = [";
  for (size_t i = 0; i <= kMaxSpecValues; ++i) wide += "1,";
  wide += "]\n";
  EXPECT_THAT(
      std::string(SpecTemplate::Parse(wide, "toml", "x").status().message()),
      HasSubstr("keys and values"));
  const std::string long_string =
      "x = \"" + std::string(kMaxSpecStringBytes + 1, 's') + "\"\n";
  EXPECT_THAT(
      std::string(
          SpecTemplate::Parse(long_string, "toml", "x").status().message()),
      HasSubstr("a string or key of"));
  EXPECT_THAT(std::string(SpecTemplate::Parse(
                              "{\"a\": \"" + std::string(70000, 's') + "\"}",
                              "json", "x")
                              .status()
                              .message()),
              HasSubstr("a string or key of 70000 bytes"));
}

// Issue 34: what no agent compiles is refused with the spec.
TEST(Validation, SpecTemplatesRefuseSourcesAndOptionsThatReadFiles) {
  auto include = SpecTemplate::Parse(
      SaxpySpecText(), "toml", "#include \"/etc/passwd\"\nkernel void f(){}");
  EXPECT_THAT(std::string(include.status().message()),
              HasSubstr("source: line 1: #include is not allowed"));
  auto reference = SpecTemplate::Parse(SaxpySpecText(), "toml", "x",
                                       "#line 1 \"/etc/passwd\"\n");
  EXPECT_THAT(std::string(reference.status().message()),
              HasSubstr("reference source: line 1: #line is not allowed"));
  for (const char* options :
       {"options = \"-DA={VW} -I/etc\"", "options = [\"-DA=1 \", \"-I/etc\"]",
        "options = [\"-\", { text = \"include /x\", when = \"VW == 1\" }]"}) {
    auto t = SpecTemplate::Parse(
        absl::StrReplaceAll(
            SaxpySpecText(),
            {{"[kernel]\n", absl::StrCat("[kernel]\n", options, "\n")}}),
        "toml", "x");
    EXPECT_THAT(std::string(t.status().message()),
                HasSubstr("kernel.options: build option"))
        << options;
  }
}

// Issue 34: a user's template is registered only once its submission is
// accepted (CommitUserTemplate), so refused ones register nothing.
TEST(Validation, ParsedUserTemplatesRegisterNothingUntilCommitted) {
  const size_t before = AllTemplates().size();
  const std::string spec = absl::StrReplaceAll(
      SaxpySpecText(), {{"name = \"saxpy_val\"", "name = \"pending_t\""},
                        {"op = \"saxpy_val\"", "op = \"pending_op\""}});
  auto pending = ParseUserTemplate(spec, "toml", "kernel void f(){}");
  ASSERT_TRUE(pending.ok()) << pending.status();
  EXPECT_FALSE(pending->registered());
  ASSERT_NE(pending->new_op(), nullptr);
  EXPECT_EQ(AllTemplates().size(), before);
  EXPECT_EQ(FindOp("pending_op"), nullptr);
  // A workload of the new op, made before the op is registered.
  auto w = Workload::Create(*pending->new_op(), {{"N", 100}});
  ASSERT_TRUE(w.ok()) << w.status();
  EXPECT_EQ(w->Canonical(), "pending_op N=100 fp32");
  EXPECT_TRUE(pending->get()->Accepts(*w));
  const KernelTemplate* checked = pending->get();
  auto committed = CommitUserTemplate(*std::move(pending));
  ASSERT_TRUE(committed.ok()) << committed.status();
  EXPECT_EQ(*committed, checked);
  EXPECT_EQ(AllTemplates().size(), before + 1);
  EXPECT_NE(FindOp("pending_op"), nullptr);
  // The same spec again: the registered template, nothing to commit.
  auto again = ParseUserTemplate(spec, "toml", "kernel void f(){}");
  ASSERT_TRUE(again.ok());
  EXPECT_TRUE(again->registered());
  EXPECT_EQ(again->get(), checked);
  // Another source under the name: refused at once.
  auto other = ParseUserTemplate(spec, "toml", "kernel void g(){}");
  EXPECT_TRUE(absl::IsAlreadyExists(other.status())) << other.status();
}

TEST(Validation, RegistryRefusesTemplatesPastItsCap) {
  absl::Status last;
  size_t registered = 0;
  for (size_t i = 0; i <= templates::kMaxRegisteredTemplates; ++i) {
    const std::string spec = absl::StrReplaceAll(
        SaxpySpecText(),
        {{"name = \"saxpy_val\"", absl::StrCat("name = \"cap_", i, "\"")}});
    auto t = templates::RegisterSpecTemplate(spec, "toml", "kernel void f(){}");
    if (!t.ok()) {
      last = t.status();
      break;
    }
    ++registered;
  }
  EXPECT_EQ(last.code(), absl::StatusCode::kResourceExhausted) << last;
  EXPECT_LE(registered, templates::kMaxRegisteredTemplates);
  EXPECT_GT(registered, templates::kMaxRegisteredTemplates - 16);
}

}  // namespace
}  // namespace tunefleet::templates
