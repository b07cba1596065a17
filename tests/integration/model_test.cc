// A whole model: tune every task of a small ONNX model, emit the library,
// build it, and run each task through it against host implementations
// (tests/data/emit_model_consumer).
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <regex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "auth/tokens.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernels_templates/registry.h"
#include "nlohmann/json.hpp"
#include "store/store.h"
#include "tests/support/command_runner.h"
#include "tests/support/fleet_harness.h"
#include "tests/support/onnx_test_models.h"
#include "tests/support/text_output.h"

namespace tunefleet::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

constexpr auto kModelLimit = std::chrono::seconds(180);

// A fresh directory holding the small model (tests/support), removed with
// the object.
class ModelDir {
 public:
  explicit ModelDir(const std::string& name)
      : path_(::testing::TempDir() + "/model_" + name + "_" +
              std::to_string(getpid())) {
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
    std::ofstream(model(), std::ios::binary) << testing::SmallNet();
  }
  ~ModelDir() {
    if (std::getenv("TUNEFLEET_KEEP_TEST_DIRS") == nullptr) {
      std::error_code ignored;
      std::filesystem::remove_all(path_, ignored);
    }
  }
  const std::string& path() const { return path_; }
  std::string model() const { return path_ + "/small.onnx"; }
  // `tune --onnx` of the small model.
  std::string Tune() const {
    return " tune --onnx " + model() + " --input-shape image=1,3,17,23";
  }
  // Tune() with `flags`, random search without library calls or transfer,
  // into the database `db`.
  std::string RandomTune(const std::string& flags,
                         const std::string& db) const {
    return Tune() + " " + flags +
           " --no-library --strategy random --no-transfer --db " + db;
  }

 private:
  std::string path_;
};

using Command = ::tunefleet::testing::CliCommand;

// `tunefleet emit --json` of the records in `db` into `work`/lib; its
// JSON summary in `emitted`. Fails the test when emit fails.
void Emit(const std::string& db, const std::string& work,
          nlohmann::json* emitted) {
  auto emit = RunCommand(CliBinary() + " emit --json --db " + db + " --out " +
                         work + "/lib");
  ASSERT_EQ(emit.exit_code, 0) << emit.err;
  *emitted = nlohmann::json::parse(emit.out);
}

// Builds emit_model_consumer against the library emitted into `work`/lib
// and runs it on `workloads`: no mismatch, `lines` lines. Fails the test
// when the consumer does not build.
void ExpectConsumerMatches(const std::string& work,
                           const std::string& workloads, int lines) {
  auto build = testing::BuildEmittedLibrary(work, "emit_model_consumer");
  ASSERT_EQ(build.exit_code, 0) << build.out << build.err;
  auto run = RunCommand(work + "/consumer/emit_model_consumer" + workloads);
  EXPECT_EQ(run.exit_code, 0) << run.out << run.err;
  EXPECT_THAT(run.out, ::testing::Not(::testing::HasSubstr("MISMATCH")));
  EXPECT_EQ(std::count(run.out.begin(), run.out.end(), '\n'), lines) << run.out;
}

// The first number `pattern`'s group 1 matches in `text`, or 0.
int64_t Find(const std::string& text, const std::string& pattern) {
  std::smatch m;
  if (!std::regex_search(text, m, std::regex(pattern))) return 0;
  return std::stoll(m[1].str());
}

// Waits until a `tune --onnx` command printed its model job's id and a
// progress line with a finished trial; the id, or 0.
int64_t AwaitModelProgress(const Command& tune) {
  FleetHarness::WaitFor(
      [&] { return Find(tune.err(), "\ntrials ([1-9][0-9]*)/") > 0; },
      kModelLimit);
  return Find(tune.err(), "tunefleet tune: model job ([0-9]+) on");
}

