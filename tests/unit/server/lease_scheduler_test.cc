// The scheduler with recording fake agents, a fake clock and a real store
// on a temporary file: dispatch rules, lease ends, lost and expired leases,
// silent agents and cancelled jobs.
#include "server/lease_scheduler.h"

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernels_templates/registry.h"
#include "store/store.h"
#include "tests/support/fake_clock.h"
#include "tests/support/small_job.h"
#include "tests/support/temp_store.h"
#include "tests/unit/server/fake_agent.h"

namespace tunefleet::server {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;
using tunefleet::testing::FakeAgent;

// A trial's timeout in its request; its lease lasts this plus
// kLeaseSlackMs per lease its agent holds.
constexpr int64_t kTimeoutMs = 1000;
constexpr int64_t kLeaseMs = kTimeoutMs + kLeaseSlackMs;

class SchedulerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_NE(store_, nullptr);
    scheduler_ = std::make_unique<LeaseScheduler>(store_, clock_);
  }

  void TearDown() override { scheduler_.reset(); }

  // `n` pending trial rows of a new job in the store, as queued trials of
  // `key` at `priority`.
  std::vector<QueuedTrial> Trials(int n, const std::string& key,
                                  int priority = 0) {
    absl::StatusOr<int64_t> job =
        store_->CreateJob(tunefleet::testing::SmallGemmJob(n, 0, key));
    EXPECT_TRUE(job.ok()) << job.status();
    std::vector<store::NewTrial> rows;
    for (int i = 0; i < n; ++i) {
      rows.push_back({static_cast<uint64_t>(i), "X=" + std::to_string(i)});
    }
    absl::StatusOr<std::vector<int64_t>> ids = store_->InsertTrials(*job, rows);
    EXPECT_TRUE(ids.ok()) << ids.status();
    std::vector<QueuedTrial> trials;
    for (int64_t id : *ids) {
      auto request = std::make_shared<tunefleet::v1::MeasureRequest>();
      request->set_trial_id(id);
      request->mutable_timing()->set_timeout_ms(kTimeoutMs);
      trials.push_back(
          QueuedTrial{id, *job, priority, key, std::move(request)});
      job_of_[id] = *job;
    }
    return trials;
  }

  // Connects a fake agent of `key` taking `capacity` requests at a time.
  FakeAgent& Connect(const std::string& id, const std::string& key,
                     uint32_t capacity, const std::string& driver = "") {
    agents_.push_back(
        std::make_unique<FakeAgent>(id, key, capacity, clock_.NowMs(), driver));
    scheduler_->AddAgent(agents_.back()->session());
    return *agents_.back();
  }

  // The trial ids an agent was sent, in order.
  static std::vector<int64_t> Ids(const FakeAgent& agent) {
    std::vector<int64_t> ids;
    for (const auto& r : agent.Received()) ids.push_back(r.trial_id());
    return ids;
  }
  static std::vector<int64_t> Ids(const std::vector<QueuedTrial>& trials) {
    std::vector<int64_t> ids;
    for (const QueuedTrial& t : trials) ids.push_back(t.trial_id);
    return ids;
  }

  // The stored row of a trial made by Trials().
  store::Trial Row(int64_t trial_id) {
    absl::StatusOr<std::vector<store::Trial>> rows =
        store_->JobTrials(job_of_.at(trial_id));
    EXPECT_TRUE(rows.ok()) << rows.status();
    for (const store::Trial& t : *rows) {
      if (t.id == trial_id) return t;
    }
    ADD_FAILURE() << "no row for trial " << trial_id;
    return {};
  }

  testing::TempStore db_{"lease_scheduler_test"};
  store::Store* const store_ = db_.store();
  testing::FakeClock clock_;
  std::vector<std::unique_ptr<FakeAgent>> agents_;
  std::unique_ptr<LeaseScheduler> scheduler_;
  std::map<int64_t, int64_t> job_of_;  // trial id -> job id
};

