// The binary end to end: a job that a killed embedded `tunefleet tune` left
// running (written through the store's API, as it leaves it) shows as
// running in `tunefleet jobs --db`, and as failed (interrupted) once the
// next `tunefleet tune` has opened that database the embedded way; the new
// command's own job runs to its end.
#include <unistd.h>

#include <filesystem>
#include <string>

#include "gtest/gtest.h"
#include "kernels_templates/registry.h"
#include "nlohmann/json.hpp"
#include "store/store.h"
#include "tests/support/command_runner.h"
#include "tests/support/small_job.h"

namespace tunefleet {
namespace {

using testing::CliBinary;
using testing::RunCommand;

class EmbeddedInterruptCli : public ::testing::Test {
 protected:
  void SetUp() override {
    work_ = ::testing::TempDir() + "/embedded_interrupt_cli_" +
            std::to_string(getpid());
    std::filesystem::create_directories(work_);
    db_ = work_ + "/t.db";
  }
  void TearDown() override { std::filesystem::remove_all(work_); }

  // `tunefleet jobs --json --db` as JSON; fails the test on an error.
  nlohmann::json Jobs() {
    auto r = RunCommand(Cli() + " jobs --json --db " + db_);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return r.exit_code == 0 ? nlohmann::json::parse(r.out)
                            : nlohmann::json::array();
  }
  static std::string Cli() { return CliBinary(); }

  std::string work_, db_;
};

TEST_F(EmbeddedInterruptCli, NextEmbeddedCommandMarksAKilledCommandsJob) {
  int64_t left = 0;
  {
    auto store = store::Store::Open(db_);
    ASSERT_TRUE(store.ok()) << store.status();
    auto job = (*store)->CreateJob(testing::SmallGemmJob(10, 1, "some-device"));
    ASSERT_TRUE(job.ok()) << job.status();
    left = *job;
    ASSERT_TRUE(
        (*store)->SetJobState(left, tunefleet::v1::JOB_STATE_RUNNING, "").ok());
    auto trials = (*store)->InsertTrials(left, {{0, "a=0"}, {1, "a=1"}});
    ASSERT_TRUE(trials.ok()) << trials.status();
    // Leased to the agent of an embedded command that is gone.
    ASSERT_TRUE((*store)->LeaseTrial((*trials)[0], "embedded-999999").ok());
  }
  nlohmann::json before = Jobs();
  ASSERT_EQ(before.size(), 1u) << before.dump();
  EXPECT_EQ(before[0]["state"], "JOB_STATE_RUNNING");

  auto tune = RunCommand(Cli() + " tune --db " + db_ +
                         " --shape M=16,N=16,K=16 --trials 2 --strategy "
                         "random --no-transfer");
  ASSERT_EQ(tune.exit_code, 0) << tune.err;
  EXPECT_NE(tune.err.find("marked 1 job(s)"), std::string::npos) << tune.err;

  nlohmann::json after = Jobs();
  ASSERT_EQ(after.size(), 2u) << after.dump();
  for (const nlohmann::json& job : after) {
    if (job["job_id"] == left) {
      EXPECT_EQ(job["state"], "JOB_STATE_FAILED");
      EXPECT_NE(job["message"].get<std::string>().find("interrupted"),
                std::string::npos)
          << job.dump();
    } else {
      EXPECT_EQ(job["state"], "JOB_STATE_DONE") << job.dump();
    }
  }
}

}  // namespace
}  // namespace tunefleet
