// The group commit of trial rows (store/trial_writer.h) on a real SQLite
// file: a result's callback runs only once its batch committed, and a batch
// whose commit fails acknowledges none of its results and keeps none.
#include "store/trial_writer.h"

#include <string>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "gtest/gtest.h"
#include "kernels_templates/registry.h"
#include "store/sqlite.h"
#include "store/store.h"
#include "tests/support/device_store_test.h"
#include "tests/support/small_job.h"

namespace tunefleet::store {
namespace {

using tunefleet::v1::Measurement;

Measurement Result(Measurement::Error error, double ns) {
  Measurement m;
  m.set_error(error);
  m.add_times_ns(ns);
  return m;
}

class TrialWriterTest : public testing::DeviceStoreTest {
 protected:
  TrialWriterTest() : DeviceStoreTest("trial_writer_test") {}
  void SetUp() override {
    ASSERT_NO_FATAL_FAILURE(DeviceStoreTest::SetUp());
    absl::StatusOr<int64_t> job = store_->CreateJob(testing::SmallGemmJob());
    ASSERT_TRUE(job.ok()) << job.status();
    std::vector<NewTrial> rows;
    for (uint64_t i = 0; i < 8; ++i) rows.push_back({i, "{}"});
    absl::StatusOr<std::vector<int64_t>> ids = store_->InsertTrials(*job, rows);
    ASSERT_TRUE(ids.ok()) << ids.status();
    ids_ = *ids;
    absl::StatusOr<Database> other = Database::Open(db_.path());
    ASSERT_TRUE(other.ok()) << other.status();
    other_ = *std::move(other);
  }

  // The trial's state as a second connection to the file sees it: only
  // what was committed.
  std::string CommittedState(int64_t trial_id) {
    absl::StatusOr<Statement> s =
        other_.Prepare("SELECT state FROM trials WHERE id = ?1", trial_id);
    if (!s.ok()) return s.status().ToString();
    absl::StatusOr<bool> row = s->Step();
    if (!row.ok() || !*row) return "missing";
    return s->Text(0);
  }

  std::vector<int64_t> ids_;
  Database other_;
};

TEST_F(TrialWriterTest, AcknowledgesAResultOnlyAfterItsBatchCommitted) {
  // A long delay and a large batch: nothing commits until Flush().
  TrialWriter writer(store_, {absl::Seconds(60), 1000});
  writer.Lease(ids_[0], "agent-a");
  writer.Lease(ids_[1], "agent-a");
  absl::Mutex mu;
  std::vector<std::string> seen_at_ack;  // committed state in each callback
  std::vector<bool> fresh;
  for (int i = 0; i < 2; ++i) {
    const int64_t id = ids_[i];
    writer.Complete(id, Result(Measurement::OK, 100 + i), 100 + i, 1.0,
                    [&, id](absl::StatusOr<bool> f) {
                      absl::MutexLock lock(&mu);
                      seen_at_ack.push_back(CommittedState(id));
                      fresh.push_back(f.ok() && *f);
                    });
  }
  // Queued, not committed, not acknowledged.
  EXPECT_EQ(CommittedState(ids_[0]), "pending");
  {
    absl::MutexLock lock(&mu);
    EXPECT_TRUE(seen_at_ack.empty());
  }
  writer.Flush();
  {
    absl::MutexLock lock(&mu);
    EXPECT_EQ(seen_at_ack, (std::vector<std::string>{"done", "done"}));
    EXPECT_EQ(fresh, (std::vector<bool>{true, true}));
  }
  // Leases and results went in one transaction.
  EXPECT_EQ(writer.batches(), 1);
  absl::StatusOr<std::vector<Trial>> trials = store_->JobTrials(1);
  ASSERT_TRUE(trials.ok());
  EXPECT_EQ((*trials)[0].attempt, 1);
  EXPECT_DOUBLE_EQ((*trials)[1].time_ns, 101);

  // A repeated result is acknowledged as not fresh and changes nothing.
  bool again = true;
  writer.Complete(ids_[1], Result(Measurement::OK, 5), 5, 9.0,
                  [&again](absl::StatusOr<bool> f) { again = !f.ok() || *f; });
  writer.Flush();
  EXPECT_FALSE(again);
  trials = store_->JobTrials(1);
  ASSERT_TRUE(trials.ok());
  EXPECT_DOUBLE_EQ((*trials)[1].time_ns, 101);
}

TEST_F(TrialWriterTest, ABatchWhoseCommitFailsAcknowledgesNoneOfItsResults) {
  // One result of the batch makes its transaction fail.
  ASSERT_TRUE(other_
                  .Exec("CREATE TRIGGER fail_compile_error BEFORE UPDATE OF "
                        "state ON trials WHEN NEW.error = 'COMPILE_ERROR' "
                        "BEGIN SELECT RAISE(ABORT, 'injected failure'); END;")
                  .ok());
  TrialWriter writer(store_, {absl::Seconds(60), 4});
  absl::Mutex mu;
  std::vector<absl::Status> acks;
  auto record = [&](absl::StatusOr<bool> f) {
    absl::MutexLock lock(&mu);
    acks.push_back(f.status());
  };
  writer.Complete(ids_[0], Result(Measurement::OK, 10), 10, 1, record);
  writer.Complete(ids_[1], Result(Measurement::OK, 20), 20, 1, record);
  writer.Complete(ids_[2], Result(Measurement::COMPILE_ERROR, 0), 0, 0, record);
  writer.Complete(ids_[3], Result(Measurement::OK, 40), 40, 1, record);
  writer.Flush();
  {
    absl::MutexLock lock(&mu);
    ASSERT_EQ(acks.size(), 4u);
    for (const absl::Status& s : acks) {
      EXPECT_FALSE(s.ok());
      EXPECT_NE(s.message().find("injected failure"), std::string::npos) << s;
    }
  }
  // None of the batch is in the store, not even its good results.
  for (int i = 0; i < 4; ++i) EXPECT_EQ(CommittedState(ids_[i]), "pending");

  // Retried once the store takes them: all four recorded, each once.
  ASSERT_TRUE(other_.Exec("DROP TRIGGER fail_compile_error").ok());
  int fresh = 0;
  for (int i = 0; i < 4; ++i) {
    writer.Complete(ids_[i], Result(Measurement::OK, 10.0 * (i + 1)),
                    10.0 * (i + 1), 1, [&fresh](absl::StatusOr<bool> f) {
                      if (f.ok() && *f) ++fresh;
                    });
  }
  writer.Flush();
  EXPECT_EQ(fresh, 4);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(CommittedState(ids_[i]), "done");
  EXPECT_EQ(writer.batches(), 2);
}

TEST_F(TrialWriterTest, StopWritesWhatIsQueuedAndLaterWritesGoStraightIn) {
  int acked = 0;
  {
    TrialWriter writer(store_, {absl::Seconds(60), 1000});
    writer.Complete(ids_[0], Result(Measurement::OK, 10), 10, 1,
                    [&acked](absl::StatusOr<bool> f) { acked += f.ok(); });
    writer.Stop();
    EXPECT_EQ(acked, 1);
    EXPECT_EQ(CommittedState(ids_[0]), "done");
    writer.Complete(ids_[1], Result(Measurement::OK, 10), 10, 1,
                    [&acked](absl::StatusOr<bool> f) { acked += f.ok(); });
    EXPECT_EQ(acked, 2);
  }
  EXPECT_EQ(CommittedState(ids_[1]), "done");
}

}  // namespace
}  // namespace tunefleet::store
