// Jobs run by a JobManager on a real scheduler and a real store on a
// temporary file, measured by fake agents that answer the requests they
// receive, handed to a TrialLedger as AgentServiceImpl hands an agent's
// results (TrialLedger::Receive: stored, then acknowledged). Time is a fake
// clock; the tests wait for conditions with generous real-time limits, never
// for fixed durations.
#include "server/job_manager.h"

#include <unistd.h>

#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/lease_scheduler.h"
#include "store/store.h"
#include "tests/support/fake_clock.h"
#include "tests/support/temp_store.h"
#include "tests/support/test_device.h"
#include "tests/unit/server/fake_agent.h"
#include "tests/unit/server/job_fixture.h"
#include "trial/trial_request.h"

namespace tunefleet::server {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;

TEST_F(JobManagerTest, JobRunsToItsBudgetAndItsTalliesAgree) {
  constexpr uint32_t kBudget = 12;
  FakeAgent& agent = Connect("agent-1", 3);
  Answerer& answerer = AnswerAll(agent, MixedAnswer);
  tunefleet::v1::SubmitJobRequest request = Request(kBudget);
  request.set_skip_reference(false);
  std::shared_ptr<Job> job = Submit(request);
  ASSERT_NE(job, nullptr);

  const JobProgress done = WaitFor(*job, Ended);
  ASSERT_EQ(done.state(), tunefleet::v1::JOB_STATE_DONE) << done.message();

  // What the agent was asked and answered: the reference (first, by its
  // priority) and exactly the budget's trials, each once.
  const std::map<int64_t, Measurement> answered = answerer.answered();
  ASSERT_EQ(agent.Received().size(), kBudget + 1);
  EXPECT_EQ(agent.Received()[0].trial_id(), job->reference_trial_id());
  std::map<std::string, uint32_t> errors;
  int64_t best_id = 0;
  double best_ns = 0;
  for (const auto& [id, m] : answered) {
    if (id == job->reference_trial_id()) continue;
    ++errors[Measurement::Error_Name(m.error())];
    const double ns = trial::MedianNs(m.times_ns());
    if (m.error() == Measurement::OK && (best_id == 0 || ns < best_ns)) {
      best_id = id;
      best_ns = ns;
    }
  }
  ASSERT_EQ(answered.size(), kBudget + 1);
  ASSERT_NE(best_id, 0);

  // The live progress.
  EXPECT_EQ(done.trials_done(), kBudget);
  EXPECT_EQ(done.trials_total(), kBudget);
  EXPECT_EQ(done.trials_requeued(), 0u);
  using ErrorCounts = std::map<std::string, uint32_t>;
  EXPECT_EQ(ErrorCounts(done.errors().begin(), done.errors().end()), errors);
  EXPECT_EQ(done.best().trial_id(), best_id);
  EXPECT_DOUBLE_EQ(done.best().time_ns(), best_ns);
  EXPECT_DOUBLE_EQ(
      done.reference_time_ns(),
      trial::MedianNs(answered.at(job->reference_trial_id()).times_ns()));

  // The store: the job, its tally and best record, one done row a trial.
  const store::StoredJob row = StoredRow(job->id());
  EXPECT_EQ(row.state, tunefleet::v1::JOB_STATE_DONE);
  EXPECT_DOUBLE_EQ(row.reference_ns, done.reference_time_ns());
  absl::StatusOr<store::JobTally> tally = store_->TallyJob(job->id());
  ASSERT_TRUE(tally.ok()) << tally.status();
  EXPECT_EQ(tally->done, kBudget);
  EXPECT_EQ(tally->errors, errors);
  ASSERT_TRUE(tally->best.has_value());
  EXPECT_EQ(tally->best->trial_id(), best_id);
  EXPECT_DOUBLE_EQ(tally->best->time_ns(), best_ns);
  const std::vector<store::Trial> rows = Rows(job->id());
  ASSERT_EQ(rows.size(), kBudget);
  for (const store::Trial& t : rows) {
    EXPECT_EQ(t.state, tunefleet::v1::TRIAL_STATE_DONE) << t.id;
    EXPECT_EQ(t.attempt, 1) << t.id;
    EXPECT_EQ(t.error, answered.at(t.id).error()) << t.id;
  }
  // What a later server would report from the store agrees too.
  absl::StatusOr<JobProgress> stored = progress::StoredProgress(*store_, row);
  ASSERT_TRUE(stored.ok()) << stored.status();
  EXPECT_EQ(stored->trials_done(), done.trials_done());
  EXPECT_EQ(stored->best().trial_id(), best_id);
}

TEST_F(JobManagerTest, CancelEndsTheJobCancelled) {
  FakeAgent& agent = Connect("agent-1", 2);
  std::shared_ptr<Job> job = Submit(Request(50));
  ASSERT_NE(job, nullptr);
  NextRequest(agent);
  NextRequest(agent);

  absl::StatusOr<JobProgress> cancelled = jobs_->Cancel(job->id());
  ASSERT_TRUE(cancelled.ok()) << cancelled.status();
  EXPECT_EQ(cancelled->state(), tunefleet::v1::JOB_STATE_CANCELLED);
  EXPECT_EQ(cancelled->trials_done(), 0u);
  EXPECT_EQ(job->Progress().state(), tunefleet::v1::JOB_STATE_CANCELLED);
  EXPECT_EQ(StoredRow(job->id()).state, tunefleet::v1::JOB_STATE_CANCELLED);

  absl::StatusOr<JobProgress> again = jobs_->Cancel(job->id());
  EXPECT_EQ(again.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(again.status().message(), HasSubstr("already ended"));
  EXPECT_EQ(jobs_->Cancel(job->id() + 100).status().code(),
            absl::StatusCode::kNotFound);
}

TEST_F(JobManagerTest, JobEndsWhenTheClockPassesItsDeadline) {
  FakeAgent& agent = Connect("agent-1", 1);
  tunefleet::v1::SubmitJobRequest request = Request(100);
  request.set_deadline_s(60);
  std::shared_ptr<Job> job = Submit(request);
  ASSERT_NE(job, nullptr);

  // A millisecond before the deadline the job goes on: after the result
  // it sends the next trial.
  const MeasureRequest first = NextRequest(agent);
  clock_.Advance(60 * 1000 - 1);
  Deliver(*ledger_, first, Ok(2000));
  const MeasureRequest second = NextRequest(agent);
  EXPECT_NE(second.trial_id(), first.trial_id());
  EXPECT_EQ(job->Progress().state(), tunefleet::v1::JOB_STATE_RUNNING);
  EXPECT_EQ(job->Progress().trials_done(), 1u);

  clock_.Advance(1);
  const JobProgress done = WaitFor(*job, Ended);
  EXPECT_EQ(done.state(), tunefleet::v1::JOB_STATE_DONE);
  EXPECT_THAT(done.message(), HasSubstr("deadline reached"));
  EXPECT_EQ(done.trials_done(), 1u);
  const store::StoredJob row = StoredRow(job->id());
  EXPECT_EQ(row.state, tunefleet::v1::JOB_STATE_DONE);
  EXPECT_THAT(row.message, HasSubstr("deadline reached"));
  EXPECT_EQ(agent.pending(), 0u);  // nothing more was sent
}

TEST_F(JobManagerTest, JobStopsEarlyWithoutImprovement) {
  FakeAgent& agent = Connect("agent-1", 1);
  // The first trial is the fastest; none after it improves.
  int answers = 0;
  AnswerAll(agent, [&answers](const MeasureRequest&) {
    return Ok(answers++ == 0 ? 100.0 : 1000.0 + answers);
  });
  tunefleet::v1::SubmitJobRequest request = Request(50);
  request.set_early_stop(3);
  std::shared_ptr<Job> job = Submit(request);
  ASSERT_NE(job, nullptr);

  const JobProgress done = WaitFor(*job, Ended);
  EXPECT_EQ(done.state(), tunefleet::v1::JOB_STATE_DONE);
  // One agent taking one trial at a time: exactly the first and three
  // without improvement.
  EXPECT_EQ(done.trials_done(), 4u);
  EXPECT_THAT(done.message(), HasSubstr("stopped early"));
  EXPECT_DOUBLE_EQ(done.best().time_ns(), 100.0);
  EXPECT_EQ(StoredRow(job->id()).state, tunefleet::v1::JOB_STATE_DONE);
  EXPECT_EQ(Rows(job->id()).size(), 4u);
}

TEST_F(JobManagerTest, LeasesOfALostAgentAreRequeuedAndCounted) {
  constexpr uint32_t kBudget = 6;
  FakeAgent& lost_agent = Connect("agent-lost", 2);
  std::shared_ptr<Job> job = Submit(Request(kBudget));
  ASSERT_NE(job, nullptr);
  const MeasureRequest first = NextRequest(lost_agent);
  const MeasureRequest second = NextRequest(lost_agent);

  // The agent goes away mid-job, as when its stream ends.
  const LostLeases lost = ledger_->AgentGone(lost_agent.id());
  EXPECT_EQ(lost.requeued.size(), 2u);
  EXPECT_THAT(lost.abandoned, IsEmpty());
  EXPECT_EQ(job->Progress().trials_requeued(), 2u);

  FakeAgent& agent = Connect("agent-2", 2);
  AnswerAll(agent, MixedAnswer);
  const JobProgress done = WaitFor(*job, Ended);
  ASSERT_EQ(done.state(), tunefleet::v1::JOB_STATE_DONE) << done.message();
  EXPECT_EQ(done.trials_done(), kBudget);
  EXPECT_EQ(done.trials_requeued(), 2u);

  // The lost trials were measured again under their ids, as second
  // attempts; no other trial was sent twice.
  std::map<int64_t, uint32_t> attempts;
  for (const MeasureRequest& r : agent.Received()) {
    EXPECT_EQ(attempts.count(r.trial_id()), 0u) << r.trial_id();
    attempts[r.trial_id()] = r.attempt();
  }
  EXPECT_EQ(attempts.size(), kBudget);
  EXPECT_EQ(attempts[first.trial_id()], 2u);
  EXPECT_EQ(attempts[second.trial_id()], 2u);
  EXPECT_EQ(lost_agent.Received().size(), 2u);
  const std::vector<store::Trial> rows = Rows(job->id());
  ASSERT_EQ(rows.size(), kBudget);
  for (const store::Trial& t : rows) {
    EXPECT_EQ(t.state, tunefleet::v1::TRIAL_STATE_DONE) << t.id;
  }
}

TEST_F(JobManagerTest, TrialLostMaxAttemptsTimesEndsAsDeviceLost) {
  std::shared_ptr<Job> job = Submit(Request(1));
  ASSERT_NE(job, nullptr);
  int64_t trial_id = 0;
  for (int attempt = 1; attempt <= kMaxAttempts; ++attempt) {
    FakeAgent& agent = Connect(absl::StrCat("agent-", attempt), 1);
    const MeasureRequest r = NextRequest(agent);
    if (attempt == 1) trial_id = r.trial_id();
    EXPECT_EQ(r.trial_id(), trial_id);
    EXPECT_EQ(r.attempt(), static_cast<uint32_t>(attempt));
    const LostLeases lost = ledger_->AgentGone(agent.id());
    EXPECT_EQ(lost.abandoned.size(), attempt == kMaxAttempts ? 1u : 0u);
  }

  const JobProgress done = WaitFor(*job, Ended);
  EXPECT_EQ(done.state(), tunefleet::v1::JOB_STATE_DONE);
  EXPECT_EQ(done.trials_done(), 1u);
  EXPECT_EQ(done.trials_requeued(), static_cast<uint32_t>(kMaxAttempts - 1));
  ASSERT_EQ(done.errors().count("DEVICE_LOST"), 1u);
  EXPECT_EQ(done.errors().at("DEVICE_LOST"), 1u);
  EXPECT_FALSE(done.has_best());
  const std::vector<store::Trial> rows = Rows(job->id());
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].state, tunefleet::v1::TRIAL_STATE_DONE);
  EXPECT_EQ(rows[0].error, Measurement::DEVICE_LOST);
}

