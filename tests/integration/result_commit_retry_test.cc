// A result whose commit fails is measured again, exactly once: a server in
// this process on a real SQLite file, an agent over gRPC on loopback with a
// fake measurement backend, and a trigger in the database that refuses to
// mark one trial done while a row of `refuse_done` names it. The backend
// adds that row when it first measures the trial and removes it when it
// measures it again, so the first result's group commit fails (its lease
// goes back to the queue: LeaseScheduler::RequeueLease) and the second one's
// is stored. Every other trial is measured once, and the job counts every
// trial once.
#include <chrono>
#include <map>
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "device_agent/agent.h"
#include "device_agent/backend.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "kernels_templates/workload.h"
#include "store/sqlite.h"
#include "tests/support/in_process_fleet.h"
#include "tests/support/small_job.h"
#include "trial/trial_request.h"
#include "tunefleet/v1/tuning.grpc.pb.h"

namespace tunefleet {
namespace {

constexpr char kRetryKey[] = "commit-retry";
constexpr uint32_t kRetryTrials = 8;

// Answers at once (FakeBackend's times); counts the measurements per trial
// and arms the trigger for the first trial it sees, once.
class RefusingBackend final : public device_agent::MeasurementBackend {
 public:
  explicit RefusingBackend(std::string db_path)
      : db_path_(std::move(db_path)),
        fake_(device_agent::FakeBackend::FakeDevice("result_commit_retry_test"),
              0) {}

  const tunefleet::v1::DeviceInfo& device_info() const override {
    return fake_.device_info();
  }
  tunefleet::v1::Measurement Measure(
      const tunefleet::v1::MeasureRequest& request) override {
    const int64_t id = request.trial_id();
    int n = 0;
    {
      absl::MutexLock lock(&mu_);
      if (target_ == 0) target_ = id;
      n = ++measured_[id];
    }
    if (id == Target()) {
      // First time: its commit is refused; second time: allowed again.
      Exec(n == 1 ? absl::StrCat("INSERT INTO refuse_done VALUES (", id, ")")
                  : absl::StrCat("DELETE FROM refuse_done WHERE id = ", id));
    }
    return fake_.Measure(request);
  }

  int64_t Target() {
    absl::MutexLock lock(&mu_);
    return target_;
  }
  std::map<int64_t, int> Measured() {
    absl::MutexLock lock(&mu_);
    return measured_;
  }

 private:
  void Exec(const std::string& sql) {
    absl::StatusOr<store::Database> db = store::Database::Open(db_path_);
    ASSERT_TRUE(db.ok()) << db.status();
    ASSERT_TRUE(db->Exec(sql).ok()) << sql;
  }

  const std::string db_path_;
  device_agent::FakeBackend fake_;
  absl::Mutex mu_;
  int64_t target_ ABSL_GUARDED_BY(mu_) = 0;
  std::map<int64_t, int> measured_ ABSL_GUARDED_BY(mu_);
};

class ResultCommitRetry : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(fleet_.StartServer().ok());
    {
      absl::StatusOr<store::Database> db =
          store::Database::Open(fleet_.db_path());
      ASSERT_TRUE(db.ok()) << db.status();
      ASSERT_TRUE(db->Exec(R"sql(
        CREATE TABLE refuse_done (id INTEGER PRIMARY KEY);
        CREATE TRIGGER refuse_done_trial BEFORE UPDATE OF state ON trials
        WHEN NEW.state = 'done' AND
             EXISTS (SELECT 1 FROM refuse_done WHERE id = NEW.id)
        BEGIN
          SELECT RAISE(ABORT, 'refused by the test');
        END;
      )sql")
                      .ok());
    }
    auto backend = std::make_unique<RefusingBackend>(fleet_.db_path());
    backend_ = backend.get();
    // One result per group commit: only the refused one is requeued.
    const absl::Status agent =
        fleet_.StartAgent(kRetryKey, std::move(backend), /*max_in_flight=*/1);
    ASSERT_TRUE(agent.ok()) << agent;
  }

  testing::InProcessFleet fleet_{"result_commit_retry"};
  RefusingBackend* backend_ = nullptr;  // owned by the fleet's agent
};

TEST_F(ResultCommitRetry, RefusedCommitIsMeasuredAgainExactlyOnce) {
  auto stub = fleet_.Stub();
  const tunefleet::v1::SubmitJobRequest request =
      testing::GemmJobRequest(kRetryKey, kRetryTrials, 5);
  tunefleet::v1::SubmitJobResponse submitted;
  {
    grpc::ClientContext context;
    ASSERT_TRUE(stub->SubmitJob(&context, request, &submitted).ok());
  }
  tunefleet::v1::JobProgress last;
  ASSERT_TRUE(testing::WatchJobToEnd(*stub, submitted.job_id(), &last,
                                     std::chrono::seconds(120))
                  .ok());
  ASSERT_EQ(last.state(), tunefleet::v1::JOB_STATE_DONE) << last.message();
  EXPECT_EQ(last.trials_done(), kRetryTrials);
  EXPECT_EQ(last.errors().at("OK"), kRetryTrials);

  const int64_t target = backend_->Target();
  ASSERT_GT(target, 0);
  const std::map<int64_t, int> measured = backend_->Measured();
  EXPECT_EQ(measured.size(), kRetryTrials);
  for (const auto& [id, n] : measured) {
    EXPECT_EQ(n, id == target ? 2 : 1) << "trial " << id;
  }

  // The store holds each trial once, done; the refused one too.
  absl::StatusOr<store::Database> db = store::Database::Open(fleet_.db_path());
  ASSERT_TRUE(db.ok()) << db.status();
  auto count = [&](const std::string& sql) -> int64_t {
    auto stmt = db->Prepare(sql);
    EXPECT_TRUE(stmt.ok()) << sql;
    if (!stmt.ok() || !stmt->Step().value_or(false)) return -1;
    return stmt->Int(0);
  };
  EXPECT_EQ(count(absl::StrCat("SELECT COUNT(*) FROM trials WHERE job_id = ",
                               submitted.job_id(), " AND state = 'done'")),
            kRetryTrials);
  EXPECT_EQ(count(absl::StrCat("SELECT state = 'done' FROM trials WHERE id = ",
                               target)),
            1);
  EXPECT_EQ(
      count(absl::StrCat("SELECT SUM(n) FROM job_trial_counts WHERE job_id = ",
                         submitted.job_id())),
      kRetryTrials);
}

}  // namespace
}  // namespace tunefleet