TEST(Model, TunesEmitsAndRunsEveryTaskCorrectly) {
  const std::string bin = CliBinary();
  const std::string work = testing::FreshTempDir("model_test");
  {
    std::ofstream model(work + "/small.onnx", std::ios::binary);
    model << testing::SmallNet();
  }
  const std::string db = work + "/t.db";
  auto tasks = RunCommand(bin + " tasks --json --onnx " + work +
                          "/small.onnx --input-shape image=1,3,17,23");
  ASSERT_EQ(tasks.exit_code, 0) << tasks.err;
  const auto listed = nlohmann::json::parse(tasks.out);
  ASSERT_EQ(listed["tasks"].size(), 8u);
  // Each task names the ONNX nodes that run it, one per count.
  for (const auto& t : listed["tasks"]) {
    ASSERT_TRUE(t["nodes"].is_array()) << t.dump();
    EXPECT_EQ(t["nodes"].size(), t["count"].get<size_t>()) << t.dump();
  }

  // One model job: 3 trials per workload, 24 in all, over the 8 tasks of
  // the generated templates and the library templates' tasks beside them.
  auto tune = RunCommand(bin + " tune --json --quiet --onnx " + work +
                         "/small.onnx --input-shape image=1,3,17,23 " +
                         "--trials-per-task 3 --db " + db);
  ASSERT_EQ(tune.exit_code, 0) << tune.err;
  const auto tuned = nlohmann::json::parse(tune.out);
  EXPECT_GT(tuned["job_id"].get<int64_t>(), 0);
  EXPECT_EQ(tuned["state"], "JOB_STATE_DONE") << tuned.dump();
  EXPECT_EQ(tuned["trials_total"], 24);
  EXPECT_EQ(tuned["model"]["task_scheduler"], "TASK_SCHEDULER_GRADIENT");
  ASSERT_EQ(tuned["workloads"].size(), 8u);
  std::string workloads;
  int library_jobs = 0;
  uint32_t trials = 0;
  for (const auto& w : tuned["workloads"]) {
    // The generated template's task first, the library templates' after.
    const auto& t = w["tasks"][0];
    EXPECT_EQ(t["state"], "JOB_STATE_DONE") << t.dump();
    EXPECT_FALSE(t["best"].is_null()) << t.dump();
    EXPECT_LE(t["trials_done"].get<uint32_t>(),
              t["trials_granted"].get<uint32_t>())
        << t.dump();
    workloads += " '" + w["workload_key"].get<std::string>() + "'";
    trials += t["trials_done"].get<uint32_t>();
    for (size_t k = 1; k < w["tasks"].size(); ++k) {
      const auto& l = w["tasks"][k];
      if (l.contains("skipped")) continue;  // e.g. the 1x1 call on a 3x3 conv
      EXPECT_FALSE(l["best"].is_null()) << l.dump();
      trials += l["trials_done"].get<uint32_t>();
      ++library_jobs;
    }
    // The library calls of conv2d and dense ran as tasks of the model.
    const std::string op = w["workload_key"].get<std::string>().substr(0, 6);
    if (op == "conv2d" || op == "dense ") {
      EXPECT_GT(w["tasks"].size(), 1u) << w.dump();
    }
  }
  EXPECT_GT(library_jobs, 0);
  // The budget is the whole model's, never exceeded.
  EXPECT_EQ(trials, tuned["trials_done"].get<uint32_t>());
  EXPECT_LE(trials, 24u);
  EXPECT_TRUE(tuned["tasks_without_trials"].empty()) << tuned.dump();
  EXPECT_TRUE(tuned["model"]["latency_complete"].get<bool>());
  const double naive = tuned["model"]["naive_latency_ns"].get<double>();
  const double tuned_ns = tuned["model"]["latency_ns"].get<double>();
  EXPECT_GT(naive, 0);
  EXPECT_GT(tuned_ns, 0);
  EXPECT_LE(tuned_ns, naive);  // the naive kernel counts where it is faster
  EXPECT_FALSE(tuned["model"]["latency_history"].empty());

  // `jobs --db` lists the model job, not its tasks' jobs (wide enough that
  // no column is cut, whatever this machine's device key).
  auto jobs = RunCommand("COLUMNS=400 " + bin + " jobs --db " + db);
  ASSERT_EQ(jobs.exit_code, 0) << jobs.err;
  EXPECT_THAT(jobs.out, ::testing::HasSubstr("model small.onnx ("));
  EXPECT_THAT(jobs.out, ::testing::HasSubstr(" tasks)"));
  EXPECT_THAT(jobs.out, ::testing::HasSubstr("est "));
  jobs = RunCommand(bin + " jobs --json --db " + db);
  ASSERT_EQ(jobs.exit_code, 0) << jobs.err;
  const auto listed_jobs = nlohmann::json::parse(jobs.out);
  ASSERT_EQ(listed_jobs.size(), 1u) << jobs.out;
  EXPECT_EQ(listed_jobs[0]["job_id"], tuned["job_id"]);
  EXPECT_EQ(listed_jobs[0]["model"]["model_name"], "small.onnx");
  EXPECT_NEAR(listed_jobs[0]["model"]["latency_ns"].get<double>(), tuned_ns,
              1e-9 + 1e-6 * tuned_ns);

  nlohmann::json emitted;
  ASSERT_NO_FATAL_FAILURE(Emit(db, work, &emitted));
  EXPECT_EQ(emitted["entries"], 8);
  ASSERT_NO_FATAL_FAILURE(ExpectConsumerMatches(work, workloads, 8));
  std::filesystem::remove_all(work);
}

