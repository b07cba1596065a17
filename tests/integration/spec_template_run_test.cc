// Users' templates from declarative specs, run: a spec template against its
// reference on the OpenCL device, and tuned from the command line.
#include <atomic>
#include <cmath>
#include <filesystem>
#include <latch>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernels_templates/registry.h"
#include "kernels_templates/spec/expression.h"
#include "kernels_templates/spec/spec_template.h"
#include "nlohmann/json.hpp"
#include "tests/support/command_runner.h"
#include "tests/support/template_fixtures.h"
#include "tests/support/template_harness.h"

namespace tunefleet::templates {
namespace {

using ::testing::HasSubstr;

TEST(SpecTemplate, LoadsAndRunsAgainstItsReference) {
  auto t = SpecTemplate::Load(testing::SaxpySpecPath());
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

TEST(SpecTemplate, TunesFromTheCommandLine) {
  const std::string bin = testing::CliBinary();
  const std::string db =
      ::testing::TempDir() + "/spec_" + std::to_string(getpid()) + ".db";
  std::filesystem::remove(db);
  auto r = testing::RunCommand(bin + " tune --json --quiet --template " +
                               testing::SaxpySpecPath() +
                               " --shape N=4099 --trials 6 " + "--db " + db);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["workload_key"], "saxpy N=4099 fp32");
  EXPECT_EQ(j["errors"]["OK"], 6);
  EXPECT_GT(j["speedup_vs_reference"].get<double>(), 0);
  std::filesystem::remove(db);
}

}  // namespace
}  // namespace tunefleet::templates
