// Model jobs in the store: one id sequence with jobs, task rows kept out of
// the jobs list, grants stored per task; a model job's measurement round
// trips, and a v9 file (without the device-buffer figures) migrates.
#include "absl/strings/str_cat.h"
#include "contract/names.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"
#include "kernels_templates/registry.h"
#include "store/schema.h"
#include "store/sqlite.h"
#include "store/store.h"
#include "tests/support/device_store_test.h"
#include "tests/support/small_job.h"
#include "tests/support/temp_store.h"

namespace tunefleet::store {
namespace {

class ModelJobsTest : public testing::DeviceStoreTest {
 protected:
  ModelJobsTest() : DeviceStoreTest("model_jobs_test") {}

  JobParams Task(int64_t model_job_id, int task_index) {
    JobParams p = testing::SmallGemmJob(100);
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

// A model job of small.onnx on pocl.
ModelJobParams SmallModelJob() {
  ModelJobParams p;
  p.model_name = "small.onnx";
  p.device_key = "pocl";
  p.budget = 8;
  return p;
}

// A measurement of 20 runs, without the runs with device buffers.
tunefleet::v1::MeasuredLatency HostArrayMeasurement() {
  tunefleet::v1::MeasuredLatency m;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(
      R"pb(median_ns: 2.5e6
           p10_ns: 2.4e6
           p90_ns: 2.9e6
           runs: 20
           estimate_ns: 1e6
           agent_name: "agent-0"
           record: "on"
           commands_per_run: 17
           measured_ms: 1234)pb",
      &m));
  return m;
}

// Adds the figures of 20 runs with device buffers to `m`.
void AddDeviceBuffers(tunefleet::v1::MeasuredLatency& m) {
  m.set_device_buffers_median_ns(1.5e6);
  m.set_device_buffers_p10_ns(1.4e6);
  m.set_device_buffers_p90_ns(1.75e6);
  m.set_device_buffers_runs(20);
}

TEST(ModelMeasurements, OnnxHistoryAndMeasurementOutliveTheStore) {
  testing::TempStore db("model_measurements");
  ModelJobParams p = SmallModelJob();
  // Bytes with NULs and high bytes: stored as a BLOB, read back whole.
  p.onnx_model = std::string("\x08\x07\x00\xff onnx", 9);
  p.input_shapes = {"image=1,3,17,23", "mask=1,1"};
  auto id = db.store()->CreateModelJob(p, "{}");
  ASSERT_TRUE(id.ok()) << id.status();
  ModelJobParams without = p;
  without.onnx_model.clear();
  auto bare = db.store()->CreateModelJob(without, "{}");
  ASSERT_TRUE(bare.ok()) << bare.status();
  EXPECT_EQ(db.store()->GetModelJobModel(*bare).status().code(),
            absl::StatusCode::kNotFound);
  EXPECT_FALSE(db.store()->GetModelMeasurement(*id)->has_value());
  for (int i = 0; i < 3; ++i) {
    tunefleet::v1::LatencyPoint point;
    point.set_trials_done(2 * i + 1);
    point.set_latency_ns(3e6 - i * 1e6);
    ASSERT_TRUE(db.store()->AddModelLatencyPoint(*id, i, point).ok());
  }
  tunefleet::v1::MeasuredLatency m = HostArrayMeasurement();
  AddDeviceBuffers(m);
  for (int i = 0; i < 4; ++i) {
    tunefleet::v1::MeasuredLayer* l = m.add_layers();
    l->set_label(absl::StrCat("conv_", i));
    l->set_workload("conv2d C=8 fp32");
    l->set_entry(i == 0 ? "reference" : "tuned");
    l->set_measured_ns(1e5 * (i + 1));
    l->set_estimate_ns(i == 3 ? -1 : 9e4);
  }
  ASSERT_TRUE(db.store()->SetModelMeasurement(*id, m).ok());
  // Stored again (a restarted measurement): replaced, not doubled.
  ASSERT_TRUE(db.store()->SetModelMeasurement(*id, m).ok());

  const std::string path = db.path();
  db.Close();
  auto reopened = Store::Open(path);
  ASSERT_TRUE(reopened.ok()) << reopened.status();
  auto model = (*reopened)->GetModelJobModel(*id);
  ASSERT_TRUE(model.ok()) << model.status();
  EXPECT_EQ(model->onnx, p.onnx_model);
  EXPECT_EQ(model->input_shapes, p.input_shapes);
  auto history = (*reopened)->ModelLatencyHistory(*id);
  ASSERT_TRUE(history.ok());
  ASSERT_EQ(history->size(), 3u);
  EXPECT_EQ((*history)[2].trials_done(), 5u);
  EXPECT_DOUBLE_EQ((*history)[2].latency_ns(), 1e6);
  auto stored = (*reopened)->GetModelMeasurement(*id);
  ASSERT_TRUE(stored.ok() && stored->has_value());
  EXPECT_EQ((**stored).SerializeAsString(), m.SerializeAsString());
}

// The four columns v10 added to model_job_measurements.
constexpr const char* kDeviceBuffersColumns[] = {
    "device_buffers_median_ns", "device_buffers_p10_ns",
    "device_buffers_p90_ns", "device_buffers_runs"};

// Which of kDeviceBuffersColumns model_job_measurements has.
int DeviceBuffersColumns(Database& db) {
  auto q = db.Prepare(
      "SELECT name FROM pragma_table_info('model_job_measurements')");
  EXPECT_TRUE(q.ok()) << q.status();
  int n = 0;
  if (!q.ok()) return n;
  EXPECT_TRUE(q->ForEachRow([&n](const Statement& row) {
                 for (const char* c : kDeviceBuffersColumns) {
                   n += row.Text(0) == c;
                 }
               }).ok());
  return n;
}

TEST(ModelMeasurements, AV9FileMigratesAndKeepsItsMeasurement) {
  testing::TempStore db("model_measurements_v9");
  auto id = db.store()->CreateModelJob(SmallModelJob(), "{}");
  ASSERT_TRUE(id.ok()) << id.status();
  tunefleet::v1::MeasuredLatency m = HostArrayMeasurement();
  ASSERT_TRUE(db.store()->SetModelMeasurement(*id, m).ok());
  const std::string path = db.path();
  db.Close();
  {
    // The file as schema v9 had it: no device-buffer columns.
    auto raw = Database::Open(path);
    ASSERT_TRUE(raw.ok()) << raw.status();
    EXPECT_EQ(DeviceBuffersColumns(*raw), 4);
    for (const char* c : kDeviceBuffersColumns) {
      ASSERT_TRUE(
          raw->Exec(absl::StrCat(
                        "ALTER TABLE model_job_measurements DROP COLUMN ", c))
              .ok())
          << c;
    }
    ASSERT_TRUE(raw->Exec("PRAGMA user_version = 9").ok());
    EXPECT_EQ(DeviceBuffersColumns(*raw), 0);
  }
  auto reopened = Store::Open(path);
  ASSERT_TRUE(reopened.ok()) << reopened.status();
  // The v9 row: its figures kept, the device-buffer ones 0 (not measured).
  auto stored = (*reopened)->GetModelMeasurement(*id);
  ASSERT_TRUE(stored.ok() && stored->has_value()) << stored.status();
  EXPECT_EQ((**stored).SerializeAsString(), m.SerializeAsString());
  EXPECT_EQ((**stored).device_buffers_median_ns(), 0);
  EXPECT_EQ((**stored).device_buffers_runs(), 0u);
  // Measured again after the migration: the new figures are kept.
  AddDeviceBuffers(m);
  ASSERT_TRUE((*reopened)->SetModelMeasurement(*id, m).ok());
  stored = (*reopened)->GetModelMeasurement(*id);
  ASSERT_TRUE(stored.ok() && stored->has_value()) << stored.status();
  EXPECT_EQ((**stored).device_buffers_median_ns(), 1.5e6);
  EXPECT_EQ((**stored).device_buffers_p10_ns(), 1.4e6);
  EXPECT_EQ((**stored).device_buffers_p90_ns(), 1.75e6);
  EXPECT_EQ((**stored).device_buffers_runs(), 20u);
  reopened->reset();
  auto raw = Database::Open(path);
  ASSERT_TRUE(raw.ok()) << raw.status();
  EXPECT_EQ(DeviceBuffersColumns(*raw), 4);
  auto version = raw->Prepare("PRAGMA user_version");
  ASSERT_TRUE(version.ok() && version->Step().value_or(false));
  EXPECT_EQ(version->Int(0), kSchemaVersion);
}

TEST(TaskSchedulerNames, RoundTripAndAcceptHyphens) {
  EXPECT_EQ(
      contract::TaskSchedulerName(tunefleet::v1::TASK_SCHEDULER_UNSPECIFIED),
      "gradient");
  EXPECT_EQ(*contract::ParseTaskScheduler("round-robin"),
            tunefleet::v1::TASK_SCHEDULER_ROUND_ROBIN);
  EXPECT_EQ(*contract::ParseTaskScheduler("round_robin"),
            tunefleet::v1::TASK_SCHEDULER_ROUND_ROBIN);
  EXPECT_EQ(contract::ParseTaskScheduler("greedy").status().code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace tunefleet::store
