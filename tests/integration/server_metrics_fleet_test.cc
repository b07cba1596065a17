// The server's metrics after real work: a server in this process, an agent
// on PoCL over gRPC on loopback, a GEMM job run to its end; then the text
// of ServerMetrics (what GET /metrics serves) read back by Python's
// prometheus_client parser: trials done by error code add up to the job's
// trials, the job is done, the agent is counted under its key, nothing is
// queued or leased, and the RPC histogram holds the calls made, by method
// and status code.
#include <chrono>
#include <memory>
#include <string>
#include <thread>

#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "kernels_templates/workload.h"
#include "tests/support/in_process_fleet.h"
#include "tests/support/prom_parse.h"
#include "trial/trial_request.h"
#include "tunefleet/v1/tuning.grpc.pb.h"

namespace tunefleet {
namespace {

using tunefleet::testing::FamilyType;
using tunefleet::testing::ParsePrometheusText;
using tunefleet::testing::PromSample;
using tunefleet::testing::SampleValue;

constexpr char kMetricsKey[] = "pocl-metrics";
constexpr uint32_t kMetricsTrials = 6;

class ServerMetricsFleet : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(fleet_.StartServer().ok());
    auto backend = testing::PoclBackend();
    ASSERT_TRUE(backend.ok()) << backend.status();
    const absl::Status agent =
        fleet_.StartAgent(kMetricsKey, *std::move(backend));
    ASSERT_TRUE(agent.ok()) << agent;
    stub_ = fleet_.Stub();
  }

  testing::InProcessFleet fleet_{"server_metrics"};
  std::unique_ptr<tunefleet::v1::TuningService::Stub> stub_;
};

TEST_F(ServerMetricsFleet, MetricsAfterAJobParseAndAddUp) {
  tunefleet::v1::SubmitJobRequest request;
  *request.mutable_workload() = trial::WorkloadToProto(
      *templates::Workload::Parse("gemm", "M=64,N=64,K=64"));
  request.set_trials(kMetricsTrials);
  request.set_strategy(tunefleet::v1::STRATEGY_RANDOM);
  request.set_seed(3);
  tunefleet::v1::SubmitJobResponse submitted;
  {
    grpc::ClientContext context;
    ASSERT_TRUE(stub_->SubmitJob(&context, request, &submitted).ok());
  }
  {
    tunefleet::v1::JobProgress last;
    ASSERT_TRUE(testing::WatchJobToEnd(*stub_, submitted.job_id(), &last).ok());
    ASSERT_EQ(last.state(), tunefleet::v1::JOB_STATE_DONE) << last.message();
    ASSERT_EQ(last.trials_done(), kMetricsTrials);
  }
  {
    // A refused call: counted under its status code.
    tunefleet::v1::SubmitJobRequest bad = request;
    bad.set_trials(0);
    tunefleet::v1::SubmitJobResponse unused;
    grpc::ClientContext context;
    ASSERT_EQ(stub_->SubmitJob(&context, bad, &unused).error_code(),
              grpc::StatusCode::INVALID_ARGUMENT);
  }

  // The interceptor counts a call once its status is sent, which may be
  // just after the client has it: read until the last calls are counted.
  const std::string service = "/tunefleet.v1.TuningService/";
  std::vector<PromSample> samples;
  for (int i = 0; i < 100; ++i) {
    samples = ParsePrometheusText(fleet_.server().metrics().Text());
    if (SampleValue(samples, "tunefleet_rpc_duration_seconds_count",
                    {{"method", service + "SubmitJob"},
                     {"code", "INVALID_ARGUMENT"}}) >= 1 &&
        SampleValue(samples, "tunefleet_rpc_duration_seconds_count",
                    {{"method", service + "WatchJob"}, {"code", "OK"}}) >= 1) {
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ASSERT_FALSE(samples.empty());

  double done = 0;
  for (const PromSample& s : samples) {
    if (s.name == "tunefleet_trials_done_total") done += s.value;
  }
  EXPECT_EQ(done, kMetricsTrials);
  EXPECT_EQ(SampleValue(samples, "tunefleet_jobs", {{"state", "done"}}), 1);
  EXPECT_EQ(SampleValue(samples, "tunefleet_jobs", {{"state", "running"}}), 0);
  EXPECT_EQ(SampleValue(samples, "tunefleet_agents_connected",
                        {{"device_key", kMetricsKey}}),
            1);
  EXPECT_EQ(SampleValue(samples, "tunefleet_queue_depth", {}), 0);
  EXPECT_EQ(SampleValue(samples, "tunefleet_leases_in_flight", {}), 0);
  EXPECT_EQ(SampleValue(samples, "tunefleet_requeues_total", {}), 0);
  EXPECT_GT(SampleValue(samples, "tunefleet_sqlite_bytes", {}), 4096);

  EXPECT_EQ(FamilyType(samples, "tunefleet_rpc_duration_seconds"), "histogram");
  EXPECT_EQ(SampleValue(samples, "tunefleet_rpc_duration_seconds_count",
                        {{"method", service + "SubmitJob"}, {"code", "OK"}}),
            1);
  EXPECT_EQ(SampleValue(samples, "tunefleet_rpc_duration_seconds_count",
                        {{"method", service + "SubmitJob"},
                         {"code", "INVALID_ARGUMENT"}}),
            1);
  EXPECT_EQ(SampleValue(samples, "tunefleet_rpc_duration_seconds_count",
                        {{"method", service + "WatchJob"}, {"code", "OK"}}),
            1);
}

}  // namespace
}  // namespace tunefleet
