// Model jobs on the job fixture (job_fixture.h): a real store, scheduler and
// job manager with fake agents. The budget is never exceeded, every task's
// trials are measured once across a shutdown and resume, a cancel keeps
// what was measured, the round-robin rule spends evenly, and bad requests
// name the task.
#include <map>
#include <set>

#include "contract/names.h"
#include "gtest/gtest.h"
#include "progress/stored_progress.h"
#include "tests/unit/server/job_fixture.h"

namespace tunefleet::server {
namespace {

using tunefleet::v1::SubmitModelJobRequest;
using tunefleet::v1::SubmitModelJobResponse;

// Answers a task's trial with a time that depends on the trial and a
// reference run (negative trial id) with a slower one.
Measurement ModelAnswer(const MeasureRequest& r) {
  if (r.trial_id() < 0) return Ok(50000.0);
  return Ok(1000.0 + static_cast<double>((r.trial_id() * 37) % 101) * 100);
}

class ModelJobTest : public JobManagerTest {
 protected:
  // Three GEMM tasks (one four times in the model) and a pool.
  static SubmitModelJobRequest ModelRequest(uint32_t trials) {
    SubmitModelJobRequest r;
    r.set_model_name("tiny");
    r.set_device_key(kKey);
    r.set_trials(trials);
    r.set_strategy(tunefleet::v1::STRATEGY_RANDOM);
    r.set_seed(3);
    r.set_no_transfer(true);
    r.set_batch_trials(2);
    for (const char* shape :
         {"M=64,N=64,K=64", "M=32,N=64,K=128", "M=128,N=32,K=32"}) {
      tunefleet::v1::ModelTask* t = r.add_tasks();
      *t->mutable_workload() =
          trial::WorkloadToProto(*templates::Workload::Parse("gemm", shape));
      t->set_weight(r.tasks_size() == 1 ? 4 : 1);
    }
    return r;
  }

  std::shared_ptr<ModelJob> SubmitModel(const SubmitModelJobRequest& r) {
    SubmitModelJobResponse response;
    absl::StatusOr<std::shared_ptr<ModelJob>> m =
        jobs_->SubmitModel(r, &response);
    EXPECT_TRUE(m.ok()) << m.status();
    if (!m.ok()) return nullptr;
    EXPECT_EQ(response.job_id(), (*m)->id());
    return *m;
  }

