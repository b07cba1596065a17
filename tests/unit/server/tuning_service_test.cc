// TuningServiceImpl's calls (without gRPC: called directly) over a real job
// manager, scheduler and store, with fake agents (job_fixture.h): pages of
// jobs and records, GetJob, the trials in flight at a cancel, and why a
// job waits.
#include "server/tuning_service.h"

#include <limits>
#include <set>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/server/job_fixture.h"

namespace tunefleet::server {
namespace {

using ::testing::HasSubstr;
using tunefleet::v1::TuningRecord;

class TuningServiceTest : public JobManagerTest {
 protected:
  void SetUp() override {
    JobManagerTest::SetUp();
    service_ = std::make_unique<TuningServiceImpl>(store_, scheduler_.get(),
                                                   jobs_.get());
  }
  void TearDown() override {
    service_.reset();
    JobManagerTest::TearDown();
  }

  // Connects "agent-1" (2 slots), answering every request with
  // MixedAnswer; the agent.
  FakeAgent& ConnectAnsweringAgent() {
    FakeAgent& agent = Connect("agent-1", 2);
    AnswerAll(agent, MixedAnswer);
    return agent;
  }

  // Runs a job of `trials` trials to its end (an agent must answer).
  int64_t RunJob(uint32_t trials) {
    std::shared_ptr<Job> job = Submit(Request(trials));
    EXPECT_NE(job, nullptr);
    if (job == nullptr) return 0;
    const JobProgress done = WaitFor(*job, Ended);
    EXPECT_EQ(done.trials_done(), trials) << done.message();
    return job->id();
  }

  // Every page of `request` (page_size set by the caller); the pages' sizes
  // in `sizes`.
  std::vector<TuningRecord> AllPages(tunefleet::v1::QueryRecordsRequest request,
                                     std::vector<int>* sizes) {
    std::vector<TuningRecord> out;
    for (int page = 0; page < 1000; ++page) {
      tunefleet::v1::QueryRecordsResponse response;
      grpc::Status s = service_->QueryRecords(nullptr, &request, &response);
      EXPECT_TRUE(s.ok()) << s.error_message();
      if (!s.ok()) break;
      sizes->push_back(response.records_size());
      out.insert(out.end(), response.records().begin(),
                 response.records().end());
      if (response.next_page_token().empty()) break;
      request.set_page_token(response.next_page_token());
    }
    return out;
  }