TEST_F(SchedulerTest, DispatchesTrialsOnlyToAgentsOfTheirDeviceKey) {
  FakeAgent& a = Connect("a", "key-1", 4);
  FakeAgent& b = Connect("b", "key-2", 4);
  const std::vector<QueuedTrial> one = Trials(2, "key-1");
  const std::vector<QueuedTrial> two = Trials(1, "key-2");
  const std::vector<QueuedTrial> three = Trials(1, "key-3");
  scheduler_->Enqueue(one);
  scheduler_->Enqueue(two);
  scheduler_->Enqueue(three);

  EXPECT_EQ(Ids(a), Ids(one));
  EXPECT_EQ(Ids(b), Ids(two));
  EXPECT_EQ(scheduler_->Capacity("key-1"), 4u);
  EXPECT_EQ(scheduler_->Capacity("key-3"), 0u);
  // No agent of key-3 yet: its trial waits for one.
  EXPECT_EQ(Row(three[0].trial_id).state, tunefleet::v1::TRIAL_STATE_PENDING);
  FakeAgent& c = Connect("c", "key-3", 1);
  EXPECT_EQ(Ids(c), Ids(three));
  EXPECT_EQ(Ids(a), Ids(one));
  EXPECT_EQ(Ids(b), Ids(two));
}

TEST_F(SchedulerTest, FillsAnAgentUpToItsCapacityWithLeasesInMemory) {
  FakeAgent& a = Connect("a", "key", 2);
  const std::vector<QueuedTrial> trials = Trials(5, "key");
  scheduler_->Enqueue(trials);

  ASSERT_EQ(Ids(a),
            (std::vector<int64_t>{trials[0].trial_id, trials[1].trial_id}));
  for (const auto& r : a.Received()) EXPECT_EQ(r.attempt(), 1u);
  EXPECT_EQ(scheduler_->LeasedTrials(trials[0].job_id),
            (std::vector<int64_t>{trials[0].trial_id, trials[1].trial_id}));
  EXPECT_EQ(scheduler_->LeasesByAgent().at("a"), 2u);
  // The rows stay pending: the lease goes to the store with the result.
  for (int i = 0; i < 5; ++i) {
    const store::Trial row = Row(trials[i].trial_id);
    EXPECT_EQ(row.state, tunefleet::v1::TRIAL_STATE_PENDING) << i;
    EXPECT_EQ(row.attempt, 0) << i;
    std::optional<ResultOf> of = scheduler_->ResultJob(trials[i].trial_id);
    ASSERT_TRUE(of.has_value()) << i;  // leased or queued
    EXPECT_EQ(of->job_id, trials[i].job_id);
    EXPECT_EQ(of->lease.agent, i < 2 ? "a-host" : "") << i;
    EXPECT_EQ(of->lease.attempt, i < 2 ? 1 : 0) << i;
    EXPECT_EQ(of->lease.leased_ms, i < 2 ? clock_.NowMs() : 0) << i;
  }
}

TEST_F(SchedulerTest, AnAgentOfLargeCapacityIsRefilledHalfAtATime) {
  EXPECT_EQ(RefillBatch(1), 1u);
  EXPECT_EQ(RefillBatch(3), 1u);
  EXPECT_EQ(RefillBatch(4), 2u);
  EXPECT_EQ(RefillBatch(16), 8u);
  FakeAgent& a = Connect("a", "key", 16);
  FakeAgent& b = Connect("b", "key", 16);
  const std::vector<QueuedTrial> trials = Trials(44, "key");
  scheduler_->Enqueue(trials);
  // Eight at a time to the least loaded, until both are full: one message
  // each.
  ASSERT_EQ(a.Received().size() + b.Received().size(), 32u);
  EXPECT_EQ(a.messages(), 1);
  EXPECT_EQ(b.messages(), 1);

  // Seven slots free: not yet.
  const std::vector<int64_t> held = Ids(a);
  for (int i = 0; i < 7; ++i) {
    ASSERT_TRUE(scheduler_->EndLease(held[i]).has_value());
  }
  EXPECT_EQ(a.messages(), 1);
  // The eighth: eight queued trials, oldest first, in one message.
  ASSERT_TRUE(scheduler_->EndLease(held[7]).has_value());
  EXPECT_EQ(a.messages(), 2);
  const std::vector<int64_t> now = Ids(a);
  ASSERT_EQ(now.size(), 24u);
  const std::vector<int64_t> refill(now.begin() + 16, now.end());
  // The oldest eight of those neither agent held.
  const std::vector<int64_t> of_b = Ids(b);
  std::vector<int64_t> queued;
  for (const QueuedTrial& t : trials) {
    if (std::find(held.begin(), held.end(), t.trial_id) == held.end() &&
        std::find(of_b.begin(), of_b.end(), t.trial_id) == of_b.end()) {
      queued.push_back(t.trial_id);
    }
  }
  ASSERT_EQ(queued.size(), 12u);
  EXPECT_EQ(refill, std::vector<int64_t>(queued.begin(), queued.begin() + 8));
  EXPECT_EQ(scheduler_->QueuedCount(), 4u);
}

