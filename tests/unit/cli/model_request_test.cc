// What `tunefleet tune --onnx` submits as one model job: a task per
// imported workload (its op's default template) weighted by its count, one
// per library template of its op unless --no-library, the budget from
// --trials or --trials-per-task, and the single-job flags.
#include "cli/model_request.h"

#include <string>

#include "cli/tune_command.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernels_templates/workload.h"
#include "trial/trial_request.h"

namespace tunefleet::cli {
namespace {

using ::testing::HasSubstr;

onnx_import::ModelTasks TwoWorkloads() {
  onnx_import::ModelTasks m;
  onnx_import::ModelTask conv{{*templates::Workload::Parse(
      "conv2d", "N=1,C=16,H=24,W=48,K=32,R=3,S=3,PH=1,PW=1,act=relu")}};
  conv.count = 3;
  onnx_import::ModelTask pool{
      {*templates::Workload::Parse("global_pool", "N=1,C=32,H=24,W=48")}};
  pool.count = 1;
  m.tasks = {conv, pool};
  return m;
}

TuneOptions ModelOptions() {
  TuneOptions o;
  o.onnx = "/models/small.onnx";
  return o;
}

TEST(ModelTrialBudget, PerWorkloadByDefaultTotalOrPerTaskWhenGiven) {
  TuneOptions o = ModelOptions();
  EXPECT_EQ(*ModelTrialBudget(o, 53), kDefaultTrialsPerWorkload * 53);
  o.trials_per_task = 8;
  EXPECT_EQ(*ModelTrialBudget(o, 53), 8u * 53);
  o.trials_per_task = 0;
  o.trials = 424;
  o.trials_given = true;
  EXPECT_EQ(*ModelTrialBudget(o, 53), 424u);
}

TEST(ModelTrialBudget, BothFlagsOrTooManyTrialsAreRefused) {
  TuneOptions o = ModelOptions();
  o.trials_given = true;
  o.trials_per_task = 8;
  const absl::Status both = ModelTrialBudget(o, 7).status();
  EXPECT_TRUE(absl::IsInvalidArgument(both)) << both;
  EXPECT_THAT(both.message(), HasSubstr("--trials "));
  EXPECT_THAT(both.message(), HasSubstr("--trials-per-task"));
  o.trials_given = false;
  o.trials_per_task = kMaxModelTrials;
  const absl::Status big = ModelTrialBudget(o, 2).status();
  EXPECT_TRUE(absl::IsInvalidArgument(big)) << big;
  EXPECT_THAT(big.message(), HasSubstr("2000000"));
}

TEST(ModelJobRequest, ATaskPerWorkloadAndLibraryTemplateWeightedByCount) {
  const onnx_import::ModelTasks m = TwoWorkloads();
  const std::vector<std::string> library =
      LibraryTemplates(m.tasks[0].workload);
  // The 3x3 conv: the CLBlast conv, not the 1x1 one.
  EXPECT_THAT(library, ::testing::ElementsAre("clblast_conv2d"));
  EXPECT_THAT(LibraryTemplates(*templates::Workload::Parse(
                  "conv2d", "N=1,C=16,H=24,W=48,K=32,R=1,S=1")),
              ::testing::ElementsAre("clblast_conv2d", "clblast_conv2d_1x1"));
  EXPECT_TRUE(LibraryTemplates(m.tasks[1].workload).empty());

  absl::StatusOr<ModelJobPlan> plan = BuildModelJobRequest(ModelOptions(), m);
  ASSERT_TRUE(plan.ok()) << plan.status();
  const tunefleet::v1::SubmitModelJobRequest& r = plan->request;
  EXPECT_EQ(r.model_name(), "small.onnx");
  ASSERT_EQ(r.tasks_size(), static_cast<int>(2 + library.size()));
  ASSERT_EQ(plan->workload_of_task.size(), 2 + library.size());
  // The conv's default template, its library templates, then the pool's.
  const tunefleet::v1::Workload conv =
      trial::WorkloadToProto(m.tasks[0].workload);
  for (size_t i = 0; i <= library.size(); ++i) {
    const tunefleet::v1::ModelTask& t = r.tasks(static_cast<int>(i));
    EXPECT_EQ(t.workload().SerializeAsString(), conv.SerializeAsString());
    EXPECT_EQ(t.template_name(), i == 0 ? "" : library[i - 1]);
    EXPECT_EQ(t.weight(), 3u);
    EXPECT_EQ(plan->workload_of_task[i], 0u);
  }
  const tunefleet::v1::ModelTask& pool = r.tasks(r.tasks_size() - 1);
  EXPECT_EQ(pool.workload().op(), "global_pool");
  EXPECT_EQ(pool.template_name(), "");
  EXPECT_EQ(pool.weight(), 1u);
  EXPECT_EQ(plan->workload_of_task.back(), 1u);
  // 20 per workload: the library tasks share their workload's.
  EXPECT_EQ(r.trials(), 2 * kDefaultTrialsPerWorkload);
  EXPECT_EQ(r.task_scheduler(), tunefleet::v1::TASK_SCHEDULER_GRADIENT);
}

TEST(ModelJobRequest, NoLibraryLeavesOnlyTheDefaultTemplates) {
  TuneOptions o = ModelOptions();
  o.no_library = true;
  absl::StatusOr<ModelJobPlan> plan = BuildModelJobRequest(o, TwoWorkloads());
  ASSERT_TRUE(plan.ok()) << plan.status();
  ASSERT_EQ(plan->request.tasks_size(), 2);
  for (const auto& t : plan->request.tasks()) EXPECT_EQ(t.template_name(), "");
}

TEST(ModelJobRequest, CarriesTheSchedulerAndTheSingleJobFlags) {
  TuneOptions o = ModelOptions();
  o.task_scheduler = "round-robin";
  o.batch_trials = 4;
  o.trials_per_task = 6;
  o.strategy = "random";
  o.seed = 7;
  o.priority = 5;
  o.deadline_s = 600;
  o.no_transfer = true;
  o.device_key = "board";
  o.repeat = 3;
  absl::StatusOr<ModelJobPlan> plan = BuildModelJobRequest(o, TwoWorkloads());
  ASSERT_TRUE(plan.ok()) << plan.status();
  const tunefleet::v1::SubmitModelJobRequest& r = plan->request;
  EXPECT_EQ(r.task_scheduler(), tunefleet::v1::TASK_SCHEDULER_ROUND_ROBIN);
  EXPECT_EQ(r.batch_trials(), 4u);
  EXPECT_EQ(r.trials(), 12u);
  EXPECT_EQ(r.strategy(), tunefleet::v1::STRATEGY_RANDOM);
  EXPECT_EQ(r.seed(), 7u);
  EXPECT_EQ(r.priority(), 5);
  EXPECT_EQ(r.deadline_s(), 600u);
  EXPECT_TRUE(r.no_transfer());
  EXPECT_EQ(r.device_key(), "board");
  EXPECT_EQ(r.timing().repeat(), 3u);
  EXPECT_GT(r.timing().min_repeat_ms(), 0);
}

TEST(ModelJobRequest, RefusesBadNamesAndSingleJobOnlyFlags) {
  const onnx_import::ModelTasks m = TwoWorkloads();
  TuneOptions o = ModelOptions();
  o.task_scheduler = "fastest";
  EXPECT_TRUE(absl::IsInvalidArgument(BuildModelJobRequest(o, m).status()));
  o = ModelOptions();
  o.strategy = "magic";
  EXPECT_TRUE(absl::IsInvalidArgument(BuildModelJobRequest(o, m).status()));
  o = ModelOptions();
  o.template_name = "conv2d_direct";
  absl::Status s = BuildModelJobRequest(o, m).status();
  EXPECT_TRUE(absl::IsInvalidArgument(s));
  EXPECT_THAT(s.message(), HasSubstr("--template"));
  o = ModelOptions();
  o.early_stop = 5;
  EXPECT_THAT(BuildModelJobRequest(o, m).status().message(),
              HasSubstr("--early-stop"));
  EXPECT_TRUE(absl::IsInvalidArgument(
      BuildModelJobRequest(ModelOptions(), onnx_import::ModelTasks())
          .status()));
}

}  // namespace
}  // namespace tunefleet::cli
