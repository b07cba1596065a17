// Model jobs (SubmitModelJob, docs/MODEL_JOBS.md) under faults: the server
// SIGKILLed and restarted mid-model, both task schedulers held to the
// budget, a cancel mid-run, and refused requests. Real tunefleet-server and
// tunefleet-agent processes on loopback, real SQLite, real OpenCL (PoCL in
// CI). The model is four small tasks built directly as ModelTask protos,
// each with a search space far larger than the budget.
#include <signal.h>

#include <cstdio>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "contract/names.h"
#include "gtest/gtest.h"
#include "kernels_templates/workload.h"
#include "store/store.h"
#include "tests/support/fleet_harness.h"
#include "tests/support/stored_trials.h"
#include "trial/trial_request.h"

namespace tunefleet {
namespace {

using testing::FleetHarness;
using testing::JobEnded;
using tunefleet::v1::JobProgress;
using tunefleet::v1::SubmitModelJobRequest;

constexpr char kModelKey[] = "model";

// A tiny model: a GEMM, a 3x3 convolution (twice in the model), a max pool
// and a depthwise convolution. Random search; each trial sleeps
// `cooldown_ms` on the agent first, so that the job lasts long enough to be
// disturbed.
SubmitModelJobRequest TinyModel(uint32_t trials,
                                tunefleet::v1::TaskScheduler scheduler,
                                double cooldown_ms, uint64_t seed) {
  struct Task {
    const char* op;
    const char* shape;
    uint32_t weight;
  };
  const Task tasks[] = {
      {"gemm", "M=64,N=64,K=64", 1},
      {"conv2d", "C=8,H=16,W=16,K=8,R=3,S=3,PH=1,PW=1", 2},
      {"pool2d", "C=8,H=16,W=16,R=3,S=3,SH=2,SW=2,PH=1,PW=1", 1},
      {"depthwise_conv2d", "C=16,H=16,W=16,R=3,S=3,PH=1,PW=1", 1},
  };
  SubmitModelJobRequest r;
  r.set_model_name("tiny");
  for (const Task& t : tasks) {
    tunefleet::v1::ModelTask* task = r.add_tasks();
    *task->mutable_workload() =
        trial::WorkloadToProto(*templates::Workload::Parse(t.op, t.shape));
    task->set_weight(t.weight);
  }
  testing::SetQuickRandomSearch(kModelKey, trials, seed, cooldown_ms, &r);
  r.set_task_scheduler(scheduler);
  return r;
}

grpc::Status SubmitModel(const FleetHarness& fleet,
                         const SubmitModelJobRequest& request,
                         tunefleet::v1::SubmitModelJobResponse* response) {
  grpc::ClientContext context;
  return fleet.Stub()->SubmitModelJob(&context, request, response);
}

int64_t Submit(const FleetHarness& fleet,
               const SubmitModelJobRequest& request) {
  tunefleet::v1::SubmitModelJobResponse response;
  const grpc::Status s = SubmitModel(fleet, request, &response);
  EXPECT_TRUE(s.ok()) << s.error_message();
  EXPECT_EQ(response.skipped_size(), 0);
  return response.job_id();
}

// Starts `fleet` with two agents and submits TinyModel(`budget`,
// `scheduler`, `cooldown_ms`, `seed`) to it: the model job's id, or 0 when
// the fleet did not start (a failure) or the submission failed.
int64_t StartAndSubmit(FleetHarness& fleet, uint32_t budget,
                       tunefleet::v1::TaskScheduler scheduler,
                       double cooldown_ms, uint64_t seed) {
  if (!fleet.StartFleet(2, kModelKey)) {
    ADD_FAILURE() << "the fleet did not start";
    return 0;
  }
  return Submit(fleet, TinyModel(budget, scheduler, cooldown_ms, seed));
}

// Waits for the model job to end; its last progress.
std::optional<JobProgress> AwaitEnd(const FleetHarness& fleet, int64_t id) {
  if (!FleetHarness::WaitFor([&] { return JobEnded(fleet.GetJob(id)); },
                             testing::kFleetJobLimit)) {
    return std::nullopt;
  }
  return fleet.GetJob(id);
}

// A model job as the database holds it: its row and, per task, its job row
// and trial rows.
struct StoredModel {
  store::ModelJob row;
  std::vector<store::StoredJob> tasks;
  std::map<int64_t, std::vector<store::Trial>> trials;  // by task job id
  size_t TrialRows() const {
    size_t n = 0;
    for (const auto& [id, rows] : trials) n += rows.size();
    return n;
  }
};

// Read from the database file (the server stopped or killed).
StoredModel ReadModel(const std::string& db, int64_t model_job_id) {
  StoredModel m;
  auto store = store::Store::Open(db);
  EXPECT_TRUE(store.ok()) << store.status();
  if (!store.ok()) return m;
  auto row = (*store)->GetModelJob(model_job_id);
  EXPECT_TRUE(row.ok()) << row.status();
  if (row.ok()) m.row = *row;
  auto tasks = (*store)->ModelTaskJobs(model_job_id);
  EXPECT_TRUE(tasks.ok()) << tasks.status();
  if (!tasks.ok()) return m;
  m.tasks = *tasks;
  for (const store::StoredJob& task : m.tasks) {
    EXPECT_EQ(task.model_job_id, model_job_id);
    auto rows = (*store)->JobTrials(task.id);
    EXPECT_TRUE(rows.ok()) << rows.status();
    if (rows.ok()) m.trials[task.id] = *rows;
  }
  return m;
}

// Per task job: each config once, every row done, no more rows than the
// task was granted; returns the rows that hold a measurement (not
// CANCELLED).
size_t ExpectTasksWithinGrants(const StoredModel& m) {
  size_t measured = 0;
  for (const store::StoredJob& task : m.tasks) {
    const std::vector<store::Trial>& rows = m.trials.at(task.id);
    std::set<uint64_t> configs;
    for (const store::Trial& t : rows) {
      EXPECT_TRUE(configs.insert(t.config_index).second)
          << "task job " << task.id << ": config " << t.config_index
          << " tried twice";
      EXPECT_EQ(t.state, tunefleet::v1::TRIAL_STATE_DONE)
          << "task job " << task.id << ": trial " << t.id << " left open";
      if (t.error != tunefleet::v1::Measurement::CANCELLED) ++measured;
    }
    EXPECT_LE(static_cast<int64_t>(rows.size()), task.granted)
        << "task job " << task.id << " measured beyond its grants";
    EXPECT_TRUE(contract::IsFinalJobState(task.state))
        << "task job " << task.id << " left "
        << contract::JobStateName(task.state);
  }
  return measured;
}

// A done model job as the database holds it: every task done, every trial
// measured exactly once, `budget` of them in all.
void ExpectDoneExactlyOnce(const StoredModel& m, uint32_t budget) {
  EXPECT_EQ(m.row.state, tunefleet::v1::JOB_STATE_DONE) << m.row.message;
  EXPECT_EQ(m.tasks.size(), 4u);
  const size_t measured = ExpectTasksWithinGrants(m);
  int64_t granted = 0;
  for (const store::StoredJob& task : m.tasks) {
    EXPECT_EQ(task.state, tunefleet::v1::JOB_STATE_DONE)
        << "task job " << task.id << ": " << task.message;
    granted += task.granted;
  }
  EXPECT_EQ(measured, budget);
  EXPECT_EQ(m.TrialRows(), budget) << "trial rows beyond the budget";
  EXPECT_EQ(granted, budget);
}

// Per task in the progress: its job's trials within its grants; the sum of
// grants within the budget.
void ExpectProgressWithinGrants(const JobProgress& p, uint32_t budget) {
  ASSERT_TRUE(p.has_model());
  uint32_t granted = 0, done = 0;
  for (const auto& task : p.model().task_progress()) {
    EXPECT_LE(task.job().trials_done(), task.trials_granted())
        << "task " << task.task_index();
    granted += task.trials_granted();
    done += task.job().trials_done();
  }
  EXPECT_LE(granted, budget);
  EXPECT_EQ(done, p.trials_done());
}

TEST(ModelJobFleet, SurvivesServerSigkillTwiceWithEveryTrialOnce) {
  FleetHarness fleet("model_kill");
  constexpr uint32_t kBudget = 30;
  const int64_t id = StartAndSubmit(
      fleet, kBudget, tunefleet::v1::TASK_SCHEDULER_ROUND_ROBIN, 200, 21);
  ASSERT_GT(id, 0);

  // Results finished before each kill, which must survive unchanged.
  testing::KeptResults kept;
  for (uint32_t kill_after : {6u, 16u}) {
    ASSERT_TRUE(fleet.AwaitTrialsDone(id, kill_after, testing::kFleetJobLimit));
    fleet.server().Kill(SIGKILL);
    const StoredModel before = ReadModel(fleet.db_path(), id);
    EXPECT_EQ(before.row.state, tunefleet::v1::JOB_STATE_RUNNING);
    for (const auto& [job, rows] : before.trials) kept.Keep(rows);
    ASSERT_TRUE(fleet.StartServer());
  }
  const std::optional<JobProgress> last = AwaitEnd(fleet, id);
  ASSERT_TRUE(last.has_value()) << "the model job did not end";
  EXPECT_EQ(last->state(), tunefleet::v1::JOB_STATE_DONE) << last->message();
  EXPECT_EQ(last->trials_done(), kBudget);
  ExpectProgressWithinGrants(*last, kBudget);
  for (const auto& task : last->model().task_progress()) {
    EXPECT_EQ(task.job().state(), tunefleet::v1::JOB_STATE_DONE)
        << "task " << task.task_index();
  }
  EXPECT_GT(last->model().latency_ns(), 0);
  fleet.server().Kill(SIGTERM);

  const StoredModel m = ReadModel(fleet.db_path(), id);
  ExpectDoneExactlyOnce(m, kBudget);
  size_t unchanged = 0;
  for (const auto& [job, rows] : m.trials) {
    unchanged += kept.ExpectUnchanged(rows);
  }
  EXPECT_EQ(unchanged, kept.size()) << "finished trials lost in a restart";
  EXPECT_GE(kept.size(), 16u);
  std::printf("[model] %zu trials kept across 2 server kills\n", kept.size());
}

TEST(ModelJobFleet, NeitherTaskSchedulerExceedsTheBudget) {
  FleetHarness fleet("model_budget");
  constexpr uint32_t kBudget = 24;
  ASSERT_TRUE(fleet.StartFleet(2, kModelKey));
  std::vector<int64_t> ids;
  for (auto scheduler : {tunefleet::v1::TASK_SCHEDULER_ROUND_ROBIN,
                         tunefleet::v1::TASK_SCHEDULER_GRADIENT}) {
    const int64_t id = Submit(fleet, TinyModel(kBudget, scheduler, 0, 31));
    ASSERT_GT(id, 0);
    // While it runs, too.
    for (int i = 0; i < 10 && !JobEnded(fleet.GetJob(id)); ++i) {
      if (auto p = fleet.GetJob(id)) ExpectProgressWithinGrants(*p, kBudget);
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
    const std::optional<JobProgress> last = AwaitEnd(fleet, id);
    ASSERT_TRUE(last.has_value()) << "the model job did not end";
    EXPECT_EQ(last->state(), tunefleet::v1::JOB_STATE_DONE) << last->message();
    EXPECT_EQ(last->model().task_scheduler(), scheduler);
    EXPECT_LE(last->trials_done(), kBudget);
    EXPECT_GT(last->trials_done(), 0u);
    ExpectProgressWithinGrants(*last, kBudget);
    ids.push_back(id);
    std::printf("[model] %s: %u of %u trials\n",
                contract::TaskSchedulerName(scheduler).c_str(),
                last->trials_done(), kBudget);
  }
  std::vector<uint32_t> done;
  for (int64_t id : ids) done.push_back(fleet.GetJob(id)->trials_done());
  fleet.server().Kill(SIGTERM);
  for (size_t i = 0; i < ids.size(); ++i) {
    const StoredModel m = ReadModel(fleet.db_path(), ids[i]);
    EXPECT_EQ(m.row.state, tunefleet::v1::JOB_STATE_DONE);
    const size_t measured = ExpectTasksWithinGrants(m);
    EXPECT_LE(m.TrialRows(), kBudget);
    EXPECT_EQ(m.TrialRows(), done[i]);
    EXPECT_EQ(measured, done[i]);
    int64_t granted = 0;
    for (const store::StoredJob& task : m.tasks) granted += task.granted;
    EXPECT_LE(granted, kBudget);
  }
}

TEST(ModelJobFleet, CancelledMidRunKeepsItsFinishedTrials) {
  constexpr uint32_t kBudget = 40;
  FleetHarness fleet("model_cancel");
  const int64_t id = StartAndSubmit(
      fleet, kBudget, tunefleet::v1::TASK_SCHEDULER_GRADIENT, 200, 41);
  ASSERT_GT(id, 0);
  ASSERT_TRUE(fleet.AwaitTrialsDone(id, 5, testing::kFleetJobLimit));
  {
    const grpc::Status s = fleet.Cancel(id);
    ASSERT_TRUE(s.ok()) << s.error_message();
  }
  const std::optional<JobProgress> last = AwaitEnd(fleet, id);
  ASSERT_TRUE(last.has_value()) << "the model job did not end";
  EXPECT_EQ(last->state(), tunefleet::v1::JOB_STATE_CANCELLED)
      << last->message();
  EXPECT_GE(last->trials_done(), 5u);
  EXPECT_LT(last->trials_done(), kBudget) << "cancelled too late to tell";
  for (const auto& task : last->model().task_progress()) {
    EXPECT_TRUE(contract::IsFinalJobState(task.job().state()))
        << "task " << task.task_index() << " still "
        << contract::JobStateName(task.job().state());
  }
  // A second cancel finds it ended.
  EXPECT_EQ(fleet.Cancel(id).error_code(),
            grpc::StatusCode::FAILED_PRECONDITION);
  // Trials in flight at the cancel may still land.
  std::this_thread::sleep_for(std::chrono::milliseconds(1000));
  const uint32_t reported = fleet.GetJob(id)->trials_done();
  fleet.server().Kill(SIGTERM);

  const StoredModel m = ReadModel(fleet.db_path(), id);
  EXPECT_EQ(m.row.state, tunefleet::v1::JOB_STATE_CANCELLED);
  const size_t measured = ExpectTasksWithinGrants(m);
  for (const store::StoredJob& task : m.tasks) {
    EXPECT_NE(task.state, tunefleet::v1::JOB_STATE_FAILED) << task.message;
  }
  EXPECT_GT(measured, 0u);
  // What progress reported, give or take the trials in flight (2 agents x
  // 2 each) at the cancel.
  EXPECT_GE(measured, last->trials_done());
  EXPECT_LE(measured, reported + 4u);
  EXPECT_LE(m.TrialRows(), kBudget);
  std::printf("[model] cancelled after %u trials; %zu kept in the store\n",
              last->trials_done(), measured);
}

TEST(ModelJobFleet, BadRequestsAreRefusedNamingTheField) {
  FleetHarness fleet("model_refuse");
  ASSERT_TRUE(fleet.StartFleet(1, kModelKey));
  const SubmitModelJobRequest good =
      TinyModel(8, tunefleet::v1::TASK_SCHEDULER_GRADIENT, 0, 1);
  struct Case {
    const char* what;
    SubmitModelJobRequest request;
    const char* field;  // the message names it
  };
  std::vector<Case> cases;
  cases.push_back({"zero trials", good, "trials"});
  cases.back().request.set_trials(0);
  cases.push_back({"an unknown op", good, "tasks[1]"});
  cases.back().request.mutable_tasks(1)->mutable_workload()->set_op(
      "no_such_op");
  cases.push_back({"a template of another op", good, "tasks[2]"});
  cases.back().request.mutable_tasks(2)->set_template_name("gemm_tiled");
  cases.push_back({"a zero weight", good, "tasks[3].weight"});
  cases.back().request.mutable_tasks(3)->set_weight(0);
  cases.push_back({"no task", good, "tasks"});
  cases.back().request.clear_tasks();
  for (const Case& c : cases) {
    tunefleet::v1::SubmitModelJobResponse response;
    const grpc::Status s = SubmitModel(fleet, c.request, &response);
    EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT)
        << c.what << ": " << s.error_message();
    EXPECT_NE(s.error_message().find(c.field), std::string::npos)
        << c.what << ": " << s.error_message();
    EXPECT_EQ(response.job_id(), 0) << c.what;
    std::printf("[model] %s: %s\n", c.what, s.error_message().c_str());
  }
  // Nothing was stored for them.
  grpc::ClientContext context;
  tunefleet::v1::ListJobsResponse jobs;
  ASSERT_TRUE(fleet.Stub()->ListJobs(&context, {}, &jobs).ok());
  EXPECT_EQ(jobs.jobs_size(), 0);
  // The same request, fixed, is accepted.
  tunefleet::v1::SubmitModelJobResponse response;
  const grpc::Status s = SubmitModel(fleet, good, &response);
  EXPECT_TRUE(s.ok()) << s.error_message();
  EXPECT_GT(response.job_id(), 0);
  EXPECT_EQ(response.device_key(), kModelKey);
}

}  // namespace
}  // namespace tunefleet