// The ops and fusions of the model coverage work (CoverageNet in
// tests/support/onnx_test_models.h): every node of the model is in a task
// (tuned or fused into one) or folded at import, each task is tuned, the
// library is emitted, and every task runs through tunefleet_tuned::Run
// against the host implementations of tests/data/emit_model_consumer.
TEST(Model, NewOpsTuneEmitAndRunThroughTheLibrary) {
  const std::string work = testing::FreshTempDir("model_new_ops_test");
  const std::string model = work + "/coverage.onnx";
  std::ofstream(model, std::ios::binary) << testing::CoverageNet();
  const std::string db = work + "/t.db";

  auto tasks = RunCommand(CliBinary() + " tasks --json --onnx " + model);
  ASSERT_EQ(tasks.exit_code, 0) << tasks.err;
  const auto listed = nlohmann::json::parse(tasks.out);
  std::vector<std::string> canonical;
  for (const auto& t : listed["tasks"]) {
    canonical.push_back(t["workload_key"].get<std::string>());
  }
  EXPECT_THAT(
      canonical,
      ::testing::UnorderedElementsAre(
          // Conv + PP-LCNet's affine block + spelled HardSwish + post.
          "conv2d N=1 C=4 H=8 W=8 K=8 R=3 S=3 SH=1 SW=1 PH=1 PW=1 DH=1 DW=1 "
          "G=1 fp32 affine=scale_shift act=hardswish post=scale_shift",
          "conv2d N=1 C=8 H=8 W=8 K=8 R=3 S=3 SH=1 SW=1 PH=1 PW=1 DH=1 DW=1 "
          "G=1 fp32 act=relu residual=add",
          "conv2d N=1 C=8 H=16 W=16 K=16 R=4 S=4 SH=4 SW=4 PH=0 PW=0 DH=1 "
          "DW=1 G=1 fp32",
          // Bias Add + BatchNormalization -> scale_shift, Relu.
          "conv_transpose2d N=1 C=8 H=8 W=8 K=8 R=2 S=2 SH=2 SW=2 PH=0 PW=0 "
          "DH=1 DW=1 OPH=0 OPW=0 G=1 fp32 affine=scale_shift act=relu",
          "resize N=1 C=8 H=8 W=8 OH=16 OW=16 fp32 coord=asymmetric "
          "round=floor",
          "eltwise N=1 C=8 H=16 W=16 fp32 fn=add",
          "eltwise N=1 C=8 H=16 W=16 fp32 b=scalar act=sigmoid",
          "dense M=16 N=16 K=16 fp32 affine=shift residual=add",
          "layernorm N=16 D=16 fp32 affine=scale_shift",
          "batch_matmul B=2 M=8 N=8 K=16 fp32", "softmax N=16 D=8 fp32"));
  // Every FLOP is tuned or fused; nothing is left; the Shape -> Gather ->
  // Concat chain and the Reshapes are folded.
  const auto& coverage = listed["coverage"];
  EXPECT_NEAR(coverage["share"]["tuned"]["flops"].get<double>() +
                  coverage["share"]["fused"]["flops"].get<double>(),
              1.0, 1e-9)
      << coverage.dump();
  EXPECT_TRUE(coverage["left"].empty()) << coverage.dump();
  EXPECT_TRUE(listed["unsupported"].empty()) << tasks.out;
  std::map<std::string, int> folded;
  for (const auto& f : coverage["folded"]) {
    folded[f["op_type"].get<std::string>()] = f["nodes"].get<int>();
  }
  EXPECT_EQ(folded,
            (std::map<std::string, int>{
                {"Concat", 1}, {"Gather", 1}, {"Reshape", 3}, {"Shape", 1}}))
      << coverage.dump();

  // One model job, 2 trials per task: every task gets a best config.
  auto tune = RunCommand(CliBinary() + " tune --json --quiet --onnx " + model +
                         " --trials-per-task 2 --db " + db);
  ASSERT_EQ(tune.exit_code, 0) << tune.err;
  const auto tuned = nlohmann::json::parse(tune.out);
  EXPECT_EQ(tuned["state"], "JOB_STATE_DONE") << tuned.dump();
  ASSERT_EQ(tuned["workloads"].size(), 11u);
  std::string workloads;
  for (const auto& w : tuned["workloads"]) {
    const auto& t = w["tasks"][0];
    EXPECT_EQ(t["state"], "JOB_STATE_DONE") << t.dump();
    EXPECT_FALSE(t["best"].is_null()) << t.dump();
    workloads += " '" + w["workload_key"].get<std::string>() + "'";
  }
  EXPECT_TRUE(tuned["model"]["latency_complete"].get<bool>()) << tuned.dump();

  nlohmann::json emitted;
  ASSERT_NO_FATAL_FAILURE(Emit(db, work, &emitted));
  EXPECT_EQ(emitted["entries"], 11);
  ASSERT_NO_FATAL_FAILURE(ExpectConsumerMatches(work, workloads, 11));
  std::filesystem::remove_all(work);
}