TEST_F(JobManagerTest, ShutdownLeavesTheJobForTheNextManagerToResume) {
  constexpr uint32_t kBudget = 6;
  FakeAgent& first_agent = Connect("agent-1", 1);
  std::shared_ptr<Job> job = Submit(Request(kBudget));
  ASSERT_NE(job, nullptr);
  const int64_t id = job->id();
  // Three trials measured (the job has no reference run), the fourth
  // leased when the server stops.
  const std::set<int64_t> measured = MeasureTrials(first_agent, 3, MixedAnswer);
  const MeasureRequest leased = NextRequest(first_agent);
  EXPECT_EQ(measured.count(leased.trial_id()), 0u);
  EXPECT_EQ(
      WaitFor(*job, [](const JobProgress& p) { return p.trials_done() == 3; })
          .trials_done(),
      3u);

  jobs_->Shutdown();
  job.reset();
  EXPECT_EQ(jobs_->Find(id), nullptr);
  EXPECT_EQ(StoredRow(id).state, tunefleet::v1::JOB_STATE_RUNNING);
  absl::StatusOr<std::map<tunefleet::v1::TrialState, int64_t>> states =
      store_->TrialStates(id);
  ASSERT_TRUE(states.ok()) << states.status();
  EXPECT_EQ((*states)[tunefleet::v1::TRIAL_STATE_DONE], 3);
  // The leased one is pending in the store (leases live in memory).
  EXPECT_EQ((*states)[tunefleet::v1::TRIAL_STATE_PENDING], 1);
  EXPECT_EQ((*states)[tunefleet::v1::TRIAL_STATE_LEASED], 0);

  // A new server on the same store: scheduler, manager and agent.
  RestartedServer second(*this, MixedAnswer);
  ASSERT_NO_FATAL_FAILURE(second.Resume(1));
  const JobProgress done = second.AwaitEnd(id);
  ASSERT_EQ(done.state(), tunefleet::v1::JOB_STATE_DONE) << done.message();
  EXPECT_EQ(done.trials_done(), kBudget);

  // The finished trials were not measured again; the leased one was, as
  // its second attempt; the rest were new.
  std::set<int64_t> remeasured;
  for (const MeasureRequest& r : second.agent.Received()) {
    EXPECT_EQ(measured.count(r.trial_id()), 0u) << r.trial_id();
    EXPECT_TRUE(remeasured.insert(r.trial_id()).second) << r.trial_id();
    if (r.trial_id() == leased.trial_id()) {
      EXPECT_EQ(r.attempt(), 2u);
    }
  }
  EXPECT_EQ(remeasured.count(leased.trial_id()), 1u);
  EXPECT_EQ(remeasured.size(), kBudget - measured.size());
  EXPECT_EQ(StoredRow(id).state, tunefleet::v1::JOB_STATE_DONE);
  const std::vector<store::Trial> rows = Rows(id);
  ASSERT_EQ(rows.size(), kBudget);
  for (const store::Trial& t : rows) {
    EXPECT_EQ(t.state, tunefleet::v1::TRIAL_STATE_DONE) << t.id;
  }
}

}  // namespace
}  // namespace tunefleet::server

