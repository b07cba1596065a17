// Driver drift (docs/DRIVER_DRIFT.md), with real tunefleet-server,
// tunefleet-agent and tunefleet processes on loopback, measuring on PoCL:
// an agent whose driver version differs (TUNEFLEET_AGENT_DRIVER_VERSION)
// joins a key that has records; the key gains a second driver revision, a
// re-validation job re-measures the key's best configs on that agent only
// and completes, and `tunefleet devices --json` shows both revisions and
// the outcomes; `emit --server` writes both revisions, the new one with
// the re-validation's measurements. An agent that differs in anything else
// (compute units) is still refused the key.
#include <stdlib.h>

#include <set>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "contract/device_info_revision.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/support/agent_hello.h"
#include "tests/support/command_runner.h"
#include "tests/support/fleet_harness.h"
#include "tunefleet/v1/agent.grpc.pb.h"

namespace tunefleet {
namespace {

using testing::FleetHarness;

constexpr char kDriftKey[] = "drift";
constexpr char kNewDriver[] = "pocl-drift-test 9.9";
constexpr int kTop = 2;  // --revalidate-top

// The key's entry of the server's device list, or nullopt.
std::optional<tunefleet::v1::DeviceStatus> Key(const FleetHarness& fleet) {
  auto devices = fleet.Devices();
  if (!devices) return std::nullopt;
  for (const auto& d : devices->devices()) {
    if (d.device_key() == kDriftKey) return d;
  }
  return std::nullopt;
}

// Says Hello for kDriftKey with `device` as an agent would; the stream's
// status once the server answered (OK: welcomed).
grpc::Status HelloWith(const FleetHarness& fleet,
                       const tunefleet::v1::DeviceInfo& device) {
  auto stub = fleet.StubAs<tunefleet::v1::AgentService>(fleet.agent_token());
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() +
                       std::chrono::seconds(20));
  auto stream = stub->Connect(&context);
  stream->Write(testing::AgentHello(kDriftKey, device, "unlike-agent",
                                    contract::kDeviceInfoRevision));
  tunefleet::v1::ServerMessage reply;
  if (stream->Read(&reply) && reply.has_welcome()) {
    context.TryCancel();
    (void)stream->Finish();
    return grpc::Status::OK;
  }
  return stream->Finish();
}

TEST(DriverDrift, ANewDriverIsAdmittedAndItsRecordsRevalidated) {
  FleetHarness fleet("driver_drift");
  ASSERT_TRUE(fleet.StartServer({"--revalidate-top", std::to_string(kTop)}));
  ASSERT_TRUE(fleet.StartAgents(1, kDriftKey));
  // Records on the first driver.
  const int64_t tuned = fleet.Submit(testing::SmallGemmJob(kDriftKey, 8, 0, 3));
  ASSERT_GT(tuned, 0);
  auto ended = fleet.AwaitEnd(tuned, std::chrono::seconds(180));
  ASSERT_TRUE(ended.has_value());
  ASSERT_EQ(ended->state(), tunefleet::v1::JOB_STATE_DONE) << ended->message();
  auto before = Key(fleet);
  ASSERT_TRUE(before.has_value());
  ASSERT_EQ(before->driver_revisions_size(), 1);
  const std::string old_driver = before->device().driver_version();
  ASSERT_NE(old_driver, kNewDriver);

  // A second agent of the same device with another driver joins.
  ASSERT_EQ(setenv("TUNEFLEET_AGENT_DRIVER_VERSION", kNewDriver, 1), 0);
  fleet.StartAgent(1, kDriftKey);
  unsetenv("TUNEFLEET_AGENT_DRIVER_VERSION");
  ASSERT_TRUE(
      FleetHarness::WaitFor([&] { return fleet.Connected(kDriftKey) == 2; },
                            std::chrono::seconds(60)))
      << testing::ReadAll(fleet.dir() + "/server.log");

  // Its revision's re-validation runs to the end.
  std::optional<tunefleet::v1::DeviceStatus> after;
  ASSERT_TRUE(FleetHarness::WaitFor(
      [&] {
        after = Key(fleet);
        if (!after || after->driver_revisions_size() != 2) return false;
        const auto& r = after->driver_revisions(1);
        return r.revalidation_job_ids_size() > 0 &&
               r.revalidation_pending() == 0;
      },
      std::chrono::seconds(180)))
      << testing::ReadAll(fleet.dir() + "/server.log");
  const tunefleet::v1::DriverRevision& first = after->driver_revisions(0);
  const tunefleet::v1::DriverRevision& second = after->driver_revisions(1);
  EXPECT_EQ(first.revision(), 1u);
  EXPECT_EQ(first.driver_version(), old_driver);
  EXPECT_EQ(first.revalidation_job_ids_size(), 0);
  EXPECT_EQ(second.revision(), 2u);
  EXPECT_EQ(second.driver_version(), kNewDriver);
  // One task (one workload, one template): one job, its kTop best configs,
  // measured right on the same PoCL (same or slower, never wrong).
  ASSERT_EQ(second.revalidation_job_ids_size(), 1);
  EXPECT_EQ(second.revalidated_same() + second.revalidated_slower(),
            static_cast<uint32_t>(kTop));
  EXPECT_EQ(second.revalidated_wrong(), 0u);
  EXPECT_EQ(second.revalidated_failed(), 0u);
  const int64_t job = second.revalidation_job_ids(0);
  auto revalidation = fleet.AwaitEnd(job, std::chrono::seconds(30));
  ASSERT_TRUE(revalidation.has_value());
  EXPECT_EQ(revalidation->state(), tunefleet::v1::JOB_STATE_DONE)
      << revalidation->message();
  EXPECT_EQ(revalidation->trials_done(), static_cast<uint32_t>(kTop));

  // Every trial of the job ran on the agent with the new driver.
  std::set<std::string> revalidated;  // the configs it measured OK
  {
    grpc::ClientContext context;
    tunefleet::v1::QueryRecordsRequest query;
    query.set_job_id(job);
    tunefleet::v1::QueryRecordsResponse records;
    ASSERT_TRUE(fleet.Stub()->QueryRecords(&context, query, &records).ok());
    ASSERT_EQ(records.records_size(), kTop);
    for (const auto& r : records.records()) {
      EXPECT_EQ(r.agent_name(), "agent-1") << r.trial_id();
      EXPECT_EQ(r.provenance().driver_version(), kNewDriver);
      std::vector<std::string> knobs;
      for (const auto& k : r.config().knobs()) {
        knobs.push_back(absl::StrCat(k.name(), "=", k.value()));
      }
      if (r.error() == tunefleet::v1::Measurement::OK) {
        revalidated.insert(absl::StrJoin(knobs, ","));
      }
    }
  }

  // `emit` writes both revisions, the new one with the re-validation's
  // measurements (docs/DRIVER_DRIFT.md).
  {
    const std::string out = fleet.dir() + "/emitted";
    const testing::CommandResult emit = testing::RunCommand(absl::StrCat(
        "timeout -s KILL 60 ", testing::CliBinary(), " emit ",
        "--json --device-key ", kDriftKey, " --out ", out, " --server ",
        fleet.address(), " --token ", fleet.reader_token()));
    ASSERT_EQ(emit.exit_code, 0) << emit.err;
    EXPECT_EQ(nlohmann::json::parse(emit.out).value("driver_revisions", 0), 2)
        << emit.out;
    const std::string table = testing::ReadAll(out + "/table.tftable");
    EXPECT_TRUE(testing::HasDriverRevision(table, old_driver, 1)) << table;
    EXPECT_TRUE(testing::HasDriverRevision(table, kNewDriver, 2)) << table;
    // One entry per revision; revision 2's (device line 1) is a config
    // the re-validation measured OK.
    int entries = 0;
    bool new_entry_revalidated = false;
    for (absl::string_view line : absl::StrSplit(table, '\n')) {
      if (!absl::StartsWith(line, "entry\t")) continue;
      ++entries;
      const std::vector<std::string> f = absl::StrSplit(line, '\t');
      ASSERT_GE(f.size(), 15u) << line;
      if (f[1] == "1") new_entry_revalidated = revalidated.contains(f[14]);
    }
    EXPECT_EQ(entries, 2) << table;
    EXPECT_TRUE(new_entry_revalidated) << table;
  }

  // The CLI shows the same in the contract's vocabulary.
  const testing::CommandResult cli = testing::RunCommand(absl::StrCat(
      "timeout -s KILL 30 ", testing::CliBinary(), " devices ",
      "--json --server ", fleet.address(), " --token ", fleet.reader_token()));
  ASSERT_EQ(cli.exit_code, 0) << cli.err;
  const nlohmann::json list = nlohmann::json::parse(cli.out);
  bool found = false;
  for (const nlohmann::json& d : list) {
    if (d.at("device_key") != kDriftKey) continue;
    found = true;
    const nlohmann::json& revisions = d.at("driver_revisions");
    ASSERT_EQ(revisions.size(), 2u) << cli.out;
    EXPECT_EQ(revisions[1].at("driver_version"), kNewDriver);
    EXPECT_EQ(revisions[1].value("revalidated_same", 0) +
                  revisions[1].value("revalidated_slower", 0),
              kTop)
        << cli.out;
    EXPECT_EQ(revisions[1].value("revalidation_pending", 0), 0) << cli.out;
  }
  EXPECT_TRUE(found) << cli.out;

  // Another difference than the driver is still refused.
  tunefleet::v1::DeviceInfo unlike = after->device();
  unlike.set_compute_units(unlike.compute_units() + 1);
  const grpc::Status refused = HelloWith(fleet, unlike);
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_TRUE(absl::StrContains(refused.error_message(), "compute_units"))
      << refused.error_message();
  // ... and one differing in the driver alone is welcomed.
  tunefleet::v1::DeviceInfo other_driver = after->device();
  other_driver.set_driver_version("yet another driver");
  EXPECT_TRUE(HelloWith(fleet, other_driver).ok());
}

}  // namespace
}  // namespace tunefleet
