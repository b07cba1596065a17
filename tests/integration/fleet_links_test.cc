// Slow and broken links between agents and the server: every agent dials
// the server through its own fault-injecting TCP proxy
// (tests/support/fault_proxy.h), which delays and throttles chunks, stalls
// one agent's link as a Wi-Fi partition does (sockets open, nothing moves),
// or resets connections at random. Real processes (tunefleet-server,
// tunefleet-agent on PoCL), real gRPC, a real SQLite file. Each case
// asserts that every job completes with exactly one result per trial (none
// lost, none twice), that leases were requeued where a link failed, and
// that the agents reconnected.
//
// TUNEFLEET_LINKS_STALL_S sets how long the stalled link stays cut (3 s by
// default; 30 s is the partition of issue 19).
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <set>
#include <string>

#include "gtest/gtest.h"
#include "store/store.h"
#include "tests/support/fault_proxy.h"
#include "tests/support/fleet_harness.h"
#include "tests/support/stored_trials.h"

namespace tunefleet {
namespace {

using testing::FaultProxy;
using testing::FleetHarness;
using testing::LinkFaults;
using tunefleet::v1::JobProgress;

constexpr char kLinksKey[] = "links";
constexpr size_t kAgents = 3;
// One seed for every job: the same configs, so that programs built for one
// case come from the agents' binary cache in the next.
constexpr uint64_t kSeed = 21;

// A small GEMM job for kLinksKey (SmallGemmJob).
tunefleet::v1::SubmitJobRequest LinksGemmJob(uint32_t trials,
                                             double cooldown_ms,
                                             uint64_t seed) {
  return testing::SmallGemmJob(kLinksKey, trials, cooldown_ms, seed);
}

// A server, and kAgents agents each behind its own proxy with `faults`.
class LinkedFleet {
 public:
  LinkedFleet(const std::string& name, int heartbeat_ms, LinkFaults faults)
      : fleet_(name, heartbeat_ms), faults_(faults) {}

  // Starts everything; true once all agents are connected.
  bool Start() {
    started_ = std::chrono::steady_clock::now();
    if (!fleet_.StartServer()) return false;
    for (size_t i = 0; i < kAgents; ++i) {
      auto proxy =
          FaultProxy::Start("127.0.0.1", fleet_.port(), faults_, 1000 * i + 7);
      EXPECT_TRUE(proxy.ok()) << proxy.status();
      if (!proxy.ok()) return false;
      proxies_.push_back(*std::move(proxy));
      fleet_.StartAgent(i, kLinksKey, 2, proxies_.back()->address());
    }
    const bool up = FleetHarness::WaitFor(
        [&] {
          return fleet_.Connected(kLinksKey) == static_cast<int>(kAgents);
        },
        std::chrono::seconds(90));
    Note("fleet up");
    return up;
  }

  // Prints `what` with the seconds since Start(), for reading the log only.
  void Note(const std::string& what) const {
    std::printf("[links] %s at %.1f s\n", what.c_str(),
                std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                              started_)
                    .count());
  }

  int64_t Submit(const tunefleet::v1::SubmitJobRequest& request) {
    return fleet_.Submit(request);
  }

  // Waits for the job to end; its last progress, or nullopt when it did not
  // end within kFleetJobLimit.
  std::optional<JobProgress> AwaitEnd(int64_t job) {
    std::optional<JobProgress> last =
        fleet_.AwaitEnd(job, testing::kFleetJobLimit);
    Note("job ended");
    return last;
  }

  // A job run to its end: its id and its last progress.
  struct JobRun {
    int64_t job = 0;
    JobProgress last;
  };

  // Starts everything (Start) and runs LinksGemmJob(trials, cooldown_ms, kSeed)
  // to its end, into `run`. Fails the test when the fleet did not come up,
  // the job was refused or it did not end within kFleetJobLimit.
  void StartAndRun(uint32_t trials, double cooldown_ms, JobRun* run) {
    ASSERT_TRUE(Start());
    run->job = Submit(LinksGemmJob(trials, cooldown_ms, kSeed));
    ASSERT_GT(run->job, 0);
    const std::optional<JobProgress> last = AwaitEnd(run->job);
    ASSERT_TRUE(last.has_value()) << "the job did not end";
    run->last = *last;
  }

  // Times agent `i` was welcomed by the server, from its log.
  int Connects(size_t i) const {
    std::ifstream log(fleet_.agent_log(i));
    int n = 0;
    for (std::string line; std::getline(log, line);) {
      if (line.find("] connected to ") != std::string::npos) ++n;
    }
    return n;
  }

