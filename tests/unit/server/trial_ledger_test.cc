// The trial ledger's transitions (server/trial_ledger.h), each driven on a
// real scheduler, a real store on a temporary file and a real group commit
// (TrialWriter) that commits only when the test flushes it, so that a
// result can be seen committing. Time is a fake clock; no test sleeps or
// reads the wall clock. The jobs' side records what the ledger hands it.
#include "server/trial_ledger.h"

#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernels_templates/registry.h"
#include "metrics/server_metrics.h"
#include "server/lease_scheduler.h"
#include "store/sqlite.h"
#include "store/store.h"
#include "store/trial_writer.h"
#include "tests/support/fake_clock.h"
#include "tests/support/small_job.h"
#include "tests/support/temp_store.h"
#include "tests/unit/server/fake_agent.h"
#include "trial/trial_request.h"

namespace tunefleet::server {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;
using tunefleet::testing::FakeAgent;
using tunefleet::v1::Measurement;
using State = TrialLedger::State;

constexpr char kLedgerKey[] = "ledger-key";
// A trial's timeout in its request; the n-th lease an agent holds lasts
// n times this plus kLeaseSlackMs.
constexpr int64_t kLedgerTimeoutMs = 1000;
constexpr int64_t kLedgerLeaseMs = kLedgerTimeoutMs + kLeaseSlackMs;

// The jobs' side: records what the ledger hands the jobs. Jobs in `live`
// take results (their row: the measurement, its median time, 2 GFLOP/s).
class RecordingJobs final : public TrialJobs {
 public:
  void SetLive(int64_t job_id, bool live) {
    absl::MutexLock lock(&mu_);
    live_[job_id] = live;
  }
  std::optional<ResultRow> RowFor(int64_t job_id, int64_t,
                                  const Measurement& m) override {
    absl::MutexLock lock(&mu_);
    if (!live_[job_id]) return std::nullopt;
    ResultRow row{m, 0, 0};
    if (m.error() == Measurement::OK) {
      row.time_ns = trial::MedianNs(m.times_ns());
      row.gflops = 2;
    }
    return row;
  }
  void OnReference(int64_t job_id, int64_t trial_id,
                   const Measurement& m) override {
    absl::MutexLock lock(&mu_);
    references_.push_back({job_id, trial_id});
  }
  void OnStored(const StoredResult& result) override {
    absl::MutexLock lock(&mu_);
    stored_.push_back(result);
  }
  void OnRequeued(int64_t job_id, int64_t trial_id) override {
    absl::MutexLock lock(&mu_);
    requeued_.push_back(trial_id);
  }

  std::vector<StoredResult> stored() {
    absl::MutexLock lock(&mu_);
    return stored_;
  }
  std::vector<int64_t> requeued() {
    absl::MutexLock lock(&mu_);
    return requeued_;
  }
  std::vector<std::pair<int64_t, int64_t>> references() {
    absl::MutexLock lock(&mu_);
    return references_;
  }

