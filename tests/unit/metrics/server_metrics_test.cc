// ServerMetrics rendered and read back by the reference parser of the
// format (Python's prometheus_client): families, types, labels and values
// for the counters, gauges and the RPC histogram.
#include "metrics/server_metrics.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <string>

#include "gtest/gtest.h"
#include "metrics/rpc_interceptor.h"
#include "tests/support/prom_parse.h"

namespace tunefleet::metrics {
namespace {

using tunefleet::testing::FamilyType;
using tunefleet::testing::ParsePrometheusText;
using tunefleet::testing::SampleValue;

constexpr char kSubmit[] = "/tunefleet.v1.TuningService/SubmitJob";

TEST(ServerMetrics, RendersWhatTheReferenceParserReads) {
  Snapshot snapshot;
  snapshot.queued_trials = 7;
  snapshot.leases_in_flight = 3;
  snapshot.agents_by_key = {{"pocl-cpu", 2}, {"mali-g78", 1}};
  snapshot.jobs_by_state = {{"running", 1}, {"done", 4}};
  snapshot.model_jobs_by_state = {{"cancelled", 1}};
  snapshot.sqlite_bytes = 123456;
  snapshot.trials_done_by_error = {{"OK", 40}, {"COMPILE_ERROR", 2}};
  ServerMetrics metrics([&snapshot] { return snapshot; });
  metrics.LeasesLost(2, 1);
  metrics.LeasesLost(1, 0);
  metrics.ObserveRpc(kSubmit, "OK", 0.002);
  metrics.ObserveRpc(kSubmit, "OK", 2.0);
  metrics.ObserveRpc(kSubmit, "INVALID_ARGUMENT", 0.0005);

  const auto samples = ParsePrometheusText(metrics.Text());
  ASSERT_FALSE(samples.empty());

  EXPECT_EQ(FamilyType(samples, "tunefleet_trials_done"), "counter");
  EXPECT_EQ(FamilyType(samples, "tunefleet_requeues"), "counter");
  EXPECT_EQ(FamilyType(samples, "tunefleet_trials_abandoned"), "counter");
  EXPECT_EQ(FamilyType(samples, "tunefleet_rpc_duration_seconds"), "histogram");
  for (const char* gauge :
       {"tunefleet_queue_depth", "tunefleet_leases_in_flight",
        "tunefleet_agents_connected", "tunefleet_jobs", "tunefleet_model_jobs",
        "tunefleet_sqlite_bytes"}) {
    EXPECT_EQ(FamilyType(samples, gauge), "gauge") << gauge;
  }

  // Each sample by name and labels, and its value (-1: no such sample).
  const struct {
    const char* name;
    std::map<std::string, std::string> labels;
    double value;
  } kSamples[] = {
      {"tunefleet_trials_done_total", {{"error", "OK"}}, 40},
      {"tunefleet_trials_done_total", {{"error", "COMPILE_ERROR"}}, 2},
      // Every error code of the contract is there from the start.
      {"tunefleet_trials_done_total", {{"error", "TIMEOUT"}}, 0},
      {"tunefleet_trials_done_total", {{"error", "ERROR_UNSPECIFIED"}}, -1},
      {"tunefleet_requeues_total", {}, 3},
      {"tunefleet_trials_abandoned_total", {}, 1},
      {"tunefleet_queue_depth", {}, 7},
      {"tunefleet_leases_in_flight", {}, 3},
      {"tunefleet_sqlite_bytes", {}, 123456},
      {"tunefleet_agents_connected", {{"device_key", "pocl-cpu"}}, 2},
      {"tunefleet_agents_connected", {{"device_key", "mali-g78"}}, 1},
      {"tunefleet_jobs", {{"state", "done"}}, 4},
      {"tunefleet_jobs", {{"state", "running"}}, 1},
      // States the snapshot leaves out read 0.
      {"tunefleet_jobs", {{"state", "failed"}}, 0},
      {"tunefleet_model_jobs", {{"state", "cancelled"}}, 1},
      {"tunefleet_model_jobs", {{"state", "queued"}}, 0},
  };
  for (const auto& sample : kSamples) {
    std::string labels;
    for (const auto& [key, value] : sample.labels) {
      labels += key + "=" + value;
    }
    EXPECT_EQ(SampleValue(samples, sample.name, sample.labels), sample.value)
        << sample.name << "{" << labels << "}";
  }

  // The histogram: buckets are cumulative, +Inf holds every call.
  const std::map<std::string, std::string> ok = {{"method", kSubmit},
                                                 {"code", "OK"}};
  auto bucket = [&](const std::string& le) {
    auto labels = ok;
    labels["le"] = le;
    return SampleValue(samples, "tunefleet_rpc_duration_seconds_bucket",
                       labels);
  };
  EXPECT_EQ(bucket("0.001"), 0);
  EXPECT_EQ(bucket("0.0025"), 1);
  EXPECT_EQ(bucket("1"), 1);
  EXPECT_EQ(bucket("2.5"), 2);
  EXPECT_EQ(bucket("+Inf"), 2);
  EXPECT_EQ(SampleValue(samples, "tunefleet_rpc_duration_seconds_count", ok),
            2);
  EXPECT_DOUBLE_EQ(
      SampleValue(samples, "tunefleet_rpc_duration_seconds_sum", ok), 2.002);
  EXPECT_EQ(SampleValue(samples, "tunefleet_rpc_duration_seconds_count",
                        {{"method", kSubmit}, {"code", "INVALID_ARGUMENT"}}),
            1);
}

TEST(ServerMetrics, FollowsTheSnapshotOnEveryScrape) {
  Snapshot snapshot;
  snapshot.agents_by_key = {{"pocl-cpu", 1}, {"adreno-640", 1}};
  snapshot.trials_done_by_error = {{"OK", 5}};
  ServerMetrics metrics([&snapshot] { return snapshot; });
  auto first = ParsePrometheusText(metrics.Text());
  EXPECT_EQ(SampleValue(first, "tunefleet_agents_connected",
                        {{"device_key", "adreno-640"}}),
            1);

  // An agent gone takes its series with it; a counter moves up to the
  // store's total and never down.
  snapshot.agents_by_key = {{"pocl-cpu", 3}};
  snapshot.trials_done_by_error = {{"OK", 9}, {"WRONG_ANSWER", 1}};
  auto second = ParsePrometheusText(metrics.Text());
  EXPECT_EQ(SampleValue(second, "tunefleet_agents_connected",
                        {{"device_key", "adreno-640"}}),
            -1);
  EXPECT_EQ(SampleValue(second, "tunefleet_agents_connected",
                        {{"device_key", "pocl-cpu"}}),
            3);
  EXPECT_EQ(
      SampleValue(second, "tunefleet_trials_done_total", {{"error", "OK"}}), 9);
  EXPECT_EQ(SampleValue(second, "tunefleet_trials_done_total",
                        {{"error", "WRONG_ANSWER"}}),
            1);

  snapshot.trials_done_by_error = {{"OK", 4}};
  auto third = ParsePrometheusText(metrics.Text());
  EXPECT_EQ(
      SampleValue(third, "tunefleet_trials_done_total", {{"error", "OK"}}), 9);
}

TEST(ServerMetrics, WithoutASnapshotTheLevelsAreZero) {
  ServerMetrics metrics;
  auto samples = ParsePrometheusText(metrics.Text());
  EXPECT_EQ(SampleValue(samples, "tunefleet_queue_depth", {}), 0);
  EXPECT_EQ(SampleValue(samples, "tunefleet_requeues_total", {}), 0);
  EXPECT_EQ(SampleValue(samples, "tunefleet_jobs", {{"state", "queued"}}), 0);
  EXPECT_EQ(FamilyType(samples, "tunefleet_agents_connected"), "");
}

TEST(SqliteBytes, AddsTheWriteAheadLog) {
  const std::string db = ::testing::TempDir() + "/tf_metrics_bytes_" +
                         std::to_string(getpid()) + ".db";
  EXPECT_EQ(SqliteBytes(db), 0);
  std::ofstream(db, std::ios::binary) << std::string(1000, 'x');
  EXPECT_EQ(SqliteBytes(db), 1000);
  std::ofstream(db + "-wal", std::ios::binary) << std::string(24, 'y');
  EXPECT_EQ(SqliteBytes(db), 1024);
  std::filesystem::remove(db);
  std::filesystem::remove(db + "-wal");
}

TEST(GrpcCodeName, SpellsCodesAsGrpcDoes) {
  EXPECT_EQ(GrpcCodeName(grpc::StatusCode::OK), "OK");
  EXPECT_EQ(GrpcCodeName(grpc::StatusCode::PERMISSION_DENIED),
            "PERMISSION_DENIED");
  EXPECT_EQ(GrpcCodeName(grpc::StatusCode::UNAUTHENTICATED), "UNAUTHENTICATED");
  EXPECT_EQ(GrpcCodeName(static_cast<grpc::StatusCode>(99)), "UNKNOWN_CODE");
}

}  // namespace
}  // namespace tunefleet::metrics
