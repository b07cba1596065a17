// How the CLI shows a model job: its progress line and when it is printed,
// its row in the jobs table, its tasks' lines and table, the skipped tasks,
// and the JSON of `tune --onnx --json` and of `watch --json`.
#include "cli/model_view.h"

#include <cstdio>
#include <string>
#include <vector>

#include "absl/strings/str_split.h"
#include "cli/jobs_command.h"
#include "cli/model_command.h"
#include "cli/model_request.h"
#include "cli/progress.h"
#include "cli/tune_command.h"
#include "contract/json.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernels_templates/workload.h"
#include "nlohmann/json.hpp"
#include "tests/support/text_output.h"

namespace tunefleet::cli {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using tunefleet::v1::JobProgress;

std::vector<std::string> ViewLines(const std::string& text) {
  return absl::StrSplit(text, '\n', absl::SkipEmpty());
}

JobProgress ModelJob(uint32_t done, double naive_ns, double tuned_ns,
                     uint32_t stopped) {
  JobProgress p;
  p.set_job_id(9);
  p.set_state(tunefleet::v1::JOB_STATE_RUNNING);
  p.set_trials_done(done);
  p.set_trials_total(424);
  p.set_device_key("pocl");
  p.set_strategy(tunefleet::v1::STRATEGY_XGB);
  tunefleet::v1::ModelProgress* m = p.mutable_model();
  m->set_model_name("cls.onnx");
  m->set_task_scheduler(tunefleet::v1::TASK_SCHEDULER_GRADIENT);
  m->set_naive_latency_ns(naive_ns);
  m->set_latency_ns(tuned_ns);
  m->set_latency_complete(true);
  m->set_tasks(53);
  m->set_tasks_stopped(stopped);
  return p;
}

// A task of a model job: job `job_id` of `template_name` on `workload`.
tunefleet::v1::ModelTaskProgress Task(uint32_t index,
                                      const std::string& workload,
                                      const std::string& template_name,
                                      int64_t job_id, double best_ns,
                                      double reference_ns, uint32_t done,
                                      uint32_t granted) {
  tunefleet::v1::ModelTaskProgress t;
  t.set_task_index(index);
  t.set_weight(2);
  t.set_trials_granted(granted);
  JobProgress* job = t.mutable_job();
  job->set_job_id(job_id);
  job->set_state(tunefleet::v1::JOB_STATE_RUNNING);
  job->set_workload_key(workload);
  job->set_template_name(template_name);
  job->set_trials_done(done);
  job->set_trials_total(granted);
  job->set_reference_time_ns(reference_ns);
  if (best_ns > 0) {
    job->mutable_best()->set_time_ns(best_ns);
    job->mutable_best()->set_gflops(1);
    job->mutable_best()->set_template_name(template_name);
  }
  return t;
}

TEST(ModelView, ProgressLineHasTrialsLatencyAndStoppedTasks) {
  EXPECT_EQ(ModelProgressLine(ModelJob(120, 8.49e6, 5.1e6, 12)),
            "trials 120/424  est. latency 8.49 -> 5.10 ms (1.7x)  tasks "
            "stopped 12/53");
  EXPECT_EQ(ModelProgressLine(ModelJob(0, 0, 0, 0)),
            "trials 0/424  est. latency -  tasks stopped 0/53");
  JobProgress partial = ModelJob(3, 2e6, 1e6, 0);
  partial.mutable_model()->set_latency_complete(false);
  EXPECT_THAT(ModelProgressLine(partial), HasSubstr("(2.0x) (partial)"));
  EXPECT_EQ(MsText(4.4219e6), "4.42");
  EXPECT_EQ(MsText(51234), "0.0512");
  EXPECT_EQ(MsText(123.4e6), "123");
}

TEST(ModelView, JobsTableShowsTheModelAndItsEstimatedLatency) {
  JobProgress single;
  single.set_job_id(8);
  single.set_state(tunefleet::v1::JOB_STATE_DONE);
  single.set_workload_key("gemm M=64 N=64 K=64 fp32");
  single.set_device_key("pocl");
  single.mutable_best()->set_gflops(12.345);
  const std::vector<std::string> lines =
      ViewLines(JobTable({ModelJob(120, 8.49e6, 4.42e6, 0), single}));
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_THAT(lines[1], HasSubstr("  model cls.onnx (53 tasks)  "));
  EXPECT_THAT(lines[1], HasSubstr("  est 4.42 ms"));
  EXPECT_THAT(lines[1], HasSubstr("  120/424  "));
  EXPECT_THAT(lines[2], HasSubstr("12.35 GFLOP/s"));
  EXPECT_EQ(lines[1].find("pocl"), lines[2].find("pocl"));
  EXPECT_EQ(JobBestCell(ModelJob(0, 0, 0, 0)), "-");
}

TEST(ModelView, MeasuredLatencyAndLayersWithShareTrialsAndSpeedup) {
  JobProgress p = ModelJob(6, 8e6, 4e6, 0);
  EXPECT_EQ(MeasuredLatencyText(p.model()), "");  // not measured yet
  EXPECT_EQ(ModelLayerTable(p), "");
  const std::string conv = "conv2d N=1 C=8 fp32";
  const std::string pool = "pool2d N=1 C=8 fp32";
  // Two tasks of the conv (generated and library), one of the pool.
  *p.mutable_model()->add_task_progress() =
      Task(0, conv, "conv2d_direct", 11, 2e5, 8e5, 3, 3);
  *p.mutable_model()->add_task_progress() =
      Task(1, conv, "clblast_conv2d", 12, 4e5, 0, 2, 2);
  *p.mutable_model()->add_task_progress() =
      Task(2, pool, "pool2d_direct", 13, 0, 1e5, 1, 1);
  tunefleet::v1::MeasuredLatency* m = p.mutable_model()->mutable_measured();
  m->set_median_ns(5e6);
  m->set_p10_ns(4.5e6);
  m->set_p90_ns(6e6);
  m->set_runs(20);
  m->set_estimate_ns(4e6);
  m->set_agent_name("agent-0");
  m->set_record("on");
  struct Layer {
    const char* label;
    std::string workload;
    const char* entry;
    double ns;
  };
  for (const Layer& l : {Layer{"conv_0", conv, "tuned", 3e6},
                         Layer{"pool_0", pool, "reference", 1e6}}) {
    tunefleet::v1::MeasuredLayer* layer = m->add_layers();
    layer->set_label(l.label);
    layer->set_workload(l.workload);
    layer->set_entry(l.entry);
    layer->set_measured_ns(l.ns);
    layer->set_estimate_ns(-1);
  }
  EXPECT_EQ(MeasuredLatencyText(p.model()),
            "measured latency (end to end on agent-0, 20 runs, record on): "
            "median 5.00 ms, p10 4.50 ms, p90 6.00 ms; estimated 4.00 ms "
            "(measured 1.25x the estimate)");
  const std::vector<ModelLayerRow> rows = ModelLayerRows(p);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_DOUBLE_EQ(rows[0].share, 0.75);
  EXPECT_EQ(rows[0].trials, 5);          // both conv tasks' trials
  EXPECT_DOUBLE_EQ(rows[0].speedup, 4);  // naive 0.8 ms over best 0.2 ms
  EXPECT_EQ(rows[1].trials, 1);
  EXPECT_EQ(rows[1].speedup, 0);  // no best: unknown
  const std::vector<std::string> lines = ViewLines(ModelLayerTable(p));
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_THAT(lines[0], HasSubstr("SHARE"));
  EXPECT_THAT(lines[1], HasSubstr("75.0%"));
  EXPECT_THAT(lines[1], HasSubstr("4.00x"));
  EXPECT_THAT(lines[1], HasSubstr("conv_0"));
  EXPECT_THAT(lines[2], HasSubstr("reference"));
  EXPECT_EQ(JobBestCell(p), "5.00 ms (est 4.00)");
  // With the runs in device buffers: their figures after the line's.
  m->set_device_buffers_median_ns(4.2e6);
  m->set_device_buffers_p10_ns(4.1e6);
  m->set_device_buffers_p90_ns(4.4e6);
  m->set_device_buffers_runs(20);
  EXPECT_EQ(MeasuredLatencyText(p.model()),
            "measured latency (end to end on agent-0, 20 runs, record on): "
            "median 5.00 ms, p10 4.50 ms, p90 6.00 ms; estimated 4.00 ms "
            "(measured 1.25x the estimate); on the device (inputs and outputs "
            "in device buffers, 20 runs): median 4.20 ms, p10 4.10 ms, p90 "
            "4.40 ms");
  EXPECT_EQ(JobBestCell(p), "5.00 ms (est 4.00, on device 4.20)");

  m->Clear();
  m->set_missing_reason("run: no agent of device key 'x' is connected");
  EXPECT_EQ(MeasuredLatencyText(p.model()),
            "measured latency: missing: run: no agent of device key 'x' is "
            "connected");
  EXPECT_EQ(JobBestCell(p), "est 4.00 ms");
}

TEST(ModelView, PrinterWritesALineWhenTheLatencyMovesOrTasksStop) {
  FILE* out = std::tmpfile();
  const auto t0 = std::chrono::steady_clock::now();
  const auto later = [&](int s) { return t0 + std::chrono::seconds(s); };
  JobProgress partial = ModelJob(0, 3e6, 3e6, 0);
  partial.mutable_model()->set_latency_complete(false);
  {
    ModelProgressPrinter printer(/*quiet=*/false, /*task_lines=*/false, out);
    printer.Update(ModelJob(0, 0, 0, 0), t0);  // the first: a line
    // Naive times arriving while some workload has none: no line.
    printer.Update(partial, t0);
    partial.mutable_model()->set_latency_ns(8e6);
    printer.Update(partial, t0);
    printer.Update(ModelJob(10, 8e6, 6e6, 0), t0);     // complete: a line
    printer.Update(ModelJob(11, 8e6, 5.99e6, 0), t0);  // < 1%: none
    printer.Update(ModelJob(12, 8e6, 5.99e6, 1), t0);  // stopped, < 1 s: none
    printer.Update(ModelJob(12, 8e6, 5.99e6, 1), later(2));   // now a line
    printer.Update(ModelJob(13, 8e6, 5.99e6, 1), later(3));   // quiet: none
    printer.Update(ModelJob(14, 8e6, 5.99e6, 1), later(7));   // 5 s: a line
    printer.Update(ModelJob(14, 8e6, 5.99e6, 1), later(20));  // nothing new
    JobProgress waiting = ModelJob(14, 8e6, 5.99e6, 1);
    waiting.set_waiting_reason("no agent of key pocl is connected");
    printer.Update(waiting, later(21));
    printer.Update(waiting, later(22));
    printer.End();
  }
  const std::vector<std::string> lines = ViewLines(testing::Drain(out));
  ASSERT_EQ(lines.size(), 5u) << ::testing::PrintToString(lines);
  EXPECT_THAT(lines[0], HasSubstr("trials 0/424"));
  EXPECT_THAT(lines[1], HasSubstr("trials 10/424  est. latency 8.00 -> 6.00"));
  EXPECT_THAT(lines[2], HasSubstr("trials 12/424"));
  EXPECT_THAT(lines[3], HasSubstr("trials 14/424"));
  EXPECT_EQ(lines[4], "model job 9 waits: no agent of key pocl is connected");
}

TEST(ModelView, TaskChangesNameNewBestsAndStoppedTasksOnce) {
  JobProgress p = ModelJob(4, 8e6, 6e6, 0);
  *p.mutable_model()->add_task_progress() =
      Task(0, "conv2d N=1 C=3 H=8 W=8 K=4 R=3 S=3 fp32", "conv2d_direct", 2,
           5e4, 1e5, 3, 4);
  *p.mutable_model()->add_task_progress() =
      Task(1, "dense N=10 K=16 fp32", "clblast_dense", 3, 0, 0, 1, 2);
  ModelTaskChanges changes;
  std::vector<std::string> lines = changes.Update(p);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0],
            "task 0 conv2d N=1 C=3 H=8 W=8 K=4 R=3 S=3 fp32 "
            "[conv2d_direct]: best 0.05 ms (naive 0.1 ms) after 3/4 trials");
  EXPECT_TRUE(changes.Update(p).empty());
  p.mutable_model()
      ->mutable_task_progress(0)
      ->mutable_job()
      ->mutable_best()
      ->set_time_ns(4e4);
  p.mutable_model()->mutable_task_progress(1)->set_stopped_reason(
      "its space is exhausted");
  lines = changes.Update(p);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_THAT(lines[0], HasSubstr("best 0.04 ms"));
  EXPECT_EQ(lines[1],
            "task 1 dense N=10 K=16 fp32 [clblast_dense]: stopped after 1 "
            "trials (its space is exhausted)");
  EXPECT_TRUE(changes.Update(p).empty());
}