 private:
  absl::Mutex mu_;
  std::map<int64_t, bool> live_ ABSL_GUARDED_BY(mu_);
  std::vector<StoredResult> stored_ ABSL_GUARDED_BY(mu_);
  std::vector<int64_t> requeued_ ABSL_GUARDED_BY(mu_);
  std::vector<std::pair<int64_t, int64_t>> references_ ABSL_GUARDED_BY(mu_);
};

Measurement Measured(int64_t trial_id, double ns) {
  Measurement m;
  m.set_trial_id(trial_id);
  m.set_error(Measurement::OK);
  for (double t : {ns * 1.1, ns, ns * 0.9}) m.add_times_ns(t);
  return m;
}

class LedgerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_NE(store_, nullptr);
    // Commits only on Flush(): the test sees a result committing. Every
    // trial write goes through it, the scheduler's requeues too, as in the
    // server (a Flush() with nothing queued would make the next write
    // commit at once).
    store::TrialWriter::Options options;
    options.max_delay = absl::Hours(24);
    options.max_batch = 1 << 20;
    writer_ = std::make_unique<store::TrialWriter>(store_, options);
    scheduler_ =
        std::make_unique<LeaseScheduler>(store_, clock_, writer_.get());
    ledger_ = std::make_unique<TrialLedger>(scheduler_.get(), &jobs_, store_,
                                            writer_.get(), &metrics_);
  }

  void TearDown() override {
    writer_->Stop();  // its callbacks reach the ledger
    ledger_.reset();
    scheduler_.reset();
    writer_.reset();
  }

  // `n` pending trial rows of a new live job, queued on the scheduler.
  std::vector<int64_t> Enqueue(int n) {
    absl::StatusOr<int64_t> job =
        store_->CreateJob(tunefleet::testing::SmallGemmJob(n, 0, kLedgerKey));
    EXPECT_TRUE(job.ok()) << job.status();
    job_id_ = *job;
    jobs_.SetLive(job_id_, true);
    std::vector<store::NewTrial> rows;
    for (int i = 0; i < n; ++i) {
      rows.push_back({static_cast<uint64_t>(i), absl::StrCat("X=", i)});
    }
    absl::StatusOr<std::vector<int64_t>> ids = store_->InsertTrials(*job, rows);
    EXPECT_TRUE(ids.ok()) << ids.status();
    std::vector<QueuedTrial> trials;
    for (int64_t id : *ids) trials.push_back(Queued(id));
    scheduler_->Enqueue(std::move(trials));
    return *ids;
  }

  QueuedTrial Queued(int64_t trial_id) {
    auto request = std::make_shared<tunefleet::v1::MeasureRequest>();
    request->set_trial_id(trial_id);
    request->mutable_timing()->set_timeout_ms(kLedgerTimeoutMs);
    return QueuedTrial{trial_id, job_id_, 0, kLedgerKey, std::move(request)};
  }

  FakeAgent& Connect(const std::string& id, uint32_t capacity) {
    agents_.push_back(std::make_unique<FakeAgent>(id, kLedgerKey, capacity,
                                                  clock_.NowMs(), "drv-1"));
    scheduler_->AddAgent(agents_.back()->session());
    return *agents_.back();
  }

  absl::Status Receive(const Measurement& m, const FakeAgent& from) {
    return ledger_->Receive(m, from.id(), "drv-1");
  }

  store::Trial Row(int64_t trial_id) {
    absl::StatusOr<std::vector<store::Trial>> rows = store_->JobTrials(job_id_);
    EXPECT_TRUE(rows.ok()) << rows.status();
    for (const store::Trial& t : *rows) {
      if (t.id == trial_id) return t;
    }
    ADD_FAILURE() << "no row for trial " << trial_id;
    return {};
  }

  // A counter of the server's metrics, read from its text format.
  double Counter(const std::string& name) {
    std::istringstream text(metrics_.Text());
    std::string line;
    while (std::getline(text, line)) {
      if (line.rfind(name + " ", 0) == 0) {
        return std::stod(line.substr(name.size() + 1));
      }
    }
    ADD_FAILURE() << "no sample " << name;
    return -1;
  }
  double Requeues() { return Counter("tunefleet_requeues_total"); }
  double Abandoned() { return Counter("tunefleet_trials_abandoned_total"); }

  static std::vector<int64_t> Ids(const FakeAgent& agent) {
    std::vector<int64_t> ids;
    for (const auto& r : agent.Received()) ids.push_back(r.trial_id());
    return ids;
  }

  testing::TempStore db_{"trial_ledger_test"};
  store::Store* const store_ = db_.store();
  testing::FakeClock clock_;
  RecordingJobs jobs_;
  metrics::ServerMetrics metrics_;
  std::vector<std::unique_ptr<FakeAgent>> agents_;
  std::unique_ptr<LeaseScheduler> scheduler_;
  std::unique_ptr<store::TrialWriter> writer_;
  std::unique_ptr<TrialLedger> ledger_;
  int64_t job_id_ = 0;
};

TEST_F(LedgerTest, ResultIsCommittedThenAcknowledgedThenHandedToTheJob) {
  FakeAgent& agent = Connect("a", 2);
  const std::vector<int64_t> ids = Enqueue(3);
  ASSERT_THAT(Ids(agent), ElementsAre(ids[0], ids[1]));
  EXPECT_EQ(ledger_->StateOf(ids[0]), State::kLeased);
  EXPECT_EQ(ledger_->StateOf(ids[2]), State::kQueued);

  ASSERT_TRUE(Receive(Measured(ids[0], 1000), agent).ok());
  // Received, not yet durable: not acknowledged (the lease holds, the agent
  // gets no more work) and the job has seen nothing.
  EXPECT_EQ(ledger_->StateOf(ids[0]), State::kCommitting);
  EXPECT_EQ(Row(ids[0]).state, tunefleet::v1::TRIAL_STATE_PENDING);
  EXPECT_THAT(jobs_.stored(), IsEmpty());
  EXPECT_EQ(scheduler_->LeaseCount(), 2u);
  EXPECT_EQ(agent.Received().size(), 2u);

  writer_->Flush();
  // Committed: the row is done with the lease that measured it, the lease
  // ended and the agent refilled, and the job got what was stored.
  const store::Trial row = Row(ids[0]);
  EXPECT_EQ(row.state, tunefleet::v1::TRIAL_STATE_DONE);
  EXPECT_EQ(row.error, Measurement::OK);
  EXPECT_DOUBLE_EQ(row.time_ns, 1000);
  EXPECT_EQ(row.attempt, 1);
  EXPECT_EQ(ledger_->StateOf(ids[0]), State::kNone);
  EXPECT_THAT(Ids(agent), ElementsAre(ids[0], ids[1], ids[2]));
  ASSERT_EQ(jobs_.stored().size(), 1u);
  const StoredResult stored = jobs_.stored()[0];
  EXPECT_EQ(stored.job_id, job_id_);
  EXPECT_EQ(stored.trial_id, ids[0]);
  EXPECT_EQ(stored.error, Measurement::OK);
  EXPECT_DOUBLE_EQ(stored.time_ns, 1000);
  EXPECT_TRUE(stored.fresh);
  EXPECT_EQ(Requeues(), 0);
}