TEST_F(SchedulerTest, WithWriteLeasesEachLeaseIsWrittenToItsRow) {
  scheduler_ = std::make_unique<LeaseScheduler>(store_, clock_, nullptr,
                                                /*write_leases=*/true);
  FakeAgent& a = Connect("a", "key", 2);
  const std::vector<QueuedTrial> trials = Trials(3, "key");
  scheduler_->Enqueue(trials);

  ASSERT_EQ(Ids(a),
            (std::vector<int64_t>{trials[0].trial_id, trials[1].trial_id}));
  for (int i = 0; i < 3; ++i) {
    const store::Trial row = Row(trials[i].trial_id);
    EXPECT_EQ(row.state, i < 2 ? tunefleet::v1::TRIAL_STATE_LEASED
                               : tunefleet::v1::TRIAL_STATE_PENDING)
        << i;
    EXPECT_EQ(row.attempt, i < 2 ? 1 : 0) << i;
  }
}

TEST_F(SchedulerTest, HighestPriorityFirstThenOldestFirst) {
  const std::vector<QueuedTrial> low = Trials(2, "key", 0);
  const std::vector<QueuedTrial> high = Trials(1, "key", 5);
  const std::vector<QueuedTrial> middle = Trials(1, "key", 1);
  scheduler_->Enqueue(low);
  scheduler_->Enqueue(high);
  scheduler_->Enqueue(middle);
  FakeAgent& a = Connect("a", "key", 1);
  for (int answered = 0; answered < 3; ++answered) {
    ASSERT_TRUE(scheduler_->EndLease(Ids(a).back()).has_value());
  }

  EXPECT_THAT(Ids(a), ElementsAre(high[0].trial_id, middle[0].trial_id,
                                  low[0].trial_id, low[1].trial_id));
}

TEST_F(SchedulerTest, LeastLoadedAgentFirst) {
  FakeAgent& a = Connect("a", "key", 3);
  const std::vector<QueuedTrial> first = Trials(2, "key");
  scheduler_->Enqueue(first);
  ASSERT_EQ(Ids(a), Ids(first));

  // b holds nothing, a two: both of the next go to b.
  FakeAgent& b = Connect("b", "key", 3);
  const std::vector<QueuedTrial> second = Trials(2, "key");
  scheduler_->Enqueue(second);
  EXPECT_EQ(Ids(b), Ids(second));
  EXPECT_EQ(Ids(a), Ids(first));

  // a's leases end: a is now the less loaded one.
  ASSERT_TRUE(scheduler_->EndLease(first[0].trial_id).has_value());
  ASSERT_TRUE(scheduler_->EndLease(first[1].trial_id).has_value());
  const std::vector<QueuedTrial> third = Trials(1, "key");
  scheduler_->Enqueue(third);
  EXPECT_EQ(Ids(a).back(), third[0].trial_id);
  EXPECT_EQ(Ids(b), Ids(second));
}

// A re-validation job's trials (docs/DRIVER_DRIFT.md) go only to agents
// reporting their driver; the key's other trials to any agent.
TEST_F(SchedulerTest, TrialsBoundToADriverGoOnlyToAgentsOfThatDriver) {
  FakeAgent& old_driver = Connect("a", "key", 4, "1.0");
  std::vector<QueuedTrial> bound = Trials(3, "key", /*priority=*/1);
  for (QueuedTrial& t : bound) t.driver_version = "2.0";
  const std::vector<QueuedTrial> any = Trials(2, "key");
  scheduler_->Enqueue(bound);
  scheduler_->Enqueue(any);
  // The bound trials wait (ahead of the others) for an agent of 2.0.
  EXPECT_EQ(Ids(old_driver), Ids(any));
  FakeAgent& new_driver = Connect("b", "key", 2, "2.0");
  EXPECT_EQ(Ids(new_driver),
            (std::vector<int64_t>{bound[0].trial_id, bound[1].trial_id}));
  EXPECT_EQ(Ids(old_driver), Ids(any));
  // The old driver's agent has room, the new one's not: the last waits.
  ASSERT_TRUE(scheduler_->EndLease(any[0].trial_id).has_value());
  EXPECT_EQ(Ids(old_driver), Ids(any));
  ASSERT_TRUE(scheduler_->EndLease(bound[0].trial_id).has_value());
  EXPECT_EQ(Ids(new_driver), Ids(bound));
}

