// A whole model: tune every task of a small ONNX model, emit the library,
// build it, and run each task through it against host implementations
// (tests/data/emit_model_consumer).
#include <filesystem>
#include <fstream>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/support/command_runner.h"
#include "tests/support/onnx_test_models.h"

namespace tunefleet {
namespace {

using testing::BinaryDir;
using testing::RunCommand;
using testing::SourceDir;

TEST(Model, TunesEmitsAndRunsEveryTaskCorrectly) {
  const std::string bin = BinaryDir() + "/cli/tunefleet";
  const std::string work =
      ::testing::TempDir() + "/model_test_" + std::to_string(getpid());
  std::filesystem::remove_all(work);
  std::filesystem::create_directories(work);
  {
    std::ofstream model(work + "/small.onnx", std::ios::binary);
    model << testing::SmallNet();
  }
  const std::string db = work + "/t.db";
  auto tasks = RunCommand(bin + " tasks --json --onnx " + work +
                          "/small.onnx --input-shape image=1,3,17,23");
  ASSERT_EQ(tasks.exit_code, 0) << tasks.err;
  const auto listed = nlohmann::json::parse(tasks.out);
  ASSERT_EQ(listed["tasks"].size(), 7u);

  auto tune = RunCommand(bin + " tune --json --quiet --onnx " + work +
                         "/small.onnx --input-shape image=1,3,17,23 " +
                         "--trials-per-task 3 --db " + db);
  ASSERT_EQ(tune.exit_code, 0) << tune.err;
  const auto tuned = nlohmann::json::parse(tune.out);
  ASSERT_EQ(tuned["tasks"].size(), 7u);
  std::string workloads;
  for (const auto& t : tuned["tasks"]) {
    EXPECT_EQ(t["state"], "done") << t.dump();
    EXPECT_TRUE(t.contains("best")) << t.dump();
    workloads += " '" + t["workload"].get<std::string>() + "'";
  }
  EXPECT_TRUE(tuned["latency_complete"].get<bool>());
  EXPECT_GT(tuned["latency_ms"]["naive"].get<double>(), 0);
  EXPECT_GT(tuned["latency_ms"]["tuned"].get<double>(), 0);

  auto emit =
      RunCommand(bin + " emit --json --db " + db + " --out " + work + "/lib");
  ASSERT_EQ(emit.exit_code, 0) << emit.err;
  EXPECT_EQ(nlohmann::json::parse(emit.out)["entries"], 7);
  auto build = RunCommand("cmake -S " + work + "/lib -B " + work +
                          "/lib-build -DCMAKE_INSTALL_PREFIX=" + work +
                          "/prefix && cmake --build " + work +
                          "/lib-build -j2 && cmake --install " + work +
                          "/lib-build && " + "cmake -S " + SourceDir() +
                          "/tests/data/emit_model_consumer -B " + work +
                          "/consumer -DCMAKE_PREFIX_PATH=" + work +
                          "/prefix && cmake --build " + work + "/consumer -j2");
  ASSERT_EQ(build.exit_code, 0) << build.out << build.err;
  auto run = RunCommand(work + "/consumer/emit_model_consumer" + workloads);
  EXPECT_EQ(run.exit_code, 0) << run.out << run.err;
  EXPECT_THAT(run.out, ::testing::Not(::testing::HasSubstr("MISMATCH")));
  EXPECT_EQ(std::count(run.out.begin(), run.out.end(), '\n'), 7) << run.out;
  std::filesystem::remove_all(work);
}

}  // namespace
}  // namespace tunefleet