namespace tunefleet::server {
namespace {

TEST_F(JobManagerTest, AnEndedJobLeavesTheManagerWithItsFinalProgressKept) {
  FakeAgent& agent = Connect("agent-1", 2);
  AnswerAll(agent, MixedAnswer);
  std::shared_ptr<Job> job = Submit(Request(4));
  ASSERT_NE(job, nullptr);
  const JobProgress done = WaitFor(*job, Ended);
  ASSERT_EQ(done.state(), tunefleet::v1::JOB_STATE_DONE) << done.message();
  job->Join();  // its end is handled
  EXPECT_EQ(jobs_->Find(job->id()), nullptr);
  EXPECT_EQ(jobs_->FindTracked(job->id()), nullptr);
  EXPECT_EQ(jobs_->active_jobs(), 0);
  std::optional<JobProgress> kept = jobs_->EndedProgress(job->id());
  ASSERT_TRUE(kept.has_value());
  EXPECT_EQ(kept->state(), tunefleet::v1::JOB_STATE_DONE);
  EXPECT_EQ(kept->trials_done(), 4u);
  EXPECT_EQ(kept->space_size(), done.space_size());
  // The list shows it as it ended.
  absl::StatusOr<std::vector<JobProgress>> listed = jobs_->List(10);
  ASSERT_TRUE(listed.ok()) << listed.status();
  ASSERT_EQ(listed->size(), 1u);
  EXPECT_EQ((*listed)[0].space_size(), done.space_size());
  EXPECT_GT((*listed)[0].created_unix_ms(), 0);
}

TEST_F(JobManagerTest, ActiveJobsBeyondTheLimitAreRefused) {
  JobLimits limits;
  limits.max_active_jobs = 1;
  limits.job_threads = 1;
  JobManager jobs(store_, scheduler_.get(), clock_, limits);
  absl::StatusOr<std::shared_ptr<Job>> first = jobs.Submit(Request(5));
  ASSERT_TRUE(first.ok()) << first.status();
  absl::StatusOr<std::shared_ptr<Job>> second = jobs.Submit(Request(5));
  EXPECT_EQ(second.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(std::string(second.status().message()),
              ::testing::HasSubstr("--max-active-jobs 1"));
  // A refused submission stores nothing.
  absl::StatusOr<std::vector<store::StoredJob>> rows = store_->ListJobs(10);
  ASSERT_TRUE(rows.ok());
  EXPECT_EQ(rows->size(), 1u);
  ASSERT_TRUE(jobs.Cancel((*first)->id()).ok());
  (*first)->Join();
  EXPECT_TRUE(jobs.Submit(Request(5)).ok());
}

}  // namespace
}  // namespace tunefleet::server