// Sets the naive reference time of every job in `db` (tasks of model jobs
// included) to 10^15 ns, so that `emit` ships each workload's best tuned
// config rather than the reference kernel.
void SlowDownReferenceKernels(const std::string& db) {
  auto store = store::Store::Open(db);
  ASSERT_TRUE(store.ok()) << store.status();
  auto jobs = (*store)->ListJobs(0);
  ASSERT_TRUE(jobs.ok()) << jobs.status();
  auto models = (*store)->ListModelJobs(0);
  ASSERT_TRUE(models.ok()) << models.status();
  for (const store::ModelJob& m : *models) {
    auto tasks = (*store)->ModelTaskJobs(m.id);
    ASSERT_TRUE(tasks.ok()) << tasks.status();
    jobs->insert(jobs->end(), tasks->begin(), tasks->end());
  }
  for (const store::StoredJob& j : *jobs) {
    ASSERT_TRUE((*store)->SetJobReference(j.id, 1e15).ok());
  }
}

// The generated templates of the new ops (no reference kernel, no library
// call) in the emitted library, on CoverageNet's tasks and on workloads
// that reach every variant the model does not: each eltwise fn and b,
// resize's modes, coordinate modes and roundings (ties of
// round_prefer_floor included), conv_transpose2d with padding, output
// padding, groups and dilation, the new activations and post, layernorm
// without affine, batches of batch_matmul.
TEST(Model, EmittedLibraryRunsEveryVariantOfTheNewTemplates) {
  const std::string work = testing::FreshTempDir("model_variants_test");
  const std::string model = work + "/coverage.onnx";
  std::ofstream(model, std::ios::binary) << testing::CoverageNet();
  const std::string db = work + "/t.db";
  auto tune = RunCommand(CliBinary() + " tune --json --quiet --onnx " + model +
                         " --trials-per-task 1 --no-library --db " + db);
  ASSERT_EQ(tune.exit_code, 0) << tune.err;
  const auto model_workloads = nlohmann::json::parse(tune.out)["workloads"];
  ASSERT_EQ(model_workloads.size(), 11u) << tune.out;
  std::string workloads;
  for (const auto& w : model_workloads) {
    ASSERT_FALSE(w["tasks"][0]["best"].is_null()) << w.dump();
    workloads += " '" + w["workload_key"].get<std::string>() + "'";
  }
  const std::vector<std::pair<std::string, std::string>> variants = {
      {"resize", "C=3,H=5,W=7,OH=9,OW=4,mode=linear"},
      {"resize", "C=2,H=4,W=4,OH=10,OW=6,mode=linear,coord=asymmetric"},
      {"resize", "C=1,H=5,W=3,OH=8,OW=7,mode=linear,coord=align_corners"},
      {"resize", "C=2,H=6,W=5,OH=4,OW=1,mode=linear,coord=pytorch_half_pixel"},
      // Half-pixel 2x down: sources at k + 0.5, ties rounded down.
      {"resize", "C=2,H=4,W=6,OH=2,OW=3"},
      {"resize", "C=2,H=3,W=4,OH=7,OW=9"},
      {"resize", "C=2,H=5,W=6,OH=8,OW=11,coord=align_corners"},
      {"resize", "C=2,H=6,W=5,OH=3,OW=1,coord=pytorch_half_pixel,round=ceil"},
      {"eltwise",
       "C=6,H=5,W=3,fn=div,b=channel,affine=scale_shift,act=silu,"
       "post=scale_shift"},
      {"eltwise", "N=2,C=3,H=4,W=5,fn=sub,b=nc,act=leakyrelu"},
      {"eltwise", "C=5,H=7,fn=max,b=scalar,affine=shift,act=clip"},
      {"eltwise", "C=4,H=3,W=3,fn=min,act=hardsigmoid"},
      {"eltwise", "C=4,H=9,fn=mul,b=tensor,act=hardswish"},
      {"eltwise", "C=3,H=2,W=5,affine=scale_shift,act=relu"},
      {"conv_transpose2d",
       "C=4,H=5,W=6,K=6,R=3,S=3,SH=2,SW=3,PH=1,PW=1,OPH=1,OPW=2,G=2,"
       "affine=shift,act=silu,post=scale_shift"},
      {"conv_transpose2d", "C=3,H=4,W=5,K=2,R=3,S=2,DH=2,act=sigmoid"},
      {"layernorm", "N=3,D=37"},
      {"batch_matmul", "B=3,M=5,N=7,K=9"},
      {"dense",
       "M=3,N=10,K=12,affine=scale_shift,act=silu,post=scale_shift,"
       "residual=add"},
  };
  for (const auto& [op, shape] : variants) {
    auto one =
        RunCommand(CliBinary() + " tune --json --quiet --op " + op +
                   " --shape " + shape + " --trials 1 --no-library --db " + db);
    ASSERT_EQ(one.exit_code, 0) << shape << ": " << one.err;
    const auto tuned = nlohmann::json::parse(one.out);
    ASSERT_FALSE(tuned["best"].is_null()) << one.out;
    workloads += " '" + tuned["workload_key"].get<std::string>() + "'";
  }
  SlowDownReferenceKernels(db);

  nlohmann::json emitted;
  ASSERT_NO_FATAL_FAILURE(Emit(db, work, &emitted));
  const int entries = 11 + static_cast<int>(variants.size());
  EXPECT_EQ(emitted["entries"], entries);
  EXPECT_EQ(emitted["reference_entries"], 0);
  EXPECT_EQ(emitted["library_entries"], 0);
  ASSERT_NO_FATAL_FAILURE(ExpectConsumerMatches(work, workloads, entries));
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
  const std::string workload = tuned["workload_key"];
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
  const double ns = 10 * tuned["best"]["time_ns"].get<double>();
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
  const std::string bin = CliBinary();
  const std::string work = testing::FreshTempDir("model_library_test");
  const std::string db = work + "/t.db";
  const std::vector<std::pair<std::string, std::string>> tasks = {
      {"--op dense --template clblast_dense",
       "N=70,K=33,affine=shift,act=relu"},
      {"--op conv2d --template clblast_conv2d",
       "N=2,C=8,H=9,W=11,K=6,R=3,S=3,PH=1,PW=1,SH=2,SW=2,affine=scale_shift,"
       "act=hardswish"},
      // No epilogue: the call alone, the caller's activation floats unused.
      {"--op conv2d --template clblast_conv2d",
       "C=8,H=16,W=16,K=16,R=4,S=4,SH=4,SW=4"},
      {"--op gemm --template clblast_gemm", "M=40,N=30,K=20"}};
  std::string workloads;
  for (const auto& [flags, shape] : tasks) {
    auto tune = RunCommand(bin + " tune --json --quiet " + flags + " --shape " +
                           shape + " --trials 2 --skip-reference --db " + db);
    ASSERT_EQ(tune.exit_code, 0) << tune.err;
    const auto tuned = nlohmann::json::parse(tune.out);
    ASSERT_FALSE(tuned["best"].is_null()) << tune.out;
    workloads += " '" + tuned["workload_key"].get<std::string>() + "'";
    AddSlowerGeneratedRecord(db, tuned);
  }
  nlohmann::json emitted;
  ASSERT_NO_FATAL_FAILURE(Emit(db, work, &emitted));
  EXPECT_EQ(emitted["entries"], 4);
  EXPECT_EQ(emitted["library_entries"], 4);
  EXPECT_NE(testing::ReadAll(work + "/lib/CMakeLists.txt")
                .find("TUNEFLEET_TUNED_CLBLAST=1"),
            std::string::npos);
  ASSERT_NO_FATAL_FAILURE(ExpectConsumerMatches(work, workloads, 4));
  std::filesystem::remove_all(work);
}

