#include "store/store.h"

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <map>
#include <string>

#include "gtest/gtest.h"
#include "kernels_templates/registry.h"
#include "tests/support/device_store_test.h"
#include "tests/support/small_job.h"
#include "tests/support/test_device.h"

namespace tunefleet::store {
namespace {

using testing::OneTimeOk;
using tunefleet::v1::Measurement;

class StoreTest : public testing::DeviceStoreTest {
 protected:
  StoreTest() : DeviceStoreTest("store_test", "test-gpu", "Acme") {}

  int64_t MakeJob(int64_t budget = 10) {
    auto id = store_->CreateJob(testing::SmallGemmJob(budget));
    EXPECT_TRUE(id.ok()) << id.status();
    return *id;
  }

  const std::string& path_ = db_.path();
};

TEST_F(StoreTest, CreatesFileWithOwnerOnlyModeAndWal) {
  struct stat st;
  ASSERT_EQ(stat(path_.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600);
  auto device = store_->GetDevice("test-gpu");
  ASSERT_TRUE(device.ok());
  EXPECT_EQ(device->vendor(), "Acme");
  EXPECT_EQ(store_->GetDevice("nope").status().code(),
            absl::StatusCode::kNotFound);
}

TEST_F(StoreTest, ResultsAreIdempotentByTrialId) {
  const int64_t job = MakeJob();
  auto ids = store_->InsertTrials(job, {{1, "a=1"}, {2, "a=2"}});
  ASSERT_TRUE(ids.ok());
  ASSERT_EQ(ids->size(), 2u);
  ASSERT_TRUE(store_->LeaseTrial((*ids)[0], "agent-1").ok());
  auto first = store_->CompleteTrial((*ids)[0], OneTimeOk(100), 100, 1.0);
  ASSERT_TRUE(first.ok());
  EXPECT_TRUE(*first);
  // A repeated (or late) result changes nothing.
  auto again = store_->CompleteTrial((*ids)[0], OneTimeOk(5), 5, 9.0);
  ASSERT_TRUE(again.ok());
  EXPECT_FALSE(*again);
  auto tally = store_->TallyJob(job);
  ASSERT_TRUE(tally.ok());
  EXPECT_EQ(tally->done, 1);
  ASSERT_TRUE(tally->best.has_value());
  EXPECT_DOUBLE_EQ(tally->best->time_ns(), 100);
  // The same config twice in one job is refused, and nothing is written.
  EXPECT_FALSE(store_->InsertTrials(job, {{3, "a=3"}, {1, "a=1"}}).ok());
  auto states = store_->TrialStates(job);
  ASSERT_TRUE(states.ok());
  EXPECT_EQ((*states)[tunefleet::v1::TRIAL_STATE_DONE], 1);
  EXPECT_EQ((*states)[tunefleet::v1::TRIAL_STATE_PENDING], 1);
}

TEST_F(StoreTest, JobsKeepTheTimesTheirCreatorGave) {
  store::JobParams spec = testing::SmallGemmJob(3);
  spec.strategy = tunefleet::v1::STRATEGY_GRID;
  spec.created_ms = 1700000000000;
  spec.deadline_ms = 1700000060000;
  auto id = store_->CreateJob(spec);
  ASSERT_TRUE(id.ok()) << id.status();
  auto job = store_->GetJob(*id);
  ASSERT_TRUE(job.ok()) << job.status();
  EXPECT_EQ(job->created_ms, 1700000000000);
  EXPECT_EQ(job->deadline_ms, 1700000060000);
  EXPECT_EQ(job->strategy, tunefleet::v1::STRATEGY_GRID);
  EXPECT_EQ(job->state, tunefleet::v1::JOB_STATE_QUEUED);
  // No deadline is stored as none.
  EXPECT_EQ(store_->GetJob(MakeJob())->deadline_ms, 0);
}

TEST_F(StoreTest, BestRecordIsTheFastestValidOne) {
  const int64_t job = MakeJob();
  auto ids =
      *store_->InsertTrials(job, {{1, "MWG=16"}, {2, "MWG=32"}, {3, "MWG=64"}});
  Measurement wrong;
  wrong.set_error(Measurement::WRONG_ANSWER);
  wrong.add_times_ns(1);  // fast but wrong: never the best
  ASSERT_TRUE(store_->CompleteTrial(ids[0], wrong, 0, 0).ok());
  ASSERT_TRUE(store_->CompleteTrial(ids[1], OneTimeOk(300), 300, 3).ok());
  ASSERT_TRUE(store_->CompleteTrial(ids[2], OneTimeOk(200), 200, 4).ok());
  store::RecordFilter best;
  best.best_only = true;
  auto records = store_->QueryRecords(best);
  ASSERT_TRUE(records.ok());
  ASSERT_EQ(records->size(), 1u);
  EXPECT_EQ((*records)[0].trial_id(), ids[2]);
  EXPECT_EQ((*records)[0].workload_key(), "gemm M=8 N=8 K=8 fp32");
  EXPECT_EQ((*records)[0].config().knobs(0).name(), "MWG");
  EXPECT_EQ((*records)[0].config().knobs(0).value(), 64);
  store::RecordFilter all;
  auto every = store_->QueryRecords(all);
  ASSERT_TRUE(every.ok());
  EXPECT_EQ(every->size(), 3u);
  all.op = "conv2d";
  EXPECT_TRUE(store_->QueryRecords(all)->empty());
}

TEST_F(StoreTest, FinishingAJobLeavesNoTrialWithoutAnErrorCode) {
  const int64_t job = MakeJob();
  auto ids = *store_->InsertTrials(job, {{1, "a=1"}, {2, "a=2"}, {3, "a=3"}});
  ASSERT_TRUE(store_->CompleteTrial(ids[0], OneTimeOk(10), 10, 1).ok());
  ASSERT_TRUE(store_->LeaseTrial(ids[1], "agent-1").ok());
  ASSERT_TRUE(
      store_->SetJobState(job, tunefleet::v1::JOB_STATE_CANCELLED, "stopped")
          .ok());
  store::RecordFilter filter;
  filter.job_id = job;
  auto records = *store_->QueryRecords(filter);
  ASSERT_EQ(records.size(), 3u);
  EXPECT_EQ(records[0].error(), Measurement::OK);
  EXPECT_EQ(records[1].error(), Measurement::CANCELLED);
  EXPECT_EQ(records[2].error(), Measurement::CANCELLED);
  auto row = store_->GetJob(job);
  ASSERT_TRUE(row.ok());
  EXPECT_EQ(row->state, tunefleet::v1::JOB_STATE_CANCELLED);
  EXPECT_EQ(row->message, "stopped");
}

// What a cancel left unmeasured is neither done nor an error, as the live
// job counts it, and no measurement to plot; the job's search space size
// is kept with it (schema v6).
TEST_F(StoreTest, ATalliedJobCountsWhatItsServerCounted) {
  store::JobParams spec = testing::SmallGemmJob(20);
  spec.space_size = 50256;
  const int64_t job = *store_->CreateJob(spec);
  auto ids = *store_->InsertTrials(job, {{1, "a=1"}, {2, "a=2"}, {3, "a=3"}});
  ASSERT_TRUE(store_->CompleteTrial(ids[0], OneTimeOk(10), 10, 1).ok());
  ASSERT_TRUE(store_->LeaseTrial(ids[1], "agent-1").ok());
  ASSERT_TRUE(
      store_->SetJobState(job, tunefleet::v1::JOB_STATE_CANCELLED, "").ok());
  absl::StatusOr<store::JobTally> tally = store_->TallyJob(job);
  ASSERT_TRUE(tally.ok()) << tally.status();
  EXPECT_EQ(tally->done, 1);
  EXPECT_EQ(tally->cancelled, 2);
  EXPECT_EQ(tally->errors, (std::map<std::string, uint32_t>{{"OK", 1}}));
  EXPECT_EQ(store_->GetJob(job)->space_size, 50256u);
  store::RecordFilter measured;
  measured.job_id = job;
  measured.measured_only = true;
  auto records = store_->QueryRecords(measured);
  ASSERT_TRUE(records.ok());
  ASSERT_EQ(records->size(), 1u);
  EXPECT_EQ((*records)[0].trial_id(), ids[0]);
}

TEST_F(StoreTest, ReopeningKeepsRecordsAndRefusesNewerSchemas) {
  const int64_t job = MakeJob();
  auto ids = *store_->InsertTrials(job, {{1, "a=1"}});
  ASSERT_TRUE(store_->CompleteTrial(ids[0], OneTimeOk(10), 10, 1).ok());
  db_.Close();
  store_ = nullptr;
  auto reopened = store::Store::Open(path_);
  ASSERT_TRUE(reopened.ok());
  EXPECT_EQ((*reopened)->TallyJob(job)->done, 1);
  reopened->reset();
  {
    auto db = store::Database::Open(path_);
    ASSERT_TRUE(db.ok());
    ASSERT_TRUE(db->Exec("PRAGMA user_version = 99").ok());
  }
  auto newer = store::Store::Open(path_);
  ASSERT_FALSE(newer.ok());
  EXPECT_EQ(newer.status().code(), absl::StatusCode::kFailedPrecondition);
}

// The trials table's definition as sqlite_master keeps it.
std::string TrialsSql(store::Database& db) {
  auto q = db.Prepare(
      "SELECT sql FROM sqlite_master WHERE type = 'table' AND name = "
      "'trials'");
  if (!q.ok() || !q->Step().value_or(false)) return "";
  return q->Text(0);
}

TEST_F(StoreTest, TrialChecksRefuseUnknownStatesAndErrorsAndV4FilesMigrate) {
  const int64_t job = MakeJob();
  auto ids = *store_->InsertTrials(job, {{1, "a=1"}, {2, "a=2"}});
  ASSERT_TRUE(store_->CompleteTrial(ids[0], OneTimeOk(10), 10, 1).ok());
  db_.Close();
  store_ = nullptr;
  const std::string v4_state = "CHECK (state IN ('pending', 'leased', 'done'))";
  const std::string v4_error =
      "error IN ('OK', 'INVALID_CONFIG',\n    'COMPILE_ERROR', "
      "'RUNTIME_ERROR', 'WRONG_ANSWER', 'TIMEOUT',\n    'DEVICE_LOST', "
      "'CANCELLED')";
  {
    auto db = store::Database::Open(path_);
    ASSERT_TRUE(db.ok());
    const std::string sql = TrialsSql(*db);
    // v5: no IN lists (SQLite builds a b-tree per checked row for those).
    EXPECT_EQ(sql.find(" IN ("), std::string::npos) << sql;
    // The same rules: every state and error code, nothing else.
    // (done: ids[0], completed above.)
    for (const char* state : {"pending", "leased"}) {
      EXPECT_TRUE(
          db->Run("UPDATE trials SET state = ?2 WHERE id = ?1", ids[1], state)
              .ok())
          << state;
    }
    for (int e = Measurement::OK; e <= Measurement::CANCELLED; ++e) {
      EXPECT_TRUE(
          db->Run("UPDATE trials SET error = ?2 WHERE id = ?1", ids[1],
                  Measurement::Error_Name(static_cast<Measurement::Error>(e)))
              .ok())
          << e;
    }
    EXPECT_FALSE(
        db->Run("UPDATE trials SET state = 'lost' WHERE id = ?1", ids[1]).ok());
    EXPECT_FALSE(
        db->Run("UPDATE trials SET error = 'OOPS' WHERE id = ?1", ids[1]).ok());
    // The file as v4 wrote it.
    std::string v4 = sql;
    v4.replace(
        v4.find("CHECK (state"),
        v4.find(")", v4.find("CHECK (state")) + 1 - v4.find("CHECK (state"),
        v4_state);
    const size_t error_at = v4.find("error = 'OK'");
    ASSERT_NE(error_at, std::string::npos) << v4;
    v4.replace(error_at, v4.find("'CANCELLED'", error_at) + 11 - error_at,
               v4_error);
    ASSERT_TRUE(db->Exec("PRAGMA writable_schema = ON").ok());
    ASSERT_TRUE(db->Run("UPDATE sqlite_master SET sql = ?1 WHERE name = "
                        "'trials'",
                        v4)
                    .ok());
    ASSERT_TRUE(db->Exec("PRAGMA writable_schema = OFF; PRAGMA "
                         "user_version = 4")
                    .ok());
  }
  {
    auto db = store::Database::Open(path_);
    ASSERT_TRUE(db.ok());
    ASSERT_NE(TrialsSql(*db).find(v4_state), std::string::npos);
    ASSERT_NE(TrialsSql(*db).find(v4_error), std::string::npos);
  }
  auto reopened = store::Store::Open(path_);
  ASSERT_TRUE(reopened.ok()) << reopened.status();
  EXPECT_EQ((*reopened)->TallyJob(job)->done, 1);
  reopened->reset();
  auto db = store::Database::Open(path_);
  ASSERT_TRUE(db.ok());
  EXPECT_EQ(TrialsSql(*db).find(" IN ("), std::string::npos);
  EXPECT_FALSE(
      db->Run("UPDATE trials SET state = 'lost' WHERE id = ?1", ids[1]).ok());
  auto check = db->Prepare("PRAGMA integrity_check");
  ASSERT_TRUE(check.ok());
  ASSERT_TRUE(check->Step().value_or(false));
  EXPECT_EQ(check->Text(0), "ok");
}

using ::tunefleet::testing::TestDevice;

class StoreSecurity : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ =
        ::testing::TempDir() + "/validation_store_" + std::to_string(getpid());
    std::filesystem::create_directories(dir_);
    path_ = dir_ + "/records.db";
    std::filesystem::remove(path_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string dir_, path_;
};

TEST_F(StoreSecurity, DatabaseWalAndShmFilesAreOwnerOnly) {
  // Even under a permissive umask.
  const mode_t old_umask = umask(0);
  auto store = store::Store::Open(path_);
  umask(old_umask);
  ASSERT_TRUE(store.ok()) << store.status();
  ASSERT_TRUE((*store)->UpsertDevice("dev", TestDevice()).ok());
  for (const std::string suffix : {"", "-wal", "-shm"}) {
    struct stat st;
    ASSERT_EQ(stat((path_ + suffix).c_str(), &st), 0) << suffix;
    EXPECT_EQ(st.st_mode & 0777, 0600) << path_ + suffix;
  }
}

TEST_F(StoreSecurity, ValuesNeverBecomeSql) {
  auto opened = store::Store::Open(path_);
  ASSERT_TRUE(opened.ok()) << opened.status();
  store::Store& store = **opened;
  // Keys with SQL in them are stored and found as plain text.
  const std::string hostile = "dev'); DROP TABLE jobs; --";
  ASSERT_TRUE(store.UpsertDevice(hostile, TestDevice()).ok());
  ASSERT_TRUE(store.UpsertDevice("dev", TestDevice()).ok());
  auto found = store.GetDevice(hostile);
  ASSERT_TRUE(found.ok()) << found.status();
  EXPECT_EQ(found->device_name(), "Validation GPU");
  auto job = store.CreateJob(testing::SmallGemmJob(4, 1, "dev"));
  ASSERT_TRUE(job.ok()) << job.status();
  auto trials = store.InsertTrials(*job, {{0, "MWG=16"}});
  ASSERT_TRUE(trials.ok()) << trials.status();
  tunefleet::v1::Measurement ok;
  ok.set_error(tunefleet::v1::Measurement::OK);
  ok.add_times_ns(1000);
  ASSERT_TRUE(store.CompleteTrial(trials->front(), ok, 1000, 1).ok());
  store::RecordFilter plain;
  plain.op = "gemm";
  auto one = store.QueryRecords(plain);
  ASSERT_TRUE(one.ok()) << one.status();
  EXPECT_EQ(one->size(), 1u);
  for (const char* op : {"gemm' OR '1'='1", "' UNION SELECT * FROM jobs --"}) {
    store::RecordFilter f;
    f.op = op;
    auto records = store.QueryRecords(f);
    ASSERT_TRUE(records.ok()) << records.status();
    EXPECT_TRUE(records->empty()) << op;
  }
  // The tables are intact.
  auto jobs = store.ListJobs(10);
  ASSERT_TRUE(jobs.ok()) << jobs.status();
  EXPECT_EQ(jobs->size(), 1u);
  auto devices = store.ListDevices();
  ASSERT_TRUE(devices.ok());
  EXPECT_EQ(devices->size(), 2u);
}

}  // namespace
}  // namespace tunefleet::store
