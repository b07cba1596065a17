// Model jobs in the store: one id sequence with jobs, task rows kept out of
// the jobs list, grants stored per task.
#include "gtest/gtest.h"
#include "kernels_templates/registry.h"
#include "proto/names.h"
#include "store/store.h"
#include "tests/support/temp_store.h"

namespace tunefleet::store {
namespace {

class ModelJobsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_NE(store_, nullptr);
    tunefleet::v1::DeviceInfo info;
    info.set_device_name("Test GPU");
    ASSERT_TRUE(store_->UpsertDevice("test-gpu", info).ok());
  }

  JobParams Task(int64_t model_job_id, int task_index) {
    JobParams p{*templates::Workload::Parse("gemm", "M=8,N=8,K=8"),
                *templates::FindTemplate("gemm", ""),
                "test-gpu",
                tunefleet::v1::STRATEGY_RANDOM,
                100,
                1,
                0};
    p.model_job_id = model_job_id;
    p.task_index = task_index;
    return p;
  }

  int64_t MakeModel(int64_t budget = 100) {
    ModelJobParams p;
    p.model_name = "cls.onnx";
    p.device_key = "test-gpu";
    p.task_scheduler = tunefleet::v1::TASK_SCHEDULER_ROUND_ROBIN;
    p.budget = budget;
    p.seed = 7;
    auto id = store_->CreateModelJob(p, "{}");
    EXPECT_TRUE(id.ok()) << id.status();
    return *id;
  }

  testing::TempStore db_{"model_jobs_test"};
  Store* store_ = db_.store();
};

TEST_F(ModelJobsTest, JobsAndModelJobsNeverShareAnId) {
  JobParams single = Task(0, -1);
  auto first = store_->CreateJob(single);
  ASSERT_TRUE(first.ok());
  const int64_t model = MakeModel();
  auto task = store_->CreateJob(Task(model, 0));
  auto second = store_->CreateJob(single);
  ASSERT_TRUE(task.ok() && second.ok());
  EXPECT_GT(model, *first);
  EXPECT_GT(*task, model);
  EXPECT_GT(*second, *task);
  EXPECT_EQ(store_->GetJob(model).status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(store_->GetModelJob(*first).status().code(),
            absl::StatusCode::kNotFound);
}

TEST_F(ModelJobsTest, TasksStayOutOfTheJobsListAndComeBackInOrder) {
  const int64_t model = MakeModel();
  ASSERT_TRUE(store_->CreateJob(Task(model, 1)).ok());
  ASSERT_TRUE(store_->CreateJob(Task(model, 0)).ok());
  auto single = store_->CreateJob(Task(0, -1));
  ASSERT_TRUE(single.ok());
  auto jobs = store_->ListJobs(0);
  ASSERT_TRUE(jobs.ok());
  ASSERT_EQ(jobs->size(), 1u);
  EXPECT_EQ(jobs->front().id, *single);
  auto unfinished = store_->UnfinishedJobs();
  ASSERT_TRUE(unfinished.ok());
  EXPECT_EQ(unfinished->size(), 1u);
  auto tasks = store_->ModelTaskJobs(model);
  ASSERT_TRUE(tasks.ok());
  ASSERT_EQ(tasks->size(), 2u);
  EXPECT_EQ((*tasks)[0].task_index, 0);
  EXPECT_EQ((*tasks)[1].task_index, 1);
  EXPECT_EQ((*tasks)[0].model_job_id, model);
  EXPECT_EQ((*tasks)[0].granted, 0);
}

TEST_F(ModelJobsTest, GrantsAndStatesAreStored) {
  const int64_t model = MakeModel(40);
  auto task = store_->CreateJob(Task(model, 0));
  ASSERT_TRUE(task.ok());
  ASSERT_TRUE(store_->SetTaskGranted(*task, 12).ok());
  EXPECT_EQ(store_->GetJob(*task)->granted, 12);
  auto unfinished = store_->UnfinishedModelJobs();
  ASSERT_TRUE(unfinished.ok());
  ASSERT_EQ(unfinished->size(), 1u);
  EXPECT_EQ(unfinished->front().budget, 40);
  EXPECT_EQ(unfinished->front().task_scheduler,
            tunefleet::v1::TASK_SCHEDULER_ROUND_ROBIN);
  EXPECT_EQ(unfinished->front().seed, 7u);
  ASSERT_TRUE(store_
                  ->SetModelJobState(model, tunefleet::v1::JOB_STATE_CANCELLED,
                                     "by a test")
                  .ok());
  auto row = store_->GetModelJob(model);
  ASSERT_TRUE(row.ok());
  EXPECT_EQ(row->state, tunefleet::v1::JOB_STATE_CANCELLED);
  EXPECT_EQ(row->message, "by a test");
  EXPECT_TRUE(store_->UnfinishedModelJobs()->empty());
  auto listed = store_->ListModelJobs(10);
  ASSERT_TRUE(listed.ok());
  ASSERT_EQ(listed->size(), 1u);
  EXPECT_EQ(listed->front().model_name, "cls.onnx");
}

TEST(TaskSchedulerNames, RoundTripAndAcceptHyphens) {
  EXPECT_EQ(proto::TaskSchedulerName(tunefleet::v1::TASK_SCHEDULER_UNSPECIFIED),
            "gradient");
  EXPECT_EQ(*proto::ParseTaskScheduler("round-robin"),
            tunefleet::v1::TASK_SCHEDULER_ROUND_ROBIN);
  EXPECT_EQ(*proto::ParseTaskScheduler("round_robin"),
            tunefleet::v1::TASK_SCHEDULER_ROUND_ROBIN);
  EXPECT_EQ(proto::ParseTaskScheduler("greedy").status().code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace tunefleet::store
