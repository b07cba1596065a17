// The fleet survives: agents SIGKILLed and frozen at random moments, the
// server SIGKILLed and restarted mid-job, and hostile kernels (a hang, a
// far out-of-bounds write, a compile error, NaN). Real processes, real
// gRPC on loopback, real SQLite, real OpenCL (PoCL in CI).
#include <signal.h>

#include <cstdio>
#include <map>
#include <random>
#include <set>

#include "cli/common.h"
#include "gtest/gtest.h"
#include "kernels_templates/workload.h"
#include "store/store.h"
#include "tests/support/fleet_harness.h"
#include "tests/support/stored_trials.h"
#include "trial/trial_request.h"

namespace tunefleet {
namespace {

using testing::FleetHarness;
using testing::JobEnded;
using testing::StoredTrials;
using tunefleet::v1::JobProgress;

// A small GEMM job for key "chaos" (SmallGemmJob).
tunefleet::v1::SubmitJobRequest GemmJob(uint32_t trials, double cooldown_ms,
                                        uint64_t seed) {
  return testing::SmallGemmJob("chaos", trials, cooldown_ms, seed);
}

// Starts the server and agents 0 and 1 and, once both are connected,
// submits `request`; its job id, or 0 when the fleet did not come up
// within a minute or the submission failed.
int64_t StartFleetWithJob(FleetHarness& fleet,
                          const tunefleet::v1::SubmitJobRequest& request) {
  if (!fleet.StartFleet(2, "chaos")) return 0;
  return fleet.Submit(request);
}

// Exactly `budget` finished trials, each config once, none left open.
void ExpectExactlyOnce(const std::vector<store::Trial>& rows, size_t budget) {
  std::set<uint64_t> configs;
  size_t finished = 0, open = 0, lost = 0;
  for (const store::Trial& t : rows) {
    EXPECT_TRUE(configs.insert(t.config_index).second)
        << "config " << t.config_index << " tried twice";
    const bool done = t.state == tunefleet::v1::TRIAL_STATE_DONE;
    if (!done) ++open;
    if (done && t.error != tunefleet::v1::Measurement::CANCELLED) ++finished;
    if (t.error == tunefleet::v1::Measurement::DEVICE_LOST) ++lost;
  }
  EXPECT_EQ(finished, budget);
  EXPECT_EQ(open, 0u);
  EXPECT_EQ(rows.size(), budget) << "trial rows beyond the budget";
  std::printf("[chaos] %zu trials finished (%zu given up as DEVICE_LOST)\n",
              finished, lost);
}

// Heartbeats of this test's fleet, ms. Twice the harness's default: at
// 300 ms an agent starved of CPU for 0.9 s on a loaded machine is dropped
// and its trials requeued (one run beside the quickstart outran the job's
// limit; its log was lost, so this is the likely cause, not a seen one).
// The frozen agent below stays frozen for five beats.
constexpr int kChaosHeartbeatMs = 600;

TEST(FleetChaos, AgentsKilledAndFrozenMidJobLoseNothing) {
  FleetHarness fleet("agents", kChaosHeartbeatMs);
  constexpr uint32_t kTrials = 48;
  const int64_t job = StartFleetWithJob(fleet, GemmJob(kTrials, 250, 11));
  ASSERT_GT(job, 0);

  const unsigned seed = std::random_device{}();
  std::printf("[chaos] kill schedule seed %u\n", seed);
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> pause_ms(300, 1200);
  std::uniform_int_distribution<size_t> pick(0, 1);
  int kills = 0;
  for (int round = 0; round < 4 && !JobEnded(fleet.Job(job)); ++round) {
    std::this_thread::sleep_for(std::chrono::milliseconds(pause_ms(rng)));
    const size_t victim = pick(rng);
    fleet.agent(victim).Kill(SIGKILL);
    ++kills;
    fleet.StartAgent(victim);
  }
  // A frozen agent: its TCP stream stays open but it stops beating; the
  // server must drop it and requeue its leases.
  bool froze = false;
  if (!JobEnded(fleet.Job(job))) {
    fleet.agent(0).Kill(SIGSTOP);
    std::this_thread::sleep_for(
        std::chrono::milliseconds(5 * kChaosHeartbeatMs));
    fleet.agent(0).Kill(SIGCONT);
    froze = true;
  }
  ASSERT_TRUE(fleet.AwaitEnd(job, testing::kFleetJobLimit).has_value());
  const JobProgress last = *fleet.Job(job);
  EXPECT_EQ(last.state(), tunefleet::v1::JOB_STATE_DONE) << last.message();
  EXPECT_EQ(last.trials_done(), kTrials);
  std::printf("[chaos] %d agent kills, froze: %d, %u trials requeued\n", kills,
              froze, last.trials_requeued());
  EXPECT_GE(kills, 3) << "the job ended before the chaos did";
  EXPECT_GE(last.trials_requeued(), 1u);
  fleet.server().Kill(SIGTERM);
  ExpectExactlyOnce(StoredTrials(fleet.db_path(), job), kTrials);
}

TEST(FleetChaos, ServerKilledTwiceMidJobResumesFromTheDatabase) {
  FleetHarness fleet("server");
  constexpr uint32_t kTrials = 30;
  const int64_t job = StartFleetWithJob(fleet, GemmJob(kTrials, 200, 12));
  ASSERT_GT(job, 0);

  // Results finished before each kill, which must survive unchanged.
  testing::KeptResults kept;
  for (uint32_t kill_after : {6u, 16u}) {
    ASSERT_TRUE(
        fleet.AwaitTrialsDone(job, kill_after, testing::kFleetJobLimit));
    fleet.server().Kill(SIGKILL);
    kept.Keep(StoredTrials(fleet.db_path(), job));
    ASSERT_TRUE(fleet.StartServer());
  }
  ASSERT_TRUE(fleet.AwaitEnd(job, testing::kFleetJobLimit).has_value());
  const JobProgress last = *fleet.Job(job);
  EXPECT_EQ(last.state(), tunefleet::v1::JOB_STATE_DONE) << last.message();
  EXPECT_EQ(last.trials_done(), kTrials);
  fleet.server().Kill(SIGTERM);
  const std::vector<store::Trial> rows = StoredTrials(fleet.db_path(), job);
  ExpectExactlyOnce(rows, kTrials);
  const size_t unchanged = kept.ExpectUnchanged(rows);
  EXPECT_EQ(unchanged, kept.size()) << "finished trials lost in a restart";
  EXPECT_GE(kept.size(), 16u);
}

// The hostile template's source and spec as a job carries them.
tunefleet::v1::SubmitJobRequest HostileJob() {
  auto spec = cli::LoadTemplateSpec(testing::SourceDir() +
                                    "/tests/data/templates/hostile.toml");
  EXPECT_TRUE(spec.ok()) << spec.status();
  tunefleet::v1::SubmitJobRequest r;
  *r.mutable_template_spec() = **spec;
  *r.mutable_workload() = trial::WorkloadToProto(
      *templates::Workload::Parse("hostile_scale", "N=1000"));
  r.set_device_key("hostile");
  r.set_strategy(tunefleet::v1::STRATEGY_GRID);
  r.set_trials(5);
  r.set_skip_reference(true);
  r.mutable_timing()->set_repeat(1);
  r.mutable_timing()->set_min_repeat_ms(0);
  r.mutable_timing()->set_timeout_ms(5000);
  return r;
}

TEST(FleetChaos, HostileKernelsAreClassifiedAndTheAgentKeepsServing) {
  FleetHarness fleet("hostile");
  ASSERT_TRUE(fleet.StartFleet(1, "hostile", 1));
  const pid_t agent_pid = fleet.agent(0).pid();
  const int64_t job = fleet.Submit(HostileJob());
  ASSERT_GT(job, 0);
  ASSERT_TRUE(fleet.AwaitEnd(job, testing::kFleetJobLimit).has_value());
  EXPECT_EQ(fleet.Job(job)->trials_done(), 5u);

  grpc::ClientContext context;
  tunefleet::v1::QueryRecordsRequest query;
  query.set_job_id(job);
  tunefleet::v1::QueryRecordsResponse records;
  ASSERT_TRUE(fleet.Stub()->QueryRecords(&context, query, &records).ok());
  std::map<int64_t, std::string> by_mode;
  for (const auto& r : records.records()) {
    ASSERT_EQ(r.config().knobs_size(), 1);
    by_mode[r.config().knobs(0).value()] =
        tunefleet::v1::Measurement::Error_Name(r.error());
  }
  EXPECT_EQ(by_mode[0], "OK");
  EXPECT_EQ(by_mode[1], "TIMEOUT");        // the endless loop
  EXPECT_EQ(by_mode[2], "RUNTIME_ERROR");  // the far write crashed the worker
  EXPECT_EQ(by_mode[3], "COMPILE_ERROR");
  EXPECT_EQ(by_mode[4], "WRONG_ANSWER");  // NaN

  // The same agent process, still connected, still measuring.
  EXPECT_EQ(::kill(agent_pid, 0), 0);
  EXPECT_EQ(fleet.Connected("hostile"), 1);
  tunefleet::v1::SubmitJobRequest again = GemmJob(3, 0, 5);
  again.set_device_key("hostile");
  const int64_t after = fleet.Submit(again);
  ASSERT_TRUE(fleet.AwaitEnd(after, testing::kFleetJobLimit).has_value());
  const JobProgress last = *fleet.Job(after);
  EXPECT_EQ(last.trials_done(), 3u);
  EXPECT_EQ(last.errors().at("OK"), 3u);
  EXPECT_EQ(fleet.agent(0).pid(), agent_pid);
}

}  // namespace
}  // namespace tunefleet
