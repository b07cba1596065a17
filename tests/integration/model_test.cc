// A whole model: tune every task of a small ONNX model, emit the library,
// build it, and run each task through it against host implementations
// (tests/data/emit_model_consumer).
#include <filesystem>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "kernels_templates/registry.h"
#include "store/store.h"
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
  int library_jobs = 0;
  for (const auto& t : tuned["tasks"]) {
    EXPECT_EQ(t["state"], "done") << t.dump();
    EXPECT_TRUE(t.contains("best")) << t.dump();
    workloads += " '" + t["workload"].get<std::string>() + "'";
    // The library candidates of conv2d and dense ran within the budget.
    uint32_t trials = t["trials"].get<uint32_t>();
    for (const auto& l : t["library"]) {
      EXPECT_TRUE(l.contains("time_ms")) << l.dump();
      trials += l["trials"].get<uint32_t>();
      ++library_jobs;
    }
    EXPECT_LE(trials, 3u) << t.dump();
    const std::string op = t["workload"].get<std::string>().substr(0, 6);
    if (op == "conv2d" || op == "dense ") {
      EXPECT_FALSE(t["library"].empty()) << t.dump();
    }
  }
  EXPECT_GT(library_jobs, 0);
  EXPECT_TRUE(tuned["latency_complete"].get<bool>());
  EXPECT_GT(tuned["latency_ms"]["naive"].get<double>(), 0);
  EXPECT_GT(tuned["latency_ms"]["tuned"].get<double>(), 0);

  auto emit =
      RunCommand(bin + " emit --json --db " + db + " --out " + work + "/lib");
  ASSERT_EQ(emit.exit_code, 0) << emit.err;
  EXPECT_EQ(nlohmann::json::parse(emit.out)["entries"], 7);
  auto build = testing::BuildEmittedLibrary(work, "emit_model_consumer");
  ASSERT_EQ(build.exit_code, 0) << build.out << build.err;
  auto run = RunCommand(work + "/consumer/emit_model_consumer" + workloads);
  EXPECT_EQ(run.exit_code, 0) << run.out << run.err;
  EXPECT_THAT(run.out, ::testing::Not(::testing::HasSubstr("MISMATCH")));
  EXPECT_EQ(std::count(run.out.begin(), run.out.end(), '\n'), 7) << run.out;
  std::filesystem::remove_all(work);
}

// Library entries: where a CLBlast call measured fastest for a workload,
// the emitted library's entry calls CLBlast, its epilogue kernel after it,
// and the package links CLBlast; each matches the host implementation. The
// calls are tuned for real; beside each, a record of the op's generated
// template and its naive kernel, slower, are written through the store, so
// that the library call wins the per-workload choice whatever PoCL's
// timings.
// Writes a record of the op's generated template (its first knob values)
// for the workload of a `tune --json` summary, 10x slower than its best,
// with a naive kernel 10x slower too.
void AddSlowerGeneratedRecord(const std::string& db,
                              const nlohmann::json& tuned) {
  auto store = store::Store::Open(db);
  ASSERT_TRUE(store.ok()) << store.status();
  auto devices = (*store)->ListDevices();
  ASSERT_TRUE(devices.ok() && devices->size() == 1u);
  const std::string workload = tuned["workload"];
  auto w = templates::Workload::ParseCanonical(workload);
  ASSERT_TRUE(w.ok()) << w.status();
  auto tmpl = templates::FindTemplateFor(*w, "");
  ASSERT_TRUE(tmpl.ok()) << tmpl.status();
  ASSERT_FALSE((*tmpl)->is_library());
  std::string config;
  for (const templates::Knob& k : (*tmpl)->knobs()) {
    config += (config.empty() ? "" : ",") + k.name + "=" +
              std::to_string(k.values[0]);
  }
  const double ns = 10 * 1e6 * tuned["best"]["time_ms"].get<double>();
  auto id = (*store)->CreateJob({*w, *tmpl, devices->front().first,
                                 tunefleet::v1::STRATEGY_RANDOM, 1, 1, 0});
  ASSERT_TRUE(id.ok()) << id.status();
  ASSERT_TRUE((*store)->SetJobReference(*id, ns).ok());
  auto trials = (*store)->InsertTrials(*id, {{0, config}});
  ASSERT_TRUE(trials.ok()) << trials.status();
  tunefleet::v1::Measurement m;
  m.set_error(tunefleet::v1::Measurement::OK);
  m.add_times_ns(ns);
  ASSERT_TRUE((*store)->CompleteTrial((*trials)[0], m, ns, 1).ok());
}

TEST(Model, EmittedLibraryEntriesCallTheLibraryAndMatchTheReference) {
  const std::string bin = BinaryDir() + "/cli/tunefleet";
  const std::string work =
      ::testing::TempDir() + "/model_library_test_" + std::to_string(getpid());
  std::filesystem::remove_all(work);
  std::filesystem::create_directories(work);
  const std::string db = work + "/t.db";
  const std::vector<std::pair<std::string, std::string>> tasks = {
      {"--op dense --template clblast_dense",
       "N=70,K=33,affine=shift,act=relu"},
      {"--op conv2d --template clblast_conv2d",
       "N=2,C=8,H=9,W=11,K=6,R=3,S=3,PH=1,PW=1,SH=2,SW=2,affine=scale_shift,"
       "act=hardswish"},
      {"--op gemm --template clblast_gemm", "M=40,N=30,K=20"}};
  std::string workloads;
  for (const auto& [flags, shape] : tasks) {
    auto tune = RunCommand(bin + " tune --json --quiet " + flags + " --shape " +
                           shape + " --trials 2 --skip-reference --db " + db);
    ASSERT_EQ(tune.exit_code, 0) << tune.err;
    const auto tuned = nlohmann::json::parse(tune.out);
    ASSERT_TRUE(tuned.contains("best")) << tune.out;
    workloads += " '" + tuned["workload"].get<std::string>() + "'";
    AddSlowerGeneratedRecord(db, tuned);
  }
  auto emit =
      RunCommand(bin + " emit --json --db " + db + " --out " + work + "/lib");
  ASSERT_EQ(emit.exit_code, 0) << emit.err;
  const auto emitted = nlohmann::json::parse(emit.out);
  EXPECT_EQ(emitted["entries"], 3);
  EXPECT_EQ(emitted["library_entries"], 3);
  auto build = testing::BuildEmittedLibrary(work, "emit_model_consumer");
  ASSERT_EQ(build.exit_code, 0) << build.out << build.err;
  EXPECT_NE(testing::ReadAll(work + "/lib/CMakeLists.txt")
                .find("TUNEFLEET_TUNED_CLBLAST=1"),
            std::string::npos);
  auto run = RunCommand(work + "/consumer/emit_model_consumer" + workloads);
  EXPECT_EQ(run.exit_code, 0) << run.out << run.err;
  EXPECT_THAT(run.out, ::testing::Not(::testing::HasSubstr("MISMATCH")));
  EXPECT_EQ(std::count(run.out.begin(), run.out.end(), '\n'), 3) << run.out;
  std::filesystem::remove_all(work);
}

}  // namespace
}  // namespace tunefleet
