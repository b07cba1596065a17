// What the server's unit tests of jobs share: a real scheduler, job manager,
// trial ledger and store on a temporary file, with fake agents
// (fake_agent.h) whose results are handed to the ledger as AgentServiceImpl
// hands an agent's (TrialLedger::Receive: stored, then acknowledged). Time
// is a fake clock; tests wait for conditions with generous real-time
// limits, never for fixed durations.
#ifndef TUNEFLEET_TESTS_UNIT_SERVER_JOB_FIXTURE_H_
#define TUNEFLEET_TESTS_UNIT_SERVER_JOB_FIXTURE_H_

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "server/job_manager.h"
#include "server/lease_scheduler.h"
#include "server/trial_ledger.h"
#include "store/store.h"
#include "tests/support/fake_clock.h"
#include "tests/support/small_job.h"
#include "tests/support/temp_store.h"
#include "tests/support/test_device.h"
#include "tests/unit/server/fake_agent.h"
#include "trial/trial_request.h"

namespace tunefleet::server {

using tunefleet::testing::FakeAgent;
using tunefleet::testing::FakeClock;
using tunefleet::testing::TempStore;
using tunefleet::testing::TestDevice;
using tunefleet::v1::JobProgress;
using tunefleet::v1::Measurement;
using tunefleet::v1::MeasureRequest;

constexpr char kKey[] = "test-gpu";
// How long a test waits for something that should happen at once; only
// reached when it does not (a failure).
constexpr absl::Duration kPatience = absl::Seconds(60);

inline Measurement Ok(double ns) {
  Measurement m;
  m.set_error(Measurement::OK);
  // Three rounds; the job keeps their median.
  for (double t : {ns * 1.1, ns, ns * 0.95}) m.add_times_ns(t);
  m.set_number(10);
  return m;
}

inline Measurement Failed(Measurement::Error error) {
  Measurement m;
  m.set_error(error);
  m.set_error_message("the fake agent says so");
  return m;
}

// The result an agent sends back for one request.
using AnswerFn = std::function<Measurement(const MeasureRequest&)>;

// Delivers `m` for `request` as the agent service does (a stale or
// repeated result is dropped there too).
inline void Deliver(TrialLedger& ledger, const MeasureRequest& request,
                    Measurement m) {
  m.set_trial_id(request.trial_id());
  (void)ledger.Receive(m, /*agent_id=*/"", /*driver_version=*/"");
}

// Answers every request `agent` receives on its own thread, until
// destroyed; records what it answered.
class Answerer {
 public:
  Answerer(FakeAgent* agent, TrialLedger* ledger, AnswerFn answer)
      : agent_(agent),
        ledger_(ledger),
        answer_(std::move(answer)),
        thread_([this] { Run(); }) {}
  ~Answerer() {
    stop_.store(true);
    thread_.join();
  }

  // trial id -> the measurement sent, reference runs included.
  std::map<int64_t, Measurement> answered() const {
    absl::MutexLock lock(&mu_);
    return answered_;
  }

 private:
  void Run() {
    while (!stop_.load()) {
      std::optional<MeasureRequest> r = agent_->Next(absl::Milliseconds(20));
      if (!r) continue;
      Measurement m = answer_(*r);
      m.set_trial_id(r->trial_id());
      {
        absl::MutexLock lock(&mu_);
        answered_[r->trial_id()] = m;
      }
      Deliver(*ledger_, *r, m);
    }
  }