TEST_F(SchedulerTest, EndLeaseReturnsTheLeaseAndRefillsTheAgent) {
  FakeAgent& a = Connect("a", "key", 1);
  const std::vector<QueuedTrial> trials = Trials(2, "key");
  scheduler_->Enqueue(trials);
  ASSERT_EQ(Ids(a), std::vector<int64_t>{trials[0].trial_id});

  std::optional<Lease> lease = scheduler_->EndLease(trials[0].trial_id);
  ASSERT_TRUE(lease.has_value());
  EXPECT_EQ(lease->agent_id, "a");
  EXPECT_EQ(lease->trial.trial_id, trials[0].trial_id);
  EXPECT_EQ(lease->trial.job_id, trials[0].job_id);
  EXPECT_EQ(lease->trial.attempt, 1);
  EXPECT_EQ(lease->deadline_ms, clock_.NowMs() + kLeaseMs);
  EXPECT_EQ(Ids(a), Ids(trials));
  EXPECT_EQ(scheduler_->LeasedTrials(trials[0].job_id),
            std::vector<int64_t>{trials[1].trial_id});
}

TEST_F(SchedulerTest, StaleOrRepeatedResultEndsNoLease) {
  FakeAgent& a = Connect("a", "key", 1);
  const std::vector<QueuedTrial> trials = Trials(1, "key");
  scheduler_->Enqueue(trials);
  ASSERT_EQ(Ids(a), Ids(trials));

  EXPECT_TRUE(scheduler_->EndLease(trials[0].trial_id).has_value());
  EXPECT_FALSE(scheduler_->EndLease(trials[0].trial_id).has_value());
  EXPECT_FALSE(scheduler_->EndLease(trials[0].trial_id + 1000).has_value());
}

TEST_F(SchedulerTest, LateResultOfARequeuedTrialTakesItsQueuedCopy) {
  Connect("a", "key", 1);
  const std::vector<QueuedTrial> trials = Trials(1, "key");
  scheduler_->Enqueue(trials);
  ASSERT_EQ(scheduler_->RemoveAgent("a").requeued.size(), 1u);

  std::optional<Lease> late = scheduler_->EndLease(trials[0].trial_id);
  ASSERT_TRUE(late.has_value());
  EXPECT_EQ(late->trial.trial_id, trials[0].trial_id);
  EXPECT_EQ(late->agent_id, "");
  // Nothing is left to hand out.
  FakeAgent& b = Connect("b", "key", 1);
  EXPECT_THAT(Ids(b), IsEmpty());
}

TEST_F(SchedulerTest, RemoveAgentRequeuesItsLeasesAtTheFront) {
  FakeAgent& a = Connect("a", "key", 1);
  const std::vector<QueuedTrial> trials = Trials(2, "key");
  scheduler_->Enqueue(trials);
  ASSERT_EQ(Ids(a), std::vector<int64_t>{trials[0].trial_id});

  const LostLeases lost = scheduler_->RemoveAgent("a");
  EXPECT_EQ(Ids(lost.requeued), std::vector<int64_t>{trials[0].trial_id});
  EXPECT_THAT(lost.abandoned, IsEmpty());
  EXPECT_EQ(scheduler_->Capacity("key"), 0u);
  // The session is closed: nothing more reaches a.
  EXPECT_FALSE(a.session()->Send(tunefleet::v1::ServerMessage()));
  EXPECT_EQ(a.messages(), 1);
  // Pending in the store, its lost lease counted there (a restarted
  // server goes on from that attempt).
  store::Trial row = Row(trials[0].trial_id);
  EXPECT_EQ(row.state, tunefleet::v1::TRIAL_STATE_PENDING);
  EXPECT_EQ(row.attempt, 1);

  // The lost trial goes first, before the one that was waiting.
  FakeAgent& b = Connect("b", "key", 1);
  ASSERT_EQ(Ids(b), std::vector<int64_t>{trials[0].trial_id});
  EXPECT_EQ(b.Received()[0].attempt(), 2u);
  std::optional<ResultOf> of = scheduler_->ResultJob(trials[0].trial_id);
  ASSERT_TRUE(of.has_value());
  EXPECT_EQ(of->lease.agent, "b-host");
  EXPECT_EQ(of->lease.attempt, 2);
  EXPECT_THAT(scheduler_->RemoveAgent("unknown").requeued, IsEmpty());
}