TEST(ModelView, TaskTableAndJsonHaveEveryTaskAndTheSkippedOnes) {
  JobProgress p = ModelJob(4, 8e6, 6e6, 1);
  *p.mutable_model()->add_task_progress() =
      Task(0, "dense N=10 K=16 fp32", "dense_gemm", 2, 5e4, 1e5, 3, 4);
  *p.mutable_model()->add_task_progress() =
      Task(2, "dense N=10 K=16 fp32", "clblast_dense", 3, 0, 0, 1, 2);
  p.mutable_model()->mutable_task_progress(1)->set_stopped_reason("exhausted");
  tunefleet::v1::SkippedTask* skipped = p.mutable_model()->add_skipped();
  skipped->set_task_index(1);
  skipped->set_reason("no config of clblast_conv2d_1x1");
  tunefleet::v1::LatencyPoint* point = p.mutable_model()->add_latency_history();
  point->set_trials_done(2);
  point->set_latency_ns(7e6);

  const std::vector<std::string> lines = ViewLines(ModelTaskTable(p));
  ASSERT_EQ(lines.size(), 4u) << ModelTaskTable(p);
  EXPECT_THAT(lines[0], HasSubstr("TRIALS"));
  EXPECT_THAT(lines[1], HasSubstr("3/4"));
  EXPECT_THAT(lines[1], HasSubstr("dense_gemm"));
  EXPECT_THAT(lines[2], HasSubstr("exhausted"));
  EXPECT_EQ(lines[3], "task 1 skipped: no config of clblast_conv2d_1x1");

  // A model job's JSON is the contract's, as every job's (contract/json.h).
  const nlohmann::json j = contract::ContractJson(p);
  ASSERT_TRUE(j["model"].is_object()) << j.dump();
  const nlohmann::json& m = j["model"];
  EXPECT_EQ(m["model_name"], "cls.onnx");
  EXPECT_EQ(m["task_scheduler"], "TASK_SCHEDULER_GRADIENT");
  EXPECT_DOUBLE_EQ(m["naive_latency_ns"].get<double>(), 8e6);
  EXPECT_DOUBLE_EQ(m["latency_ns"].get<double>(), 6e6);
  EXPECT_EQ(m["tasks_stopped"], 1);
  ASSERT_EQ(m["task_progress"].size(), 2u);
  EXPECT_EQ(m["task_progress"][1]["task_index"], 2);
  EXPECT_EQ(m["task_progress"][1]["trials_granted"], 2);
  EXPECT_EQ(m["task_progress"][1]["stopped_reason"], "exhausted");
  EXPECT_EQ(m["task_progress"][0]["job"]["job_id"], 2);
  EXPECT_EQ(m["skipped"][0]["task_index"], 1);
  EXPECT_EQ(m["latency_history"][0]["trials_done"], 2);
  EXPECT_DOUBLE_EQ(m["latency_history"][0]["latency_ns"].get<double>(), 7e6);
  // A single job's `model` is null.
  EXPECT_TRUE(contract::ContractJson(JobProgress())["model"].is_null());
}