TEST_F(LedgerTest, ResultForAnUnknownOrGivenUpTrialIsRefused) {
  FakeAgent& agent = Connect("a", 1);
  const std::vector<int64_t> ids = Enqueue(1);
  EXPECT_EQ(Receive(Measured(ids[0] + 1000, 1000), agent).code(),
            absl::StatusCode::kNotFound);
  // Its lease expires kMaxAttempts times (the agent takes it again each
  // time): given up, stored as DEVICE_LOST for the job.
  for (int attempt = 1; attempt <= kMaxAttempts; ++attempt) {
    ASSERT_EQ(ledger_->StateOf(ids[0]), State::kLeased) << attempt;
    ASSERT_EQ(agent.Received().back().attempt(),
              static_cast<uint32_t>(attempt));
    clock_.Advance(kLedgerLeaseMs + 1);
    const LostLeases lost = ledger_->ExpireLeases();
    EXPECT_EQ(lost.abandoned.size(), attempt == kMaxAttempts ? 1u : 0u);
  }
  writer_->Flush();
  EXPECT_EQ(ledger_->StateOf(ids[0]), State::kNone);
  EXPECT_EQ(Requeues(), kMaxAttempts - 1);
  EXPECT_EQ(Abandoned(), 1);
  ASSERT_EQ(jobs_.stored().size(), 1u);
  EXPECT_EQ(jobs_.stored()[0].error, Measurement::DEVICE_LOST);
  EXPECT_EQ(Row(ids[0]).error, Measurement::DEVICE_LOST);
  EXPECT_EQ(Row(ids[0]).attempt, kMaxAttempts);

  // The last agent's late result: refused, nothing written.
  EXPECT_EQ(Receive(Measured(ids[0], 1000), agent).code(),
            absl::StatusCode::kNotFound);
  writer_->Flush();
  EXPECT_EQ(jobs_.stored().size(), 1u);
  EXPECT_EQ(Row(ids[0]).error, Measurement::DEVICE_LOST);
}

TEST_F(LedgerTest, ExpiredLeaseIsRequeuedAndALateResultStillCounts) {
  // Four leases at deadlines 1, 2, 3 and 4 lease lengths away; the agent
  // takes more only with two slots free (RefillBatch), so the first,
  // expired, waits in the queue.
  FakeAgent& agent = Connect("a", 4);
  const std::vector<int64_t> ids = Enqueue(4);
  clock_.Advance(kLedgerLeaseMs);
  EXPECT_THAT(ledger_->ExpireLeases().requeued, IsEmpty());
  EXPECT_EQ(ledger_->StateOf(ids[0]), State::kLeased);
  clock_.Advance(1);
  const LostLeases lost = ledger_->ExpireLeases();
  ASSERT_EQ(lost.requeued.size(), 1u);
  EXPECT_EQ(lost.requeued[0].trial_id, ids[0]);
  EXPECT_EQ(ledger_->StateOf(ids[0]), State::kQueued);
  EXPECT_EQ(ledger_->StateOf(ids[1]), State::kLeased);
  EXPECT_THAT(jobs_.requeued(), ElementsAre(ids[0]));
  EXPECT_EQ(Requeues(), 1);
  EXPECT_EQ(Abandoned(), 0);
  writer_->Flush();
  EXPECT_EQ(Row(ids[0]).state, tunefleet::v1::TRIAL_STATE_PENDING);
  EXPECT_EQ(Row(ids[0]).attempt, 1);

  // The agent's result comes late: the queued copy takes it.
  ASSERT_TRUE(Receive(Measured(ids[0], 800), agent).ok());
  EXPECT_EQ(ledger_->StateOf(ids[0]), State::kCommitting);
  writer_->Flush();
  EXPECT_EQ(ledger_->StateOf(ids[0]), State::kNone);
  EXPECT_EQ(scheduler_->QueuedCount(), 0u);
  EXPECT_EQ(Row(ids[0]).state, tunefleet::v1::TRIAL_STATE_DONE);
  ASSERT_EQ(jobs_.stored().size(), 1u);
  EXPECT_EQ(jobs_.stored()[0].trial_id, ids[0]);
}