TEST(Model, RoundRobinSpreadsATotalBudgetEvenly) {
  ModelDir dir("round_robin");
  const std::string db = dir.path() + "/t.db";
  // A total budget and a per-workload one: which is meant is unclear.
  auto both = RunCommand(CliBinary() + dir.Tune() +
                         " --trials 9 --trials-per-task 2 --db " + db);
  EXPECT_EQ(both.exit_code, 2) << both.err;
  EXPECT_THAT(both.err, HasSubstr("--trials "));
  EXPECT_THAT(both.err, HasSubstr("--trials-per-task"));
  EXPECT_FALSE(std::filesystem::exists(db));  // refused before starting

  auto tune = RunCommand(
      CliBinary() +
      dir.RandomTune("--json --trials 9 --task-scheduler round-robin", db));
  ASSERT_EQ(tune.exit_code, 0) << tune.err;
  // The progress line with the estimated latency, and the task lines.
  EXPECT_THAT(tune.err, HasSubstr("est. latency "));
  EXPECT_THAT(tune.err, HasSubstr("[ 8/8] "));
  const auto tuned = nlohmann::json::parse(tune.out);
  EXPECT_EQ(tuned["model"]["task_scheduler"], "TASK_SCHEDULER_ROUND_ROBIN");
  EXPECT_EQ(tuned["trials_total"], 9);
  EXPECT_FALSE(tuned["library_candidates"].get<bool>());
  ASSERT_EQ(tuned["workloads"].size(), 8u);
  uint32_t trials = 0;
  for (const auto& w : tuned["workloads"]) {
    ASSERT_EQ(w["tasks"].size(), 1u) << w.dump();  // no library tasks
    const auto& t = w["tasks"][0];
    // 9 trials in turns of one: every task 1, one of them 2.
    EXPECT_GE(t["trials_granted"].get<uint32_t>(), 1u) << t.dump();
    EXPECT_LE(t["trials_granted"].get<uint32_t>(), 2u) << t.dump();
    trials += t["trials_done"].get<uint32_t>();
  }
  EXPECT_LE(trials, 9u);
  EXPECT_EQ(trials, tuned["trials_done"].get<uint32_t>());

  // The same as text: the task lines, the model job and its latency.
  tune = RunCommand(CliBinary() + dir.RandomTune("--quiet --trials 8", db));
  ASSERT_EQ(tune.exit_code, 0) << tune.err;
  EXPECT_THAT(tune.out, HasSubstr("[ 1/8] "));
  EXPECT_THAT(tune.out, HasSubstr(": model job "));
  EXPECT_THAT(tune.out, HasSubstr("estimated latency (sum of kernel time x "
                                  "count): naive "));
  EXPECT_THAT(tune.out, Not(HasSubstr("got no trial")));
  EXPECT_THAT(tune.err, Not(HasSubstr("warning")));

  // A budget of 3 trials for 8 tasks: said before the run, and the summary
  // lists the 5 tasks it left without a trial.
  tune = RunCommand(CliBinary() + dir.RandomTune("--quiet --trials 3", db));
  ASSERT_EQ(tune.exit_code, 0) << tune.err;
  EXPECT_THAT(tune.err, HasSubstr("warning: a budget of 3 trials for 8 tasks "
                                  "leaves at least 5 tasks without a trial"));
  EXPECT_THAT(tune.out, HasSubstr("5 of 8 tasks got no trial"));
  EXPECT_EQ(Count(tune.out, "\n    task "), 5u) << tune.out;
}