// A model of two workloads, as `tune --onnx` submitted it: the conv with
// its default template and clblast_conv2d, the pool with its default.
struct Submitted {
  onnx_import::ModelTasks model;
  ModelJobPlan plan;
};

Submitted TwoSubmittedWorkloads() {
  Submitted s;
  onnx_import::ModelTask conv{
      {*templates::Workload::Parse("conv2d", "N=1,C=3,H=8,W=8,K=4,R=3,S=3")}};
  conv.count = 2;
  conv.flops = 1e6;
  onnx_import::ModelTask pool{
      {*templates::Workload::Parse("global_pool", "N=1,C=4,H=8,W=8")}};
  pool.count = 1;
  pool.flops = 256;
  s.model.tasks = {conv, pool};
  for (const auto& [w, name] :
       std::vector<std::pair<size_t, std::string>>{{0, ""},
                                                   {0, "clblast_conv2d"},
                                                   {0, "clblast_conv2d_1x1"},
                                                   {1, ""}}) {
    tunefleet::v1::ModelTask* t = s.plan.request.add_tasks();
    t->mutable_workload()->set_op(s.model.tasks[w].workload.op());
    t->set_template_name(name);
    t->set_weight(static_cast<uint32_t>(s.model.tasks[w].count));
    s.plan.workload_of_task.push_back(w);
  }
  return s;
}

