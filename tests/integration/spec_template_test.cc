// Users' templates from declarative specs (TOML or JSON).
#include "kernels_templates/spec/spec_template.h"

#include <filesystem>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernels_templates/registry.h"
#include "nlohmann/json.hpp"
#include "tests/support/command_runner.h"
#include "tests/support/template_harness.h"

namespace tunefleet::templates {
namespace {

using ::testing::HasSubstr;

std::string SaxpySpec() {
  return testing::SourceDir() + "/tests/data/templates/saxpy.toml";
}

TEST(SpecTemplate, LoadsAndRunsAgainstItsReference) {
  auto t = SpecTemplate::Load(SaxpySpec());
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ((*t)->name(), "saxpy_vec");
  EXPECT_EQ((*t)->op(), "saxpy");
  ASSERT_EQ((*t)->knobs().size(), 2u);
  EXPECT_EQ((*t)->knobs()[0].name, "VW");
  ASSERT_TRUE(RegisterOp((*t)->Op()).ok());
  auto w = Workload::Parse("saxpy", "N=1001");
  ASSERT_TRUE(w.ok()) << w.status();
  EXPECT_DOUBLE_EQ((*t)->Flops(*w), 2002);
  EXPECT_DOUBLE_EQ((*t)->Bytes(*w), 12012);
  auto config = (*t)->ParseConfig("VW=4,WG=64");
  ASSERT_TRUE(config.ok());
  const LaunchDesc l = (*t)->Launch(*config, *w);
  EXPECT_EQ(l.global, (std::vector<uint64_t>{256}));  // ceil(1001/256) * 64
  EXPECT_EQ(l.local, (std::vector<uint64_t>{64}));
  EXPECT_EQ(l.build_options, "-DVW=4 -DWG=64");
  ASSERT_EQ(l.args.size(), 5u);
  EXPECT_EQ(l.args[1].kind, ArgDesc::Kind::kFloat);
  EXPECT_FLOAT_EQ(l.args[1].real, 2.5f);
  // A constraint of the spec: VW * WG <= 4 * N.
  const Workload tiny = *Workload::Parse("saxpy", "N=10");
  auto big = *(*t)->ParseConfig("VW=8,WG=128");
  auto refused = (*t)->CheckConfig(big, tiny, testing::DeviceLimits());
  EXPECT_THAT(std::string(refused.message()), HasSubstr("VW * WG <= 4 * N"));
  EXPECT_THAT(testing::CheckRandomConfigs(
                  **t, {*w, tiny, *Workload::Parse("saxpy", "N=5")}, 4, 5),
              ::testing::IsEmpty());
}

TEST(SpecTemplate, BadSpecsNameWhatIsWrong) {
  const std::string ok_kernel =
      "[kernel]\nname = \"k\"\nglobal = [\"N\"]\nargs = [\"N\", \"y\"]\n"
      "[reference]\nname = \"r\"\nglobal = [\"N\"]\nargs = [\"N\", \"y\"]\n";
  const std::string head =
      "name = \"t\"\nop = \"spec_test_op\"\ndims = [\"N\"]\nflops = \"N\"\n";
  const std::string knobs = "[knobs]\nA = [1, 2]\n";
  const std::string buffers =
      "[[buffers]]\nname = \"y\"\nelements = \"N\"\noutput = true\n";
  struct Case {
    std::string spec;
    const char* message;
  };
  for (const Case& c : {
           Case{"name = ", "TOML error at line 1"},
           Case{"op = \"x\"\n", "missing field \"name\""},
           Case{head + buffers + ok_kernel, "missing table \"knobs\""},
           Case{head + knobs + ok_kernel, "missing [[buffers]]"},
           Case{head + knobs + "[[buffers]]\nname = \"y\"\nelements = \"N\"\n" +
                    ok_kernel,
                "no buffer has output = true"},
           Case{head + knobs + buffers +
                    "[kernel]\nname = \"k\"\nglobal = [\"N * B\"]\n"
                    "[reference]\nname = \"r\"\nglobal = [\"N\"]\n",
                "kernel.global: expression 'N * B'"},
           Case{
               head + "constraints = [\"A <\"]\n" + knobs + buffers + ok_kernel,
               "constraints: expression 'A <'"},
           Case{"name = \"t\"\nop = \"spec_new_op\"\nflops = \"1\"\n" + knobs +
                    buffers + ok_kernel,
                "op spec_new_op is new: give its \"dims\""},
           Case{"name = \"t\"\nop = \"gemm\"\ndims = [\"X\"]\nflops = \"1\"\n" +
                    knobs + buffers + ok_kernel,
                "op gemm exists with dims M,N,K"},
           Case{head + "[knobs]\nA = [1.5]\n" + buffers + ok_kernel,
                "knob A: values must be integers"},
       }) {
    auto t = SpecTemplate::Parse(c.spec, "toml", "__kernel void k() {}");
    ASSERT_FALSE(t.ok()) << c.spec;
    EXPECT_EQ(t.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(std::string(t.status().message()), HasSubstr(c.message))
        << c.spec;
  }
  EXPECT_EQ(SpecTemplate::Load("/nonexistent.toml").status().code(),
            absl::StatusCode::kNotFound);
}

TEST(SpecTemplate, RegisteringTwiceReturnsTheSameTemplate) {
  auto loaded = SpecTemplate::Load(SaxpySpec());
  ASSERT_TRUE(loaded.ok());
  const std::string source((*loaded)->source());
  auto a = RegisterSpecTemplate((*loaded)->spec_text(), "toml", source);
  auto b = RegisterSpecTemplate((*loaded)->spec_text(), "toml", source);
  ASSERT_TRUE(a.ok() && b.ok()) << a.status() << b.status();
  EXPECT_EQ(*a, *b);
  auto other = RegisterSpecTemplate((*loaded)->spec_text(), "toml",
                                    source + "\n// changed\n");
  EXPECT_EQ(other.status().code(), absl::StatusCode::kAlreadyExists);
  auto w = Workload::Parse("saxpy", "N=64");
  ASSERT_TRUE(w.ok());
  auto found = FindTemplateFor(*w, "");
  ASSERT_TRUE(found.ok());
  EXPECT_EQ((*found)->name(), "saxpy_vec");
}

TEST(SpecTemplate, TunesFromTheCommandLine) {
  const std::string bin = testing::BinaryDir() + "/cli/tunefleet";
  const std::string db =
      ::testing::TempDir() + "/spec_" + std::to_string(getpid()) + ".db";
  std::filesystem::remove(db);
  auto r = testing::RunCommand(bin + " tune --json --quiet --template " +
                               SaxpySpec() + " --shape N=4099 --trials 6 " +
                               "--db " + db);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["workload"], "saxpy N=4099 fp32");
  EXPECT_EQ(j["errors"]["OK"], 6);
  EXPECT_GT(j["speedup_vs_reference"].get<double>(), 0);
  std::filesystem::remove(db);
}

}  // namespace
}  // namespace tunefleet::templates