TEST(Model, CtrlCCancelsTheModelJobAndKeepsItsFinishedTrials) {
  ModelDir dir("ctrl_c");
  const std::string db = dir.path() + "/t.db";
  Command tune(dir.Tune() +
                   " --trials 2000 --no-library --strategy random "
                   "--min-repeat-ms 20 --no-transfer --db " +
                   db,
               dir.path());
  const int64_t job = AwaitModelProgress(tune);
  ASSERT_GT(job, 0) << tune.err();
  tune.Signal(SIGINT);
  const std::optional<int> exit = tune.Wait(std::chrono::seconds(120));
  ASSERT_TRUE(exit.has_value()) << tune.err();
  EXPECT_EQ(*exit, 130) << tune.err();
  EXPECT_THAT(tune.err(),
              HasSubstr("cancelling job " + std::to_string(job) + " "));
  const std::string out = tune.out();
  const int64_t done =
      Find(out, "cancelled job " + std::to_string(job) + ": ([0-9]+) of 2000");
  EXPECT_GT(done, 0) << out;
  EXPECT_THAT(out,
              HasSubstr("model job " + std::to_string(job) + " cancelled"));
  auto r = RunCommand(CliBinary() + " jobs --json --db " + db);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json jobs = nlohmann::json::parse(r.out);
  ASSERT_EQ(jobs.size(), 1u) << r.out;
  EXPECT_EQ(jobs[0]["job_id"], job);
  EXPECT_EQ(jobs[0]["state"], "JOB_STATE_CANCELLED");
  // Its finished trials stay (and those in flight may have landed).
  EXPECT_GE(jobs[0]["trials_done"].get<int64_t>(), done);
  EXPECT_LT(jobs[0]["trials_done"].get<int64_t>(), 2000);
  EXPECT_GT(jobs[0]["model"]["latency_ns"].get<double>(), 0);
}