// A job's in-flight list holds its own leased trials only, in id order,
// and follows leases ended, lost and handed out again.
TEST_F(SchedulerTest, LeasedTrialsAreEachJobsOwn) {
  FakeAgent& a = Connect("a", "key", 4);
  FakeAgent& b = Connect("b", "key", 4);
  const std::vector<QueuedTrial> first = Trials(3, "key");
  const std::vector<QueuedTrial> second = Trials(3, "key");
  scheduler_->Enqueue(first);
  scheduler_->Enqueue(second);
  const int64_t job1 = first[0].job_id, job2 = second[0].job_id;
  EXPECT_EQ(scheduler_->LeasedTrials(job1), Ids(first));
  EXPECT_EQ(scheduler_->LeasedTrials(job2), Ids(second));
  EXPECT_TRUE(scheduler_->LeasedTrials(job2 + 100).empty());

  ASSERT_TRUE(scheduler_->EndLease(first[1].trial_id).has_value());
  EXPECT_EQ(scheduler_->LeasedTrials(job1),
            (std::vector<int64_t>{first[0].trial_id, first[2].trial_id}));
  // a's leases are lost: back in the queue, or to b where it has room.
  scheduler_->RemoveAgent("a");
  const std::vector<int64_t> of1 = scheduler_->LeasedTrials(job1);
  const std::vector<int64_t> of2 = scheduler_->LeasedTrials(job2);
  EXPECT_TRUE(std::is_sorted(of1.begin(), of1.end()));
  EXPECT_TRUE(std::is_sorted(of2.begin(), of2.end()));
  const std::vector<int64_t> ids1 = Ids(first), ids2 = Ids(second);
  std::set<int64_t> leased;
  for (int64_t id : of1) {
    EXPECT_NE(std::find(ids1.begin(), ids1.end(), id), ids1.end());
    leased.insert(id);
  }
  for (int64_t id : of2) {
    EXPECT_NE(std::find(ids2.begin(), ids2.end(), id), ids2.end());
    leased.insert(id);
  }
  // Exactly what b holds now; the rest of the six (one ended) queued.
  const std::vector<int64_t> held_by_b = Ids(b);
  EXPECT_EQ(leased, std::set<int64_t>(held_by_b.begin(), held_by_b.end()));
  EXPECT_EQ(scheduler_->LeaseCount(), leased.size());
  EXPECT_EQ(leased.size() + scheduler_->QueuedCount(), 5u);
  EXPECT_FALSE(Ids(a).empty());
}

TEST_F(SchedulerTest, TrialLostMaxAttemptsTimesIsAbandoned) {
  const std::vector<QueuedTrial> trials = Trials(1, "key");
  scheduler_->Enqueue(trials);
  for (int attempt = 1; attempt <= kMaxAttempts; ++attempt) {
    const std::string id = "agent-" + std::to_string(attempt);
    FakeAgent& agent = Connect(id, "key", 1);
    ASSERT_EQ(Ids(agent), Ids(trials)) << attempt;
    EXPECT_EQ(agent.Received()[0].attempt(), static_cast<uint32_t>(attempt));

    const LostLeases lost = scheduler_->RemoveAgent(id);
    if (attempt < kMaxAttempts) {
      EXPECT_EQ(Ids(lost.requeued), Ids(trials)) << attempt;
      EXPECT_THAT(lost.abandoned, IsEmpty()) << attempt;
    } else {
      EXPECT_THAT(lost.requeued, IsEmpty());
      ASSERT_EQ(Ids(lost.abandoned), Ids(trials));
      EXPECT_EQ(lost.abandoned[0].attempt, kMaxAttempts);
    }
  }
  FakeAgent& last = Connect("last", "key", 1);
  EXPECT_THAT(Ids(last), IsEmpty());
  EXPECT_FALSE(scheduler_->EndLease(trials[0].trial_id).has_value());
}

