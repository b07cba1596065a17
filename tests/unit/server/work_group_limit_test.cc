// A task learns its kernels' work-group limit from its first refusal
// (server/work_group_limit.h): the rule alone, then a job on the server's
// real scheduler, ledger and store whose fake agent refuses work-groups
// above its kernels' limit as an agent does (measure/measurer.cc).
#include "server/work_group_limit.h"

#include <cstdint>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/unit/server/job_fixture.h"

namespace tunefleet::server {
namespace {

TEST(WorkGroupLimit, NothingIsSkippedUntilAConfigIsRefusedForItsWorkGroup) {
  WorkGroupLimit limit;
  limit.Observe(256, 0);  // an OK result reporting its kernel's limit
  EXPECT_EQ(limit.limit(), 0u);
  EXPECT_FALSE(limit.Over(1024));
  // Refused, but within its kernel's limit: local memory, not the group.
  limit.Observe(256, 128);
  EXPECT_EQ(limit.limit(), 0u);
  limit.Observe(256, 512);
  EXPECT_EQ(limit.limit(), 256u);
  EXPECT_TRUE(limit.Over(257));
  EXPECT_FALSE(limit.Over(256));
}

TEST(WorkGroupLimit, TheLargestLimitAnyKernelReportedIsKept) {
  WorkGroupLimit limit;
  limit.Observe(512, 0);     // a light kernel allowed 512
  limit.Observe(256, 1024);  // a heavy one refused 1024 at 256
  EXPECT_EQ(limit.limit(), 512u);
  limit.Observe(1024, 0);  // one allowed 1024: nothing is above it now
  EXPECT_EQ(limit.limit(), 1024u);
  EXPECT_FALSE(limit.Over(1024));
}

TEST(WorkGroupLimit, AgentsThatDoNotReportALimitTeachNothing) {
  WorkGroupLimit limit;
  limit.Observe(0, 1024);
  limit.Observe(0, 0);
  EXPECT_EQ(limit.limit(), 0u);
  EXPECT_FALSE(limit.Over(1u << 20));
}

// Trials of `p` that ended with error `name` (0 for none).
uint32_t Errors(const JobProgress& p, const std::string& name) {
  auto it = p.errors().find(name);
  return it == p.errors().end() ? 0 : it->second;
}

uint64_t Group(const MeasureRequest& r) {
  uint64_t group = 1;
  for (uint64_t l : r.kernel().local_size()) group *= l;
  return group;
}

// An agent whose kernels allow `limit` work-items per group: larger groups
// are refused as INVALID_CONFIG, as measure/measurer.cc refuses them;
// `report` false: an agent before Measurement.kernel_work_group_limit.
AnswerFn KernelsLimitedTo(uint64_t limit, bool report) {
  return [limit, report](const MeasureRequest& r) {
    Measurement m =
        Group(r) > limit ? Failed(Measurement::INVALID_CONFIG) : Ok(1000.0);
    if (report) m.set_kernel_work_group_limit(limit);
    return m;
  };
}

class JobWorkGroupLimitTest : public JobManagerTest {
 protected:
  static constexpr uint64_t kLimit = 64;
  static constexpr uint32_t kTrials = 30;

  // Runs a 30-trial GEMM job on one agent of one slot (a trial at a time)
  // answering with `answer`; its last progress, and every request the
  // agent received in order in *received.
  JobProgress RunJob(AnswerFn answer, std::vector<MeasureRequest>* received) {
    std::shared_ptr<Job> job = Submit(Request(kTrials));
    FakeAgent& agent = Connect("agent-1", 1);
    AnswerAll(agent, std::move(answer));
    const JobProgress last = WaitFor(*job, Ended);
    *received = agent.Received();
    return last;
  }
};

TEST_F(JobWorkGroupLimitTest, ConfigsAboveTheLimitAreSkippedAfterTheFirstRefusal) {
  std::vector<MeasureRequest> received;
  const JobProgress last = RunJob(KernelsLimitedTo(kLimit, true), &received);
  ASSERT_EQ(last.state(), tunefleet::v1::JOB_STATE_DONE) << last.message();
  EXPECT_EQ(last.trials_done(), kTrials);
  EXPECT_EQ(last.work_group_limit(), kLimit);
  // One trial at a time: the first refusal teaches the limit before the
  // next config is dispatched, so it is the only one.
  EXPECT_EQ(Errors(last, "INVALID_CONFIG"), 1u);
  EXPECT_EQ(Errors(last, "OK"), kTrials - 1);
  EXPECT_GT(last.configs_over_work_group_limit(), 0u);
  size_t first_refused = received.size();
  for (size_t i = 0; i < received.size(); ++i) {
    if (Group(received[i]) > kLimit) {
      first_refused = i;
      break;
    }
  }
  ASSERT_LT(first_refused, received.size()) << "no config above the limit";
  for (size_t i = first_refused + 1; i < received.size(); ++i) {
    EXPECT_LE(Group(received[i]), kLimit) << "request " << i;
  }
  // Skipped configs are no trials: every trial row is a dispatched one.
  EXPECT_EQ(Rows(last.job_id()).size(), kTrials);
}

TEST_F(JobWorkGroupLimitTest, WithoutAReportedLimitEveryProposalIsTried) {
  std::vector<MeasureRequest> received;
  const JobProgress last = RunJob(KernelsLimitedTo(kLimit, false), &received);
  ASSERT_EQ(last.state(), tunefleet::v1::JOB_STATE_DONE) << last.message();
  EXPECT_EQ(last.work_group_limit(), 0u);
  EXPECT_EQ(last.configs_over_work_group_limit(), 0u);
  uint32_t above = 0;
  for (const MeasureRequest& r : received) above += Group(r) > kLimit;
  EXPECT_GT(above, 1u);
  EXPECT_EQ(Errors(last, "INVALID_CONFIG"), above);
}

// A limit below every config's work-group: after the first refusal every
// proposal is skipped without a trial, and after 4096 of them in a row
// (Job::kMaxSkippedInARow; the GEMM space has 20736 configs) the job ends
// as if its space ran out, saying why.
TEST_F(JobWorkGroupLimitTest, ProposalsAllAboveTheLimitEndTheJob) {
  std::vector<MeasureRequest> received;
  const JobProgress last = RunJob(KernelsLimitedTo(1, true), &received);
  ASSERT_EQ(last.state(), tunefleet::v1::JOB_STATE_DONE) << last.message();
  EXPECT_EQ(last.work_group_limit(), 1u);
  EXPECT_EQ(last.trials_done(), 1u);
  EXPECT_EQ(Errors(last, "INVALID_CONFIG"), 1u);
  EXPECT_GE(last.configs_over_work_group_limit(), 4096u);
  EXPECT_LT(last.configs_over_work_group_limit(), last.space_size());
  EXPECT_NE(last.message().find("above the kernels' work-group limit of 1"),
            std::string::npos)
      << last.message();
}

}  // namespace
}  // namespace tunefleet::server