TEST_F(LedgerTest, AgentGoneRequeuesEveryLeaseCountedOnce) {
  FakeAgent& lost_agent = Connect("a", 3);
  const std::vector<int64_t> ids = Enqueue(3);
  ASSERT_EQ(lost_agent.Received().size(), 3u);
  const LostLeases lost = ledger_->AgentGone(lost_agent.id());
  EXPECT_EQ(lost.requeued.size(), 3u);
  EXPECT_THAT(lost.abandoned, IsEmpty());
  for (int64_t id : ids) EXPECT_EQ(ledger_->StateOf(id), State::kQueued);
  EXPECT_THAT(jobs_.requeued(), ElementsAre(ids[0], ids[1], ids[2]));
  EXPECT_EQ(Requeues(), 3);
  // Gone once: a second notice loses nothing more.
  EXPECT_THAT(ledger_->AgentGone(lost_agent.id()).requeued, IsEmpty());
  EXPECT_EQ(Requeues(), 3);
  EXPECT_EQ(jobs_.requeued().size(), 3u);

  FakeAgent& next = Connect("b", 3);
  ASSERT_EQ(next.Received().size(), 3u);
  for (const auto& r : next.Received()) EXPECT_EQ(r.attempt(), 2u);
  for (int64_t id : ids) EXPECT_EQ(ledger_->StateOf(id), State::kLeased);
}

TEST_F(LedgerTest, RepeatedResultIsAcknowledgedWithoutASecondWrite) {
  FakeAgent& agent = Connect("a", 1);
  const std::vector<int64_t> ids = Enqueue(1);
  ASSERT_TRUE(Receive(Measured(ids[0], 1000), agent).ok());
  // The agent sends it again (a retry) while the first is committing.
  EXPECT_EQ(Receive(Measured(ids[0], 5000), agent).code(),
            absl::StatusCode::kAlreadyExists);
  writer_->Flush();
  EXPECT_EQ(ledger_->StateOf(ids[0]), State::kNone);
  ASSERT_EQ(jobs_.stored().size(), 1u);  // one write, one stored result
  EXPECT_DOUBLE_EQ(jobs_.stored()[0].time_ns, 1000);
  EXPECT_DOUBLE_EQ(Row(ids[0]).time_ns, 1000);
  // And again once acknowledged: no lease left to take it.
  EXPECT_EQ(Receive(Measured(ids[0], 5000), agent).code(),
            absl::StatusCode::kNotFound);
  writer_->Flush();
  EXPECT_EQ(jobs_.stored().size(), 1u);
  EXPECT_DOUBLE_EQ(Row(ids[0]).time_ns, 1000);
}

TEST_F(LedgerTest, FailedCommitIsNotAcknowledgedAndTheTrialIsLeasedAgain) {
  FakeAgent& agent = Connect("a", 1);
  const std::vector<int64_t> ids = Enqueue(1);
  // The store refuses to mark the trial done (a trigger, as a failing disk
  // or constraint would).
  absl::StatusOr<store::Database> db = store::Database::Open(db_.path());
  ASSERT_TRUE(db.ok()) << db.status();
  ASSERT_TRUE(db->Exec(absl::StrCat(R"sql(
        CREATE TRIGGER refuse_done BEFORE UPDATE OF state ON trials
        WHEN NEW.state = 'done' AND NEW.id = )sql",
                                    ids[0], R"sql(
        BEGIN SELECT RAISE(ABORT, 'refused by the test'); END;)sql"))
                  .ok());
  ASSERT_TRUE(Receive(Measured(ids[0], 1000), agent).ok());
  writer_->Flush();
  // Not stored, not acknowledged: the job saw nothing, the lease went back
  // to the queue as a lost one and its agent took it again.
  EXPECT_THAT(jobs_.stored(), IsEmpty());
  EXPECT_EQ(Row(ids[0]).state, tunefleet::v1::TRIAL_STATE_PENDING);
  EXPECT_EQ(Requeues(), 1);
  EXPECT_THAT(jobs_.requeued(), ElementsAre(ids[0]));
  ASSERT_EQ(agent.Received().size(), 2u);
  EXPECT_EQ(agent.Received()[1].trial_id(), ids[0]);
  EXPECT_EQ(agent.Received()[1].attempt(), 2u);
  EXPECT_EQ(ledger_->StateOf(ids[0]), State::kLeased);

  ASSERT_TRUE(db->Exec("DROP TRIGGER refuse_done").ok());
  ASSERT_TRUE(Receive(Measured(ids[0], 900), agent).ok());
  writer_->Flush();
  ASSERT_EQ(jobs_.stored().size(), 1u);
  EXPECT_EQ(Row(ids[0]).state, tunefleet::v1::TRIAL_STATE_DONE);
  EXPECT_EQ(Row(ids[0]).attempt, 2);
}