TEST(ModelView, SkippedTasksAreGroupedByTemplate) {
  const Submitted s = TwoSubmittedWorkloads();
  google::protobuf::RepeatedPtrField<tunefleet::v1::SkippedTask> skipped;
  EXPECT_EQ(SkippedTasksText(s.plan.request, skipped), "");
  for (uint32_t i : {2u, 1u}) {
    tunefleet::v1::SkippedTask* t = skipped.Add();
    t->set_task_index(i);
    t->set_reason("no config " + std::to_string(i));
  }
  EXPECT_EQ(SkippedTasksText(s.plan.request, skipped),
            "skipped 2 of 4 tasks, not tuned on this device:\n"
            "  clblast_conv2d_1x1 x1: no config 2\n"
            "  clblast_conv2d x1: no config 1\n");
}

TEST(ModelView, TuneJsonHasTheModelJobAndEveryWorkloadWithItsLibrary) {
  const Submitted s = TwoSubmittedWorkloads();
  JobProgress last = ModelJob(21, 8e6, 5e6, 1);
  last.set_state(tunefleet::v1::JOB_STATE_DONE);
  last.set_trials_total(21);
  const std::string conv = s.model.tasks[0].workload.Canonical();
  const std::string pool = s.model.tasks[1].workload.Canonical();
  *last.mutable_model()->add_task_progress() =
      Task(0, conv, "conv2d_direct", 2, 5e4, 1e5, 9, 10);
  *last.mutable_model()->add_task_progress() =
      Task(1, conv, "clblast_conv2d", 3, 4e4, 0, 2, 2);
  *last.mutable_model()->add_task_progress() =
      Task(3, pool, "global_pool_reduce", 4, 0, 1e3, 9, 9);
  last.mutable_model()->mutable_task_progress(1)->set_stopped_reason(
      "its space is exhausted");
  tunefleet::v1::SkippedTask* skipped = last.mutable_model()->add_skipped();
  skipped->set_task_index(2);
  skipped->set_reason("no config");
  tunefleet::v1::LatencyPoint* point =
      last.mutable_model()->add_latency_history();
  point->set_trials_done(4);
  point->set_latency_ns(6e6);
  tunefleet::v1::SubmitModelJobResponse submitted;
  submitted.set_job_id(9);
  submitted.set_device_key("pocl");
  TuneOptions o;
  o.onnx = "small.onnx";
  o.embedded.db_path = "t.db";
  o.trials_per_task = 10;

  const nlohmann::json j =
      ModelTuneJson(o, s.model, s.plan, submitted, last, 12.5);
  // The model job as every JSON shows a job...
  EXPECT_EQ(j["job_id"], 9);
  EXPECT_EQ(j["state"], "JOB_STATE_DONE");
  EXPECT_EQ(j["trials_done"], 21);
  EXPECT_EQ(j["trials_total"], 21);
  EXPECT_EQ(j["model"]["task_scheduler"], "TASK_SCHEDULER_GRADIENT");
  EXPECT_DOUBLE_EQ(j["model"]["naive_latency_ns"].get<double>(), 8e6);
  EXPECT_DOUBLE_EQ(j["model"]["latency_ns"].get<double>(), 5e6);
  EXPECT_TRUE(j["model"]["latency_complete"].get<bool>());
  EXPECT_EQ(j["model"]["latency_history"][0]["trials_done"], 4);
  ASSERT_EQ(j["model"]["skipped"].size(), 1u);
  EXPECT_EQ(j["model"]["skipped"][0]["task_index"], 2);
  // ... and what only this run knows.
  EXPECT_EQ(j["model_file"], "small.onnx");
  EXPECT_EQ(j["trials_per_task"], 10);
  EXPECT_EQ(j["database"], "t.db");
  EXPECT_DOUBLE_EQ(j["elapsed_s"].get<double>(), 12.5);
  // Every task got a trial.
  EXPECT_TRUE(j["tasks_without_trials"].empty());

  ASSERT_EQ(j["workloads"].size(), 2u);
  const nlohmann::json& c = j["workloads"][0];
  EXPECT_EQ(c["workload_key"], conv);
  EXPECT_EQ(c["count"], 2);
  EXPECT_DOUBLE_EQ(c["reference_time_ns"].get<double>(), 1e5);
  // The library call was fastest: the emitted library runs it.
  EXPECT_EQ(c["deployed"], "clblast_conv2d");
  EXPECT_DOUBLE_EQ(c["speedup_vs_reference"].get<double>(), 2.5);
  ASSERT_EQ(c["tasks"].size(), 3u);
  EXPECT_EQ(c["tasks"][0]["template_name"], "conv2d_direct");
  EXPECT_EQ(c["tasks"][0]["job_id"], 2);
  EXPECT_EQ(c["tasks"][0]["state"], "JOB_STATE_RUNNING");
  EXPECT_EQ(c["tasks"][0]["trials_done"], 9);
  EXPECT_EQ(c["tasks"][0]["trials_granted"], 10);
  EXPECT_DOUBLE_EQ(c["tasks"][0]["best"]["time_ns"].get<double>(), 5e4);
  EXPECT_EQ(c["tasks"][1]["template_name"], "clblast_conv2d");
  EXPECT_EQ(c["tasks"][1]["job_id"], 3);
  EXPECT_EQ(c["tasks"][1]["stopped_reason"], "its space is exhausted");
  EXPECT_EQ(c["tasks"][2]["template_name"], "clblast_conv2d_1x1");
  EXPECT_EQ(c["tasks"][2]["skipped"], "no config");
  const nlohmann::json& g = j["workloads"][1];
  EXPECT_TRUE(g["tasks"][0]["best"].is_null());
  EXPECT_EQ(g["deployed"], "reference");
}