TEST(Model, OnAServerJobsWatchAndCancelShowTheModelJob) {
  FleetHarness fleet("model_server");
  const std::string tuner = fleet.AddTokenFile(auth::Role::kTuner, "tuner");
  ASSERT_TRUE(fleet.StartServer());
  fleet.StartAgent(0, "model", 2);
  ASSERT_TRUE(FleetHarness::WaitFor(
      [&] { return fleet.Connected("model") == 1; }, std::chrono::seconds(60)));
  ModelDir dir("server");
  const std::string server =
      " --server " + fleet.address() + " --token-file " + tuner;
  auto tune = RunCommand(CliBinary() + dir.Tune() + server +
                         " --json --quiet --trials 8 --no-library --strategy "
                         "random --no-transfer");
  ASSERT_EQ(tune.exit_code, 0) << tune.err;
  const auto tuned = nlohmann::json::parse(tune.out);
  const int64_t job = tuned["job_id"].get<int64_t>();
  EXPECT_EQ(tuned["device_key"], "model");
  EXPECT_FALSE(tuned.contains("database"));

  auto r = RunCommand(CliBinary() + " jobs" + server);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("model small.onnx (8 tasks)"));
  // BEST: the measured latency beside the estimate once an agent ran the
  // tuned plan end to end (docs/TUNING.md, "Measured latency"), else the
  // estimate alone.
  EXPECT_THAT(r.out,
              ::testing::AnyOf(HasSubstr(" ms (est "), HasSubstr("  est ")));
  r = RunCommand(CliBinary() + " watch " + std::to_string(job) + server +
                 " --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto watched = nlohmann::json::parse(r.out);
  EXPECT_EQ(watched["state"], "JOB_STATE_DONE");
  EXPECT_EQ(watched["model"]["task_progress"].size(), 8u) << r.out;
  EXPECT_NEAR(watched["model"]["latency_ns"].get<double>(),
              tuned["model"]["latency_ns"].get<double>(), 1e-3);
  r = RunCommand(CliBinary() + " watch " + std::to_string(job) + server);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("TRIALS"));
  EXPECT_THAT(r.out, HasSubstr("estimated latency"));
  // Ended: nothing to cancel.
  r = RunCommand(CliBinary() + " cancel " + std::to_string(job) + server);
  EXPECT_NE(r.exit_code, 0) << r.out;

  // A long model job, cancelled from another command; the tune command
  // following it reports it cancelled.
  Command running(dir.Tune() + server +
                      " --trials 2000 --no-library --strategy random "
                      "--min-repeat-ms 20 --no-transfer",
                  dir.path());
  const int64_t long_job = AwaitModelProgress(running);
  ASSERT_GT(long_job, job) << running.err();
  r = RunCommand(CliBinary() + " cancel " + std::to_string(long_job) + server);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out,
              HasSubstr("cancelled job " + std::to_string(long_job) + ": "));
  EXPECT_THAT(r.out, HasSubstr("estimated latency"));
  const std::optional<int> exit = running.Wait(std::chrono::seconds(120));
  ASSERT_TRUE(exit.has_value()) << running.err();
  EXPECT_EQ(*exit, 1) << running.err();
  EXPECT_THAT(running.out(), HasSubstr(" cancelled on model"));
}

}  // namespace
}  // namespace tunefleet::testing