  FakeAgent* const agent_;
  TrialLedger* const ledger_;
  const AnswerFn answer_;
  std::atomic<bool> stop_{false};
  mutable absl::Mutex mu_;
  std::map<int64_t, Measurement> answered_ ABSL_GUARDED_BY(mu_);
  std::thread thread_;  // last: starts once the rest is set
};

// A deterministic answer: OK with a time that depends on the trial, but
// every fifth trial fails to compile.
inline Measurement MixedAnswer(const MeasureRequest& r) {
  if (r.trial_id() > 0 && r.trial_id() % 5 == 0) {
    return Failed(Measurement::COMPILE_ERROR);
  }
  return Ok(1000.0 + static_cast<double>((r.trial_id() * 37) % 101));
}

// Waits until `done` holds for the job's progress (or kPatience passes);
// returns the last progress seen.
inline JobProgress WaitFor(
    TrackedJob& job, const std::function<bool(const JobProgress&)>& done) {
  const absl::Time give_up = absl::Now() + kPatience;
  uint64_t version = 0;
  JobProgress progress = job.Progress();
  while (!done(progress) && absl::Now() < give_up) {
    job.WaitForUpdate(&version, absl::Milliseconds(100), &progress);
  }
  return progress;
}

inline bool Ended(const JobProgress& p) {
  return p.state() == tunefleet::v1::JOB_STATE_DONE ||
         p.state() == tunefleet::v1::JOB_STATE_CANCELLED ||
         p.state() == tunefleet::v1::JOB_STATE_FAILED;
}

class JobManagerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_NE(store_, nullptr);
    ASSERT_TRUE(store_->UpsertDevice(kKey, TestDevice()).ok());
    scheduler_ = std::make_unique<LeaseScheduler>(store_, clock_);
    jobs_ = std::make_unique<JobManager>(store_, scheduler_.get(), clock_);
    ledger_ =
        std::make_unique<TrialLedger>(scheduler_.get(), jobs_.get(), store_);
  }

  void TearDown() override {
    answerers_.clear();
    ledger_.reset();
    jobs_.reset();
    scheduler_.reset();
  }

  // A GEMM job on kKey with a random search and no transfer learning.
  static tunefleet::v1::SubmitJobRequest Request(uint32_t trials) {
    return tunefleet::testing::GemmJobRequest(kKey, trials, 7);
  }

  std::shared_ptr<Job> Submit(const tunefleet::v1::SubmitJobRequest& r) {
    absl::StatusOr<std::shared_ptr<Job>> job = jobs_->Submit(r);
    EXPECT_TRUE(job.ok()) << job.status();
    return job.ok() ? *job : nullptr;
  }

  // Connects a fake agent to `scheduler` (the fixture's by default).
  FakeAgent& Connect(const std::string& id, uint32_t capacity,
                     LeaseScheduler* scheduler = nullptr) {
    if (scheduler == nullptr) scheduler = scheduler_.get();
    agents_.push_back(
        std::make_unique<FakeAgent>(id, kKey, capacity, clock_.NowMs()));
    scheduler->AddAgent(agents_.back()->session());
    return *agents_.back();
  }

  // A new server on the fixture's store, as after a restart: its own
  // scheduler, job manager and ledger, and an agent "agent-2" of 2 slots
  // answering with `answer` through them. The answerer stops first, before
  // the manager and scheduler go.
  struct RestartedServer {
    RestartedServer(JobManagerTest& t, AnswerFn answer)
        : scheduler(t.store_, t.clock_),
          jobs(t.store_, &scheduler, t.clock_),
          ledger(&scheduler, &jobs, t.store_),
          agent(t.Connect("agent-2", 2, &scheduler)),
          answerer(&agent, &ledger, std::move(answer)) {}

    // Resumes the store's jobs, which must give `count`.
    void Resume(int count) {
      absl::StatusOr<int> resumed = jobs.ResumeJobs();
      ASSERT_TRUE(resumed.ok()) << resumed.status();
      EXPECT_EQ(*resumed, count);
    }

    // Job `id`'s progress once it ended. The agent answers at once, so the
    // job may end, and leave the live jobs, before the test looks it up:
    // the ended progress serves then. Fails the test when it does not end
    // within kPatience.
    JobProgress AwaitEnd(int64_t id) {
      const absl::Time give_up = absl::Now() + kPatience;
      while (absl::Now() < give_up) {
        if (std::shared_ptr<TrackedJob> live = jobs.FindTracked(id)) {
          const JobProgress p = WaitFor(*live, Ended);
          if (Ended(p)) return p;
        } else if (std::optional<JobProgress> p = jobs.EndedProgress(id)) {
          return *p;
        }
        absl::SleepFor(absl::Milliseconds(5));
      }
      ADD_FAILURE() << "job " << id << " did not end";
      return JobProgress();
    }

    LeaseScheduler scheduler;
    JobManager jobs;
    TrialLedger ledger;
    FakeAgent& agent;
    Answerer answerer;
  };

  // Answers what `agent` receives from now on with `answer`, to the
  // fixture's ledger.
  Answerer& AnswerAll(FakeAgent& agent, AnswerFn answer) {
    answerers_.push_back(
        std::make_unique<Answerer>(&agent, ledger_.get(), std::move(answer)));
    return *answerers_.back();
  }

  // The next request `agent` receives; fails the test when none comes.
  static MeasureRequest NextRequest(FakeAgent& agent) {
    std::optional<MeasureRequest> r = agent.Next(kPatience);
    EXPECT_TRUE(r.has_value()) << agent.id() << " received no request";
    return r.value_or(MeasureRequest());
  }

  // Answers the requests `agent` receives with `answer`, one at a time, to
  // the fixture's ledger until `trials` of them were trials (reference
  // runs, whose ids are not positive, are answered but not counted); the
  // ids of those trials. Fails the test, and stops, when none comes.
  std::set<int64_t> MeasureTrials(FakeAgent& agent, int trials,
                                  const AnswerFn& answer) {
    std::set<int64_t> measured;
    for (int counted = 0; counted < trials;) {
      std::optional<MeasureRequest> r = agent.Next(kPatience);
      if (!r.has_value()) {
        ADD_FAILURE() << agent.id() << " received no request";
        break;
      }
      Deliver(*ledger_, *r, answer(*r));
      if (r->trial_id() > 0) {
        measured.insert(r->trial_id());
        ++counted;
      }
    }
    return measured;
  }

  std::vector<store::Trial> Rows(int64_t job_id) {
    absl::StatusOr<std::vector<store::Trial>> rows = store_->JobTrials(job_id);
    EXPECT_TRUE(rows.ok()) << rows.status();
    return rows.value_or(std::vector<store::Trial>());
  }

  store::StoredJob StoredRow(int64_t job_id) {
    absl::StatusOr<store::StoredJob> row = store_->GetJob(job_id);
    EXPECT_TRUE(row.ok()) << row.status();
    return row.value_or(store::StoredJob());
  }

  FakeClock clock_;
  TempStore db_{"job_manager_test"};
  store::Store* const store_ = db_.store();
  // Agents outlive the schedulers that send to them.
  std::vector<std::unique_ptr<FakeAgent>> agents_;
  std::unique_ptr<LeaseScheduler> scheduler_;
  std::unique_ptr<JobManager> jobs_;
  std::unique_ptr<TrialLedger> ledger_;
  std::vector<std::unique_ptr<Answerer>> answerers_;
};

}  // namespace tunefleet::server

#endif  // TUNEFLEET_TESTS_UNIT_SERVER_JOB_FIXTURE_H_