TEST_F(SchedulerTest, ExpireLeasesRequeuesOnlyLeasesPastTheirDeadline) {
  const int64_t start = clock_.NowMs();
  FakeAgent& a = Connect("a", "key", 2);
  const std::vector<QueuedTrial> trials = Trials(2, "key");
  scheduler_->Enqueue(trials);
  ASSERT_EQ(Ids(a), Ids(trials));

  // The first lease's deadline: one trial's time. The second waits behind
  // the first: two.
  clock_.Set(start + kLeaseMs);
  EXPECT_THAT(scheduler_->ExpireLeases().requeued, IsEmpty());
  EXPECT_EQ(Ids(a), Ids(trials));

  clock_.Set(start + kLeaseMs + 1);
  LostLeases lost = scheduler_->ExpireLeases();
  EXPECT_EQ(Ids(lost.requeued), std::vector<int64_t>{trials[0].trial_id});
  EXPECT_THAT(lost.abandoned, IsEmpty());
  // Back at the front and handed out again (a has a free slot), as a
  // second attempt.
  ASSERT_EQ(Ids(a),
            (std::vector<int64_t>{trials[0].trial_id, trials[1].trial_id,
                                  trials[0].trial_id}));
  EXPECT_EQ(a.Received()[2].attempt(), 2u);
  EXPECT_EQ(scheduler_->ResultJob(trials[0].trial_id)->lease.attempt, 2);
  EXPECT_EQ(Row(trials[0].trial_id).attempt, 1);  // the lost lease
  EXPECT_EQ(Row(trials[0].trial_id).state, tunefleet::v1::TRIAL_STATE_PENDING);

  clock_.Set(start + 2 * kLeaseMs);
  EXPECT_THAT(scheduler_->ExpireLeases().requeued, IsEmpty());
  clock_.Set(start + 2 * kLeaseMs + 1);
  lost = scheduler_->ExpireLeases();
  EXPECT_EQ(Ids(lost.requeued), std::vector<int64_t>{trials[1].trial_id});
}

TEST_F(SchedulerTest, SilentAgentsAreThoseNotHeardFromInTime) {
  FakeAgent& a = Connect("a", "key", 1);
  FakeAgent& b = Connect("b", "key", 1);
  clock_.Advance(10000);
  b.session()->Touch(clock_.NowMs());

  std::vector<std::shared_ptr<AgentSession>> silent =
      scheduler_->SilentAgents(5000);
  ASSERT_EQ(silent.size(), 1u);
  EXPECT_EQ(silent[0]->id(), a.id());
  EXPECT_THAT(scheduler_->SilentAgents(10000), IsEmpty());
  // Disconnect reaches the channel; the agent's call then removes it.
  silent[0]->Disconnect();
  EXPECT_TRUE(a.cancelled());
  EXPECT_FALSE(b.cancelled());
}

TEST_F(SchedulerTest, CancelJobDropsQueuedTrialsButLeavesLeasedOnes) {
  FakeAgent& a = Connect("a", "key", 1);
  const std::vector<QueuedTrial> cancelled = Trials(3, "key");
  const std::vector<QueuedTrial> other = Trials(1, "key");
  scheduler_->Enqueue(cancelled);
  scheduler_->Enqueue(other);
  ASSERT_EQ(Ids(a), std::vector<int64_t>{cancelled[0].trial_id});

  scheduler_->CancelJob(cancelled[0].job_id);
  // The leased trial still ends normally; the agent then gets the other
  // job's trial, not the cancelled job's.
  EXPECT_TRUE(scheduler_->EndLease(cancelled[0].trial_id).has_value());
  EXPECT_EQ(Ids(a),
            (std::vector<int64_t>{cancelled[0].trial_id, other[0].trial_id}));
  EXPECT_FALSE(scheduler_->EndLease(cancelled[1].trial_id).has_value());
  EXPECT_FALSE(scheduler_->EndLease(cancelled[2].trial_id).has_value());
}

}  // namespace
}  // namespace tunefleet::server