TEST(ModelView, TasksTheBudgetLeftWithoutATrialAreListed) {
  const Submitted s = TwoSubmittedWorkloads();
  JobProgress last = ModelJob(2, 8e6, 7e6, 0);
  const std::string conv = s.model.tasks[0].workload.Canonical();
  const std::string pool = s.model.tasks[1].workload.Canonical();
  *last.mutable_model()->add_task_progress() =
      Task(0, conv, "conv2d_direct", 2, 5e4, 1e5, 2, 2);
  *last.mutable_model()->add_task_progress() =
      Task(1, conv, "clblast_conv2d", 3, 0, 0, 0, 0);
  *last.mutable_model()->add_task_progress() =
      Task(3, pool, "global_pool_reduce", 4, 0, 0, 0, 0);
  const std::vector<UntriedTask> untried = UntriedTasks(s.model, s.plan, last);
  ASSERT_EQ(untried.size(), 2u);
  EXPECT_EQ(untried[0].task_index, 1u);
  EXPECT_EQ(untried[0].workload_key, conv);
  EXPECT_EQ(untried[0].template_name, "clblast_conv2d");
  EXPECT_EQ(untried[1].task_index, 3u);
  EXPECT_EQ(untried[1].workload_key, pool);
  const nlohmann::json j =
      ModelTuneJson(TuneOptions(), s.model, s.plan, {}, last, 1);
  ASSERT_EQ(j["tasks_without_trials"].size(), 2u);
  EXPECT_EQ(j["tasks_without_trials"][1]["task_index"], 3);
  EXPECT_THAT(UntriedTasksText(untried, 3),
              HasSubstr("2 of 3 tasks got no trial"));
}

}  // namespace
}  // namespace tunefleet::cli