  // Trial rows per task job of a model job, and their sum.
  int64_t TrialRows(int64_t model_id, std::map<int64_t, int64_t>* per_task) {
    absl::StatusOr<std::vector<store::StoredJob>> tasks =
        store_->ModelTaskJobs(model_id);
    EXPECT_TRUE(tasks.ok()) << tasks.status();
    int64_t sum = 0;
    for (const store::StoredJob& t :
         tasks.value_or(std::vector<store::StoredJob>())) {
      const std::vector<store::Trial> rows = Rows(t.id);
      std::set<uint64_t> configs;
      for (const store::Trial& row : rows) {
        EXPECT_TRUE(configs.insert(row.config_index).second)
            << "config measured twice in job " << t.id;
      }
      (*per_task)[t.id] = static_cast<int64_t>(rows.size());
      EXPECT_LE(static_cast<int64_t>(rows.size()), t.granted) << t.id;
      sum += static_cast<int64_t>(rows.size());
    }
    return sum;
  }
};

TEST_F(ModelJobTest, SpendsItsBudgetExactlyAcrossItsTasks) {
  for (auto rule : {tunefleet::v1::TASK_SCHEDULER_GRADIENT,
                    tunefleet::v1::TASK_SCHEDULER_ROUND_ROBIN}) {
    SCOPED_TRACE(contract::TaskSchedulerName(rule));
    if (agents_.empty()) {
      AnswerAll(Connect("agent-1", 1), ModelAnswer);
      AnswerAll(Connect("agent-2", 2), ModelAnswer);
    }
    SubmitModelJobRequest request = ModelRequest(17);
    request.set_task_scheduler(rule);
    std::shared_ptr<ModelJob> model = SubmitModel(request);
    ASSERT_NE(model, nullptr);
    const JobProgress done = WaitFor(*model, Ended);
    ASSERT_EQ(done.state(), tunefleet::v1::JOB_STATE_DONE) << done.message();
    EXPECT_EQ(done.trials_done(), 17u);
    EXPECT_EQ(done.trials_total(), 17u);
    std::map<int64_t, int64_t> per_task;
    EXPECT_EQ(TrialRows(model->id(), &per_task), 17);
    ASSERT_EQ(done.model().task_progress_size(), 3);
    uint32_t granted = 0;
    for (const auto& t : done.model().task_progress()) {
      granted += t.trials_granted();
      EXPECT_EQ(t.job().trials_done(), per_task[t.job().job_id()]);
      EXPECT_EQ(t.job().state(), tunefleet::v1::JOB_STATE_DONE);
      EXPECT_GT(t.job().reference_time_ns(), 0);
    }
    EXPECT_EQ(granted, 17u);
    // Every task beat its 50 us naive kernel; the estimate is weighted.
    EXPECT_TRUE(done.model().latency_complete());
    EXPECT_DOUBLE_EQ(done.model().naive_latency_ns(), (4 + 1 + 1) * 50000.0);
    EXPECT_LT(done.model().latency_ns(), done.model().naive_latency_ns());
    EXPECT_GE(done.model().latency_history_size(), 2);
    EXPECT_EQ(progress::StoredModelProgress(
                  *store_, *store_->GetModelJob(model->id()), false)
                  ->trials_done(),
              17u);
  }
}

TEST_F(ModelJobTest, RoundRobinGrantsEveryTaskTheSame) {
  AnswerAll(Connect("agent-1", 1), ModelAnswer);
  SubmitModelJobRequest request = ModelRequest(12);
  request.set_task_scheduler(tunefleet::v1::TASK_SCHEDULER_ROUND_ROBIN);
  std::shared_ptr<ModelJob> model = SubmitModel(request);
  ASSERT_NE(model, nullptr);
  const JobProgress done = WaitFor(*model, Ended);
  ASSERT_EQ(done.state(), tunefleet::v1::JOB_STATE_DONE) << done.message();
  for (const auto& t : done.model().task_progress()) {
    EXPECT_EQ(t.trials_granted(), 4u) << t.task_index();
    EXPECT_EQ(t.job().trials_done(), 4u) << t.task_index();
  }
}

TEST_F(ModelJobTest, ShutdownAndResumeMeasureEveryTrialOnce) {
  FakeAgent& first_agent = Connect("agent-1", 1);
  constexpr uint32_t kBudget = 14;
  std::shared_ptr<ModelJob> model = SubmitModel(ModelRequest(kBudget));
  ASSERT_NE(model, nullptr);
  const int64_t id = model->id();
  // Some trials and references measured, one more leased at the stop.
  const std::set<int64_t> measured = MeasureTrials(first_agent, 5, ModelAnswer);
  WaitFor(*model, [](const JobProgress& p) { return p.trials_done() == 5; });
  jobs_->Shutdown();
  model.reset();
  EXPECT_EQ(store_->GetModelJob(id)->state, tunefleet::v1::JOB_STATE_RUNNING);

  RestartedServer second(*this, ModelAnswer);
  ASSERT_NO_FATAL_FAILURE(second.Resume(1));
  std::shared_ptr<TrackedJob> again = second.jobs.FindTracked(id);
  ASSERT_NE(again, nullptr);
  auto* resumed_model = dynamic_cast<ModelJob*>(again.get());
  ASSERT_NE(resumed_model, nullptr);
  const JobProgress done = WaitFor(*resumed_model, Ended);
  ASSERT_EQ(done.state(), tunefleet::v1::JOB_STATE_DONE) << done.message();
  EXPECT_EQ(done.trials_done(), kBudget);
  for (const MeasureRequest& r : second.agent.Received()) {
    EXPECT_EQ(measured.count(r.trial_id()), 0u) << r.trial_id();
  }
  std::map<int64_t, int64_t> per_task;
  EXPECT_EQ(TrialRows(id, &per_task), kBudget);
  EXPECT_EQ(store_->GetModelJob(id)->state, tunefleet::v1::JOB_STATE_DONE);
}

// Two tasks of one template and dims whose workloads differ only in their
// epilogue: each task's best config is measured by the other when the
// other had nothing as fast (ModelJob::ShareBestConfigs). Their random
// searches (seeds 3 and 4 over thousands of configs) would otherwise
// hardly ever meet.
TEST_F(ModelJobTest, SiblingTasksMeasureEachOthersBestConfig) {
  AnswerAll(Connect("agent-1", 1), ModelAnswer);
  SubmitModelJobRequest request = ModelRequest(16);
  request.clear_tasks();
  for (const char* shape : {"N=64,K=32", "N=64,K=32,affine=shift,act=relu"}) {
    tunefleet::v1::ModelTask* t = request.add_tasks();
    *t->mutable_workload() =
        trial::WorkloadToProto(*templates::Workload::Parse("dense", shape));
    t->set_weight(1);
  }
  request.set_task_scheduler(tunefleet::v1::TASK_SCHEDULER_ROUND_ROBIN);
  std::shared_ptr<ModelJob> model = SubmitModel(request);
  ASSERT_NE(model, nullptr);
  const JobProgress done = WaitFor(*model, Ended);
  ASSERT_EQ(done.state(), tunefleet::v1::JOB_STATE_DONE) << done.message();
  std::map<int64_t, int64_t> per_task;
  EXPECT_EQ(TrialRows(model->id(), &per_task), 16);
  absl::StatusOr<std::vector<store::StoredJob>> tasks =
      store_->ModelTaskJobs(model->id());
  ASSERT_TRUE(tasks.ok()) << tasks.status();
  ASSERT_EQ(tasks->size(), 2u);
  // Per task: its configs, and its best one.
  std::set<uint64_t> configs[2];
  uint64_t best[2] = {0, 0};
  for (int i = 0; i < 2; ++i) {
    double fastest = 0;
    for (const store::Trial& row : Rows((*tasks)[i].id)) {
      configs[i].insert(row.config_index);
      if (row.error == Measurement::OK &&
          (fastest == 0 || row.time_ns < fastest)) {
        fastest = row.time_ns;
        best[i] = row.config_index;
      }
    }
    ASSERT_GT(fastest, 0) << "task " << i << " measured nothing";
  }
  // One task's best config was measured by the other task too.
  const bool both_have_0 = configs[1].count(best[0]) > 0;
  const bool both_have_1 = configs[0].count(best[1]) > 0;
  EXPECT_TRUE(both_have_0 || both_have_1)
      << "best configs " << best[0] << " and " << best[1]
      << " were each measured by one task only";
}

TEST_F(ModelJobTest, CancelKeepsTheFinishedTrials) {
  FakeAgent& agent = Connect("agent-1", 1);
  std::shared_ptr<ModelJob> model = SubmitModel(ModelRequest(40));
  ASSERT_NE(model, nullptr);
  int trials = 0;
  while (trials < 4) {
    const MeasureRequest r = NextRequest(agent);
    Deliver(*ledger_, r, ModelAnswer(r));
    if (r.trial_id() > 0) ++trials;
  }
  WaitFor(*model, [](const JobProgress& p) { return p.trials_done() == 4; });
  absl::StatusOr<JobProgress> cancelled = jobs_->Cancel(model->id());
  ASSERT_TRUE(cancelled.ok()) << cancelled.status();
  EXPECT_EQ(cancelled->state(), tunefleet::v1::JOB_STATE_CANCELLED);
  EXPECT_EQ(cancelled->trials_done(), 4u);
  auto tasks = store_->ModelTaskJobs(model->id());
  ASSERT_TRUE(tasks.ok());
  int64_t ok_rows = 0;
  for (const store::StoredJob& t : *tasks) {
    EXPECT_TRUE(contract::IsFinalJobState(t.state)) << t.id;
    for (const store::Trial& row : Rows(t.id)) {
      if (row.error == Measurement::OK) ++ok_rows;
    }
  }
  EXPECT_EQ(ok_rows, 4);
  EXPECT_EQ(store_->GetModelJob(model->id())->state,
            tunefleet::v1::JOB_STATE_CANCELLED);
  EXPECT_EQ(jobs_->Cancel(model->id()).status().code(),
            absl::StatusCode::kFailedPrecondition);
}

TEST_F(ModelJobTest, ListsModelJobsBesideJobsWithoutTheirTasks) {
  AnswerAll(Connect("agent-1", 2), ModelAnswer);
  std::shared_ptr<Job> single = Submit(Request(2));
  std::shared_ptr<ModelJob> model = SubmitModel(ModelRequest(6));
  ASSERT_NE(single, nullptr);
  ASSERT_NE(model, nullptr);
  WaitFor(*model, Ended);
  absl::StatusOr<std::vector<JobProgress>> listed = jobs_->List(10);
  ASSERT_TRUE(listed.ok()) << listed.status();
  ASSERT_EQ(listed->size(), 2u);
  EXPECT_EQ((*listed)[0].job_id(), model->id());
  EXPECT_TRUE((*listed)[0].has_model());
  EXPECT_EQ((*listed)[0].model().task_progress_size(), 0);
  EXPECT_EQ((*listed)[0].model().tasks(), 3u);
  EXPECT_EQ((*listed)[1].job_id(), single->id());
  absl::StatusOr<std::vector<JobProgress>> stored =
      progress::StoredJobList(*store_, 10);
  ASSERT_TRUE(stored.ok());
  ASSERT_EQ(stored->size(), 2u);
  EXPECT_EQ((*stored)[0].model().model_name(), "tiny");
}

TEST_F(ModelJobTest, BadRequestsNameTheTaskAndStoreNothing) {
  Connect("agent-1", 1);
  SubmitModelJobRequest request = ModelRequest(10);
  request.mutable_tasks(1)->mutable_workload()->set_op("no_such_op");
  SubmitModelJobResponse response;
  absl::Status s = jobs_->SubmitModel(request, &response).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("tasks[1]"), std::string::npos) << s;
  request = ModelRequest(10);
  request.mutable_tasks(2)->set_weight(0);
  s = jobs_->SubmitModel(request, &response).status();
  EXPECT_NE(s.message().find("tasks[2].weight"), std::string::npos) << s;
  request = ModelRequest(0);
  s = jobs_->SubmitModel(request, &response).status();
  EXPECT_NE(s.message().find("trials"), std::string::npos) << s;
  EXPECT_TRUE(store_->ListModelJobs(0)->empty());
  EXPECT_TRUE(store_->ListJobs(0)->empty());
}

}  // namespace
}  // namespace tunefleet::server
