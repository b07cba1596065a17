// tune -> emit -> build the emitted library with CMake -> install -> use it
// from another project via find_package -> run on PoCL against a host
// reference.
#include <cstdio>
#include <filesystem>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "kernels_templates/registry.h"
#include "nlohmann/json.hpp"
#include "tests/support/command_runner.h"

namespace tunefleet {
namespace {

using testing::BinaryDir;
using testing::RunCommand;
using testing::SourceDir;

// Expects each line of emit_consumer's output to show the launch the tuner
// itself computes for the shape and config: the library's geometry and
// build options are generated from the template's spec, not written again.
void ExpectLaunchesOfTheTemplate(const std::string& output) {
  const templates::KernelTemplate& gemm =
      *templates::FindTemplate("gemm", "gemm_tiled").value();
  std::istringstream lines(output);
  std::string line;
  int checked = 0;
  while (std::getline(lines, line)) {
    int m = 0, n = 0, k = 0;
    char match[32], device[32], config[256];
    double error = 0;
    if (std::sscanf(line.c_str(), "%dx%dx%d %31s %31s %lf %255s", &m, &n, &k,
                    match, device, &error, config) != 7) {
      continue;
    }
    auto workload =
        templates::Workload::Create("gemm", {{"M", m}, {"N", n}, {"K", k}});
    auto values = gemm.ParseConfig(config);
    ASSERT_TRUE(workload.ok() && values.ok()) << line;
    const templates::LaunchDesc l = gemm.Launch(*values, *workload);
    EXPECT_NE(line.find(absl::StrCat("[", l.build_options, "] g=", l.global[0],
                                     ",", l.global[1], " l=", l.local[0], ",",
                                     l.local[1])),
              std::string::npos)
        << line;
    ++checked;
  }
  EXPECT_EQ(checked, 4);
}

TEST(EmittedLibrary, BuildsInstallsAndComputesCorrectGemms) {
  const std::string bin = BinaryDir() + "/cli/tunefleet";
  const std::string src = SourceDir();
  const std::string work =
      ::testing::TempDir() + "/emit_test_" + std::to_string(getpid());
  std::filesystem::remove_all(work);
  std::filesystem::create_directories(work);
  const std::string db = work + "/t.db";

  auto tune = RunCommand(bin + " tune --shape M=64,N=48,K=40 --trials 6 " +
                         "--skip-reference --json --db " + db);
  ASSERT_EQ(tune.exit_code, 0) << tune.err;
  const auto tuned = nlohmann::json::parse(tune.out);
  const std::string key = tuned["device_key"];
  ASSERT_FALSE(tuned["best"].is_null());

  auto emit = RunCommand(bin + " emit --json --db " + db + " --device-key " +
                         key + " --out " + work + "/lib");
  ASSERT_EQ(emit.exit_code, 0) << emit.err;
  EXPECT_EQ(nlohmann::json::parse(emit.out)["entries"], 1);

  auto build =
      RunCommand("cmake -S " + work + "/lib -B " + work +
                 "/lib-build -DCMAKE_INSTALL_PREFIX=" + work +
                 "/prefix && cmake --build " + work +
                 "/lib-build -j2 && cmake --install " + work + "/lib-build");
  ASSERT_EQ(build.exit_code, 0) << build.out << build.err;
  auto consumer =
      RunCommand("cmake -S " + src + "/tests/data/emit_consumer -B " + work +
                 "/consumer -DCMAKE_PREFIX_PATH=" + work +
                 "/prefix && cmake --build " + work + "/consumer -j2");
  ASSERT_EQ(consumer.exit_code, 0) << consumer.out << consumer.err;

  // The tuned shape, a nearby one, odd ones and a tiny one.
  auto run = RunCommand(work + "/consumer/emit_consumer 64x48x40 50x70x33 " +
                        "1x1x1 129x3x77");
  EXPECT_EQ(run.exit_code, 0) << run.out << run.err;
  EXPECT_NE(run.out.find("64x48x40 exact name"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("50x70x33 nearest name"), std::string::npos)
      << run.out;
  EXPECT_NE(run.out.find(tuned["best"]["config_string"].get<std::string>()),
            std::string::npos)
      << run.out;
  ExpectLaunchesOfTheTemplate(run.out);
  std::filesystem::remove_all(work);
}

TEST(EmittedLibrary, RefusesUnknownDeviceKeys) {
  const std::string bin = BinaryDir() + "/cli/tunefleet";
  const std::string work =
      ::testing::TempDir() + "/emit_refuse_" + std::to_string(getpid());
  std::filesystem::create_directories(work);
  auto tune = RunCommand(bin + " tune --shape M=8,N=8,K=8 --trials 1 " +
                         "--skip-reference --db " + work + "/t.db");
  ASSERT_EQ(tune.exit_code, 0) << tune.err;
  auto emit = RunCommand(bin + " emit --db " + work +
                         "/t.db --device-key no-such-key --out " + work + "/o");
  EXPECT_EQ(emit.exit_code, 2);
  EXPECT_NE(emit.err.find("no device with key 'no-such-key'"),
            std::string::npos)
      << emit.err;
  EXPECT_FALSE(std::filesystem::exists(work + "/o"));
  std::filesystem::remove_all(work);
}

}  // namespace
}  // namespace tunefleet