TEST_F(LedgerTest, AResultIsCheckedOnceWhereItEnters) {
  FakeAgent& agent = Connect("a", 2);
  const std::vector<int64_t> ids = Enqueue(2);
  // OK, but most rounds timed 0: its median (what is stored) is 0.
  Measurement zero_median;
  zero_median.set_trial_id(ids[0]);
  zero_median.set_error(Measurement::OK);
  for (double t : {0.0, 0.0, 500.0}) zero_median.add_times_ns(t);
  ASSERT_TRUE(Receive(zero_median, agent).ok());
  Measurement unknown_error = Measured(ids[1], 1000);
  unknown_error.set_error(Measurement::Error(77));
  ASSERT_TRUE(Receive(unknown_error, agent).ok());
  writer_->Flush();
  ASSERT_EQ(jobs_.stored().size(), 2u);
  for (const StoredResult& s : jobs_.stored()) {
    EXPECT_EQ(s.error, Measurement::RUNTIME_ERROR) << s.trial_id;
    EXPECT_EQ(s.time_ns, 0) << s.trial_id;
    EXPECT_EQ(Row(s.trial_id).error, Measurement::RUNTIME_ERROR);
  }
}

TEST_F(LedgerTest, ResultOfAnEndedJobOrAReferenceIsAcknowledgedUnwritten) {
  FakeAgent& agent = Connect("a", 2);
  const std::vector<int64_t> ids = Enqueue(1);
  scheduler_->Enqueue({Queued(-job_id_)});  // the job's reference run
  ASSERT_EQ(ledger_->StateOf(-job_id_), State::kLeased);
  ASSERT_TRUE(Receive(Measured(-job_id_, 3000), agent).ok());
  EXPECT_EQ(ledger_->StateOf(-job_id_), State::kNone);  // at once
  EXPECT_THAT(jobs_.references(),
              ElementsAre(std::make_pair(job_id_, -job_id_)));

  jobs_.SetLive(job_id_, false);
  ASSERT_TRUE(Receive(Measured(ids[0], 1000), agent).ok());
  writer_->Flush();
  EXPECT_EQ(ledger_->StateOf(ids[0]), State::kNone);
  EXPECT_EQ(scheduler_->LeaseCount(), 0u);
  EXPECT_THAT(jobs_.stored(), IsEmpty());
  EXPECT_EQ(Row(ids[0]).state, tunefleet::v1::TRIAL_STATE_PENDING);
}

TEST_F(LedgerTest, SourceUnknownResendsUnderTheSameLease) {
  FakeAgent& agent = Connect("a", 1);
  FakeAgent& other = Connect("b", 1);
  const std::vector<int64_t> ids = Enqueue(1);
  FakeAgent& holder = agent.Received().empty() ? other : agent;
  FakeAgent& stranger = agent.Received().empty() ? agent : other;
  ASSERT_EQ(holder.Received().size(), 1u);
  Measurement unknown;
  unknown.set_trial_id(ids[0]);
  unknown.set_error(Measurement::SOURCE_UNKNOWN);
  EXPECT_EQ(Receive(unknown, stranger).code(),
            absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(holder.Received().size(), 1u);
  ASSERT_TRUE(Receive(unknown, holder).ok());
  ASSERT_EQ(holder.Received().size(), 2u);
  EXPECT_EQ(holder.Received()[1].trial_id(), ids[0]);
  EXPECT_EQ(holder.Received()[1].attempt(), 1u);
  EXPECT_EQ(ledger_->StateOf(ids[0]), State::kLeased);
  writer_->Flush();
  EXPECT_THAT(jobs_.stored(), IsEmpty());
  EXPECT_EQ(Requeues(), 0);
}

}  // namespace
}  // namespace tunefleet::server
