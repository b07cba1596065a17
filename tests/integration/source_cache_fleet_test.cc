// The agents' source cache end to end (Hello.source_cache,
// KernelLaunch.source_hash): real tunefleet-server and tunefleet-agent
// processes on loopback, measuring on PoCL. One agent's cache is too small
// for the GEMM kernel source, so every request that names it by hash
// misses and is resent in full; the other agent keeps no cache at all (as
// an agent before the cache), so it gets every request whole. The job
// still finishes with each trial measured and stored exactly once.
#include <set>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "contract/names.h"
#include "gtest/gtest.h"
#include "store/store.h"
#include "tests/support/command_runner.h"
#include "tests/support/fleet_harness.h"
#include "tests/support/process.h"

namespace tunefleet {
namespace {

using testing::FleetHarness;

// Starts tunefleet-agent `name` of key "cache" keeping at most
// `cache_bytes` of sources.
std::unique_ptr<testing::Process> StartAgent(FleetHarness& fleet,
                                             const std::string& name,
                                             size_t cache_bytes) {
  return std::make_unique<testing::Process>(
      std::vector<std::string>{
          testing::BinaryDir() + "/device_agent/tunefleet-agent", "--server",
          fleet.address(), "--key", "cache", "--name", name, "--max-in-flight",
          "3", "--source-cache-bytes", std::to_string(cache_bytes),
          "--token-file", fleet.agent_token_file()},
      fleet.dir() + "/" + name + ".log");
}

// Results an agent's log reports ("trial N: <error name>", not a miss).
int Measured(const std::string& log) {
  int n = 0;
  for (absl::string_view line : absl::StrSplit(log, '\n')) {
    if (absl::StrContains(line, "] trial ") &&
        !absl::StrContains(line, "resends")) {
      ++n;
    }
  }
  return n;
}

TEST(SourceCacheFleet, MissesAreResentAndEveryTrialIsDoneOnce) {
  FleetHarness fleet("source_cache");
  ASSERT_TRUE(fleet.StartServer());
  // 3000 bytes: the GEMM reference source (~2 KB) fits, the tuned kernel's
  // (~12 KB) never does.
  auto small = StartAgent(fleet, "small-cache", 3000);
  auto none = StartAgent(fleet, "no-cache", 0);
  ASSERT_TRUE(FleetHarness::WaitFor(
      [&] { return fleet.Connected("cache") == 2; }, std::chrono::seconds(60)));

  constexpr uint32_t kTrials = 24;
  const tunefleet::v1::SubmitJobRequest request =
      testing::SmallGemmJob("cache", kTrials, 0, 5);
  grpc::ClientContext context;
  tunefleet::v1::SubmitJobResponse submitted;
  const grpc::Status s = fleet.Stub()->SubmitJob(&context, request, &submitted);
  ASSERT_TRUE(s.ok()) << s.error_message();
  const int64_t job = submitted.job_id();

  ASSERT_TRUE(FleetHarness::WaitFor(
      [&] {
        auto p = fleet.Job(job);
        return p && contract::IsFinalJobState(p->state());
      },
      std::chrono::seconds(240)));
  const tunefleet::v1::JobProgress last = *fleet.Job(job);
  EXPECT_EQ(last.state(), tunefleet::v1::JOB_STATE_DONE) << last.message();
  EXPECT_EQ(last.trials_done(), kTrials);
  // A miss is a resend, not a lost lease.
  EXPECT_EQ(last.trials_requeued(), 0u);

  auto store = store::Store::Open(fleet.db_path());
  ASSERT_TRUE(store.ok()) << store.status();
  auto rows = (*store)->JobTrials(job);
  ASSERT_TRUE(rows.ok()) << rows.status();
  std::set<uint64_t> configs;
  for (const store::Trial& t : *rows) {
    EXPECT_TRUE(configs.insert(t.config_index).second)
        << "config " << t.config_index << " tried twice";
    EXPECT_EQ(t.state, tunefleet::v1::TRIAL_STATE_DONE) << t.id;
    EXPECT_NE(t.error, tunefleet::v1::Measurement::SOURCE_UNKNOWN) << t.id;
    EXPECT_EQ(t.attempt, 1) << "trial " << t.id << " leased again";
  }
  EXPECT_EQ(rows->size(), kTrials);

  // The small cache missed (and said so); the agent without a cache never
  // could.
  const std::string small_log =
      testing::ReadAll(fleet.dir() + "/small-cache.log");
  const std::string none_log = testing::ReadAll(fleet.dir() + "/no-cache.log");
  EXPECT_TRUE(absl::StrContains(small_log, "the server resends it"))
      << small_log;
  EXPECT_FALSE(absl::StrContains(none_log, "the server resends it"))
      << none_log;
  // Both measured: each logs a line per result ("trial N: OK ...").
  EXPECT_GT(Measured(small_log), 0) << small_log;
  EXPECT_GT(Measured(none_log), 0) << none_log;
}

}  // namespace
}  // namespace tunefleet