  FleetHarness& fleet() { return fleet_; }
  FaultProxy& proxy(size_t i) { return *proxies_[i]; }

 private:
  FleetHarness fleet_;
  LinkFaults faults_;
  std::chrono::steady_clock::time_point started_;
  std::vector<std::unique_ptr<FaultProxy>> proxies_;
};

// What the store holds of a job, once its server has stopped.
struct StoredJob {
  size_t rows = 0;
  size_t distinct_configs = 0;
  size_t done = 0;          // trials in state done
  size_t device_lost = 0;   // of those, given up after 5 lost leases
  size_t leased_again = 0;  // trials leased more than once (requeued)
};

StoredJob ReadJob(const std::string& db, int64_t job_id) {
  StoredJob j;
  std::set<uint64_t> configs;
  for (const store::Trial& t : testing::StoredTrials(db, job_id)) {
    ++j.rows;
    configs.insert(t.config_index);
    if (t.state == tunefleet::v1::TRIAL_STATE_DONE) ++j.done;
    if (t.error == tunefleet::v1::Measurement::DEVICE_LOST) ++j.device_lost;
    if (t.attempt > 1) ++j.leased_again;
  }
  j.distinct_configs = configs.size();
  return j;
}

// The job ended done with `trials` results, and the store holds exactly one
// done row per trial, each config once.
void ExpectEveryTrialOnce(const JobProgress& last, const StoredJob& stored,
                          uint32_t trials) {
  EXPECT_EQ(last.state(), tunefleet::v1::JOB_STATE_DONE) << last.message();
  EXPECT_EQ(last.trials_done(), trials);
  EXPECT_EQ(stored.rows, trials) << "trial rows beyond the budget";
  EXPECT_EQ(stored.distinct_configs, trials) << "a config tried twice";
  EXPECT_EQ(stored.done, trials) << "trials left without a result";
}

int StallSeconds() {
  const char* s = std::getenv("TUNEFLEET_LINKS_STALL_S");
  return s != nullptr && std::atoi(s) > 0 ? std::atoi(s) : 3;
}

TEST(FleetLinks, SlowThrottledLinksCompleteAJob) {
  LinkFaults slow;
  slow.latency = absl::Milliseconds(300);
  slow.jitter = absl::Milliseconds(100);
  slow.bytes_per_second = 64 << 10;
  // Heartbeats cross the same slow link: 3 beats of 1 s leave room for
  // 400 ms of latency.
  LinkedFleet fleet("links_slow", 1000, slow);
  constexpr uint32_t kTrials = 6;
  LinkedFleet::JobRun run;
  ASSERT_NO_FATAL_FAILURE(fleet.StartAndRun(kTrials, 0, &run));
  for (size_t i = 0; i < kAgents; ++i) {
    const testing::LinkStats s = fleet.proxy(i).stats();
    std::printf(
        "[links] slow link %zu: %lld B up, %lld B down, %d connect(s)\n", i,
        static_cast<long long>(s.bytes_to_upstream),
        static_cast<long long>(s.bytes_to_client), fleet.Connects(i));
    EXPECT_GT(s.bytes_to_upstream, 0) << "agent " << i << " bypassed its proxy";
    EXPECT_EQ(fleet.Connects(i), 1) << "agent " << i << " was dropped";
  }
  std::printf("[links] slow: %u trials requeued\n", run.last.trials_requeued());
  EXPECT_EQ(run.last.trials_requeued(), 0u);
  fleet.fleet().server().Kill(SIGTERM);
  const StoredJob stored = ReadJob(fleet.fleet().db_path(), run.job);
  ExpectEveryTrialOnce(run.last, stored, kTrials);
  EXPECT_EQ(stored.device_lost, 0u);
}

TEST(FleetLinks, StalledLinkIsDroppedRequeuedAndRejoins) {
  LinkedFleet fleet("links_stall", 300, LinkFaults{});
  ASSERT_TRUE(fleet.Start());
  constexpr uint32_t kTrials = 12;
  const int64_t job = fleet.Submit(LinksGemmJob(kTrials, 300, kSeed));
  ASSERT_GT(job, 0);
  // Agent 0 holds leases once the job is under way.
  ASSERT_TRUE(FleetHarness::WaitFor(
      [&] {
        auto p = fleet.fleet().Job(job);
        return p && p->trials_done() >= 2;
      },
      testing::kFleetJobLimit));
  const int connects_before = fleet.Connects(0);
  fleet.proxy(0).Stall();
  const auto stalled_at = std::chrono::steady_clock::now();
  // The server notices the silence through missed heartbeats.
  const bool requeued = FleetHarness::WaitFor(
      [&] {
        auto p = fleet.fleet().Job(job);
        return p && p->trials_requeued() >= 1;
      },
      std::chrono::seconds(60));
  const bool dropped =
      fleet.fleet().Connected(kLinksKey) == static_cast<int>(kAgents) - 1;
  // The other agents may finish the job while the link is still cut.
  const auto restore_at = stalled_at + std::chrono::seconds(StallSeconds());
  const bool ended_while_stalled = FleetHarness::WaitFor(
      [&] { return testing::JobEnded(fleet.fleet().Job(job)); },
      std::chrono::duration_cast<std::chrono::milliseconds>(
          restore_at - std::chrono::steady_clock::now()));
  fleet.Note(ended_while_stalled ? "job ended with the link cut"
                                 : "job still running");
  std::this_thread::sleep_until(restore_at);
  fleet.proxy(0).Restore();
  fleet.Note("link restored");
  EXPECT_TRUE(requeued) << "the server never requeued the stalled leases";
  EXPECT_TRUE(dropped) << "the stalled agent still counted as connected";

  const std::optional<JobProgress> last = fleet.AwaitEnd(job);
  ASSERT_TRUE(last.has_value()) << "the job did not end";
  // Once the link is back the agent learns its stream was cancelled and
  // connects again.
  EXPECT_TRUE(FleetHarness::WaitFor(
      [&] {
        return fleet.Connects(0) > connects_before &&
               fleet.fleet().Connected(kLinksKey) == static_cast<int>(kAgents);
      },
      std::chrono::seconds(60)))
      << "agent 0 did not reconnect after the stall";
  std::printf(
      "[links] stall of %d s: %u trials requeued, agent 0 connects %d -> %d\n",
      StallSeconds(), last->trials_requeued(), connects_before,
      fleet.Connects(0));
  EXPECT_GE(last->trials_requeued(), 1u);
  fleet.fleet().server().Kill(SIGTERM);
  const StoredJob stored = ReadJob(fleet.fleet().db_path(), job);
  ExpectEveryTrialOnce(*last, stored, kTrials);
  EXPECT_GE(stored.leased_again, 1u) << "no trial leased a second time";
  EXPECT_EQ(stored.device_lost, 0u);
}

TEST(FleetLinks, RandomResetsLoseAndDuplicateNothing) {
  LinkFaults resets;
  resets.reset_after_min = absl::Milliseconds(1000);
  resets.reset_after_max = absl::Milliseconds(2000);
  resets.reset_probability = 0.01;  // and now and then on any chunk
  LinkedFleet fleet("links_reset", 300, resets);
  // 600 ms a trial, 2 at a time per agent: the job outlives the first
  // resets, which take leases with them.
  constexpr uint32_t kTrials = 12;
  LinkedFleet::JobRun run;
  ASSERT_NO_FATAL_FAILURE(fleet.StartAndRun(kTrials, 600, &run));
  // The links keep breaking; every agent comes back each time.
  for (size_t i = 0; i < kAgents; ++i) {
    EXPECT_TRUE(FleetHarness::WaitFor([&] { return fleet.Connects(i) >= 3; },
                                      std::chrono::seconds(60)))
        << "agent " << i << " stopped reconnecting";
  }
  int64_t reset_count = 0;
  for (size_t i = 0; i < kAgents; ++i) {
    const testing::LinkStats s = fleet.proxy(i).stats();
    reset_count += s.resets;
    std::printf(
        "[links] reset link %zu: %lld connections, %lld resets, "
        "%d connects\n",
        i, static_cast<long long>(s.accepted), static_cast<long long>(s.resets),
        fleet.Connects(i));
  }
  EXPECT_GE(reset_count, static_cast<int64_t>(kAgents));
  fleet.fleet().server().Kill(SIGTERM);
  const StoredJob stored = ReadJob(fleet.fleet().db_path(), run.job);
  std::printf(
      "[links] resets: %u trials requeued, %zu leased again, %zu "
      "DEVICE_LOST\n",
      run.last.trials_requeued(), stored.leased_again, stored.device_lost);
  ExpectEveryTrialOnce(run.last, stored, kTrials);
  EXPECT_GE(run.last.trials_requeued(), 1u);
  EXPECT_GE(stored.leased_again, 1u);
}

}  // namespace
}  // namespace tunefleet