  std::unique_ptr<TuningServiceImpl> service_;
};

TEST_F(TuningServiceTest, RecordPagesCoverTheQueryOnceEach) {
  FakeAgent& agent = ConnectAnsweringAgent();
  const int64_t job_id = RunJob(7);

  tunefleet::v1::QueryRecordsRequest all;
  all.set_job_id(job_id);
  tunefleet::v1::QueryRecordsResponse unpaged;
  ASSERT_TRUE(service_->QueryRecords(nullptr, &all, &unpaged).ok());
  ASSERT_EQ(unpaged.records_size(), 7);
  EXPECT_TRUE(unpaged.next_page_token().empty());

  tunefleet::v1::QueryRecordsRequest paged = all;
  paged.set_page_size(3);
  std::vector<int> sizes;
  const std::vector<TuningRecord> pages = AllPages(paged, &sizes);
  EXPECT_EQ(sizes, (std::vector<int>{3, 3, 1}));
  ASSERT_EQ(pages.size(), 7u);
  for (int i = 0; i < 7; ++i) {
    EXPECT_EQ(pages[i].trial_id(), unpaged.records(i).trial_id());
    // Records carry who measured them and when.
    EXPECT_EQ(pages[i].agent_name(), agent.session()->name());
    EXPECT_GT(pages[i].measured_unix_ms(), 0);
    EXPECT_GE(pages[i].measured_unix_ms(), pages[i].created_unix_ms());
    if (pages[i].error() != tunefleet::v1::Measurement::OK) {
      EXPECT_EQ(pages[i].error_message(), "the fake agent says so");
    }
  }
}

TEST_F(TuningServiceTest, BestRecordPagesAndBadTokens) {
  ConnectAnsweringAgent();
  RunJob(3);
  tunefleet::v1::SubmitJobRequest other = Request(3);
  *other.mutable_workload() = trial::WorkloadToProto(
      *templates::Workload::Parse("gemm", "M=32,N=32,K=32"));
  std::shared_ptr<Job> second = Submit(other);
  ASSERT_NE(second, nullptr);
  WaitFor(*second, Ended);

  tunefleet::v1::QueryRecordsRequest best;
  best.set_best_only(true);
  best.set_page_size(1);
  std::vector<int> sizes;
  const std::vector<TuningRecord> pages = AllPages(best, &sizes);
  EXPECT_EQ(sizes, (std::vector<int>{1, 1}));
  ASSERT_EQ(pages.size(), 2u);
  EXPECT_NE(pages[0].workload_key(), pages[1].workload_key());

  // A token of another list, or made up, is refused naming the field.
  tunefleet::v1::QueryRecordsRequest first = best;
  tunefleet::v1::QueryRecordsResponse response;
  ASSERT_TRUE(service_->QueryRecords(nullptr, &first, &response).ok());
  tunefleet::v1::QueryRecordsRequest wrong;
  wrong.set_page_token(response.next_page_token());  // a "best" token
  tunefleet::v1::QueryRecordsResponse ignored;
  grpc::Status s = service_->QueryRecords(nullptr, &wrong, &ignored);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(s.error_message(), HasSubstr("page_token"));
  wrong.set_page_token("made-up");
  EXPECT_EQ(service_->QueryRecords(nullptr, &wrong, &ignored).error_code(),
            grpc::StatusCode::INVALID_ARGUMENT);
  tunefleet::v1::QueryRecordsRequest too_big;
  too_big.set_page_size(validation::kMaxRecordsPage + 1);
  s = service_->QueryRecords(nullptr, &too_big, &ignored);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(s.error_message(), HasSubstr("page_size"));
}

TEST_F(TuningServiceTest, JobPagesAreNewestFirstAndDisjoint) {
  ConnectAnsweringAgent();
  std::vector<int64_t> ids;
  for (int i = 0; i < 5; ++i) ids.push_back(RunJob(1));

  tunefleet::v1::ListJobsRequest request;
  request.set_page_size(2);
  std::vector<int64_t> listed;
  std::vector<int> sizes;
  for (int page = 0; page < 10; ++page) {
    tunefleet::v1::ListJobsResponse response;
    ASSERT_TRUE(service_->ListJobs(nullptr, &request, &response).ok());
    sizes.push_back(response.jobs_size());
    for (const auto& j : response.jobs()) listed.push_back(j.job_id());
    if (response.next_page_token().empty()) break;
    request.set_page_token(response.next_page_token());
  }
  EXPECT_EQ(sizes, (std::vector<int>{2, 2, 1}));
  EXPECT_EQ(listed, std::vector<int64_t>(ids.rbegin(), ids.rend()));
}

TEST_F(TuningServiceTest, GetJobIsTheJobsProgress) {
  ConnectAnsweringAgent();
  const int64_t job_id = RunJob(4);
  tunefleet::v1::GetJobRequest request;
  request.set_job_id(job_id);
  JobProgress got;
  ASSERT_TRUE(service_->GetJob(nullptr, &request, &got).ok());
  EXPECT_EQ(got.job_id(), job_id);
  EXPECT_EQ(got.state(), tunefleet::v1::JOB_STATE_DONE);
  EXPECT_EQ(got.trials_done(), 4u);
  EXPECT_TRUE(got.in_flight_trial_ids().empty());
  EXPECT_TRUE(got.waiting_reason().empty());

  request.set_job_id(job_id + 100);
  EXPECT_EQ(service_->GetJob(nullptr, &request, &got).error_code(),
            grpc::StatusCode::NOT_FOUND);
  request.set_job_id(0);
  EXPECT_EQ(service_->GetJob(nullptr, &request, &got).error_code(),
            grpc::StatusCode::INVALID_ARGUMENT);
}

// The cancel's answer names the trials agents still hold; they end with the
// job, unmeasured, so the job's count stays the answer's, live and stored.
TEST_F(TuningServiceTest, CancelNamesTheTrialsInFlight) {
  FakeAgent& agent = Connect("agent-1", 3);
  std::shared_ptr<Job> job = Submit(Request(50));
  ASSERT_NE(job, nullptr);
  // One answered, then three held by the agent unanswered.
  const MeasureRequest first = NextRequest(agent);
  Deliver(*ledger_, first, Ok(1000));
  std::vector<MeasureRequest> held;
  for (int i = 0; i < 3; ++i) held.push_back(NextRequest(agent));

  tunefleet::v1::CancelJobRequest cancel;
  cancel.set_job_id(job->id());
  JobProgress cancelled;
  ASSERT_TRUE(service_->CancelJob(nullptr, &cancel, &cancelled).ok());
  EXPECT_EQ(cancelled.state(), tunefleet::v1::JOB_STATE_CANCELLED);
  EXPECT_EQ(cancelled.trials_done(), 1u);
  std::set<int64_t> held_ids;
  for (const auto& r : held) held_ids.insert(r.trial_id());
  EXPECT_EQ(std::set<int64_t>(cancelled.in_flight_trial_ids().begin(),
                              cancelled.in_flight_trial_ids().end()),
            held_ids);

  for (const auto& r : held) Deliver(*ledger_, r, Ok(900));
  tunefleet::v1::GetJobRequest get;
  get.set_job_id(job->id());
  JobProgress after;
  ASSERT_TRUE(service_->GetJob(nullptr, &get, &after).ok());
  EXPECT_TRUE(after.in_flight_trial_ids().empty());
  absl::StatusOr<store::JobTally> tally = store_->TallyJob(job->id());
  ASSERT_TRUE(tally.ok()) << tally.status();
  // They ended with the job, unmeasured (CANCELLED): neither done nor
  // errors, so the store, the answer and the job all count the same.
  EXPECT_EQ(tally->done, cancelled.trials_done());
  EXPECT_EQ(tally->cancelled, 3);
  EXPECT_EQ(tally->errors.count("CANCELLED"), 0u);
  EXPECT_EQ(after.trials_done(), cancelled.trials_done());
}

TEST_F(TuningServiceTest, AJobWithNoAgentOfItsKeySaysSo) {
  ASSERT_TRUE(store_->UpsertDevice("other-gpu", TestDevice()).ok());
  FakeAgent other("agent-9", "other-gpu", 1, clock_.NowMs());
  scheduler_->AddAgent(other.session());
  std::shared_ptr<Job> job = Submit(Request(4));
  ASSERT_NE(job, nullptr);
  tunefleet::v1::GetJobRequest get;
  get.set_job_id(job->id());
  JobProgress waiting;
  ASSERT_TRUE(service_->GetJob(nullptr, &get, &waiting).ok());
  EXPECT_THAT(waiting.waiting_reason(),
              HasSubstr(absl::StrCat("no agent of device key '", kKey, "'")));
  EXPECT_THAT(waiting.waiting_reason(), HasSubstr("other-gpu (1 agent)"));

  // Once an agent of the key is there, the job no longer waits.
  Connect("agent-1", 1);
  JobProgress running;
  ASSERT_TRUE(service_->GetJob(nullptr, &get, &running).ok());
  EXPECT_EQ(running.waiting_reason(), "");
  scheduler_->RemoveAgent(other.id());
}

// A full disk refuses new work (RESOURCE_EXHAUSTED), but only work that
// would be accepted: a malformed request is refused as such first.
TEST_F(TuningServiceTest, AMalformedRequestIsRefusedAsSuchOnAFullDisk) {
  // No filesystem has this much free: the disk reads as full.
  service_->GuardDisk(::testing::TempDir() + "/guarded.db",
                      std::numeric_limits<uint64_t>::max());
  tunefleet::v1::SubmitJobRequest bad = Request(4);
  bad.set_trials(0);
  tunefleet::v1::SubmitJobResponse response;
  grpc::Status s = service_->SubmitJob(nullptr, &bad, &response);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT)
      << s.error_message();
  EXPECT_THAT(s.error_message(), HasSubstr("trials"));
  tunefleet::v1::SubmitModelJobRequest bad_model;
  tunefleet::v1::SubmitModelJobResponse model_response;
  s = service_->SubmitModelJob(nullptr, &bad_model, &model_response);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT)
      << s.error_message();

  const tunefleet::v1::SubmitJobRequest good = Request(4);
  s = service_->SubmitJob(nullptr, &good, &response);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED)
      << s.error_message();
  EXPECT_THAT(s.error_message(), HasSubstr("disk full"));
}

}  // namespace
}  // namespace tunefleet::server
