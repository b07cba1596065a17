// `tunefleet run --server`: a model plan run on a connected agent through
// the server (TuningService.RunModel, docs/MODEL_RUNTIME.md), as a board
// or phone would run it. Real tunefleet-server and tunefleet-agent
// processes on loopback, real SQLite, real OpenCL (PoCL in CI): the small
// model's outputs from the agent match ONNX Runtime's (skipped, with the
// reason, where ORT is absent) and this machine's own run, and its runs
// with device buffers come back as a local run's do; a key with no
// agent is UNAVAILABLE naming the key; a reader may not run models; a plan
// of another model or a truncated weights file is refused with the
// runtime's message, and the agent goes on serving.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "base/npy.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/support/command_runner.h"
#include "tests/support/fleet_harness.h"
#include "tests/support/onnx_test_models.h"
#include "tests/support/ort_expect.h"
#include "tests/support/ort_oracle.h"
#include "tests/support/run_outputs.h"
#include "tests/support/small_net_files.h"
#include "tunefleet/v1/tuning.grpc.pb.h"

namespace tunefleet::testing {
namespace {

using ::testing::HasSubstr;

class ModelRunFleetTest : public ::testing::Test {
 protected:
  // The device key of the fleet's one agent.
  static constexpr char kFleetRunKey[] = "fleetrun";

  void SetUp() override {
    fleet_ = std::make_unique<FleetHarness>("model_run_fleet");
    ASSERT_TRUE(fleet_->StartFleet(1, kFleetRunKey))
        << ReadAll(fleet_->agent_log(0));
    dir_ = fleet_->dir();
    absl::StatusOr<testing::SmallNetFiles> files =
        testing::WriteSmallNetFiles(dir_);
    ASSERT_TRUE(files.ok()) << files.status();
    model_ = files->model;
    input_ = files->input;
    tuner_token_ = dir_ + "/tuner.token";
    std::ofstream(tuner_token_) << fleet_->tuner_token() << "\n";
  }

  // `tunefleet run` of the small model with the records of the fleet's
  // server (none: every layer naive).
  testing::CommandResult Run(const std::string& args) {
    return RunCommand("cd " + dir_ + " && " + CliBinary() + " run --onnx " +
                      model_ + " --input-shape " + kSmallNetShape +
                      " --server " + fleet_->address() + " --token-file " +
                      tuner_token_ + " " + args);
  }

  // The run's saved outputs; one that cannot be read fails the test and
  // leaves the map empty.
  std::map<std::string, base::NpyArray> Outputs(const nlohmann::json& j) {
    auto out = testing::ReadSavedOutputs(j);
    EXPECT_TRUE(out.ok()) << out.status();
    if (!out.ok()) return {};
    return *std::move(out);
  }

  grpc::Status RunModel(const tunefleet::v1::RunModelRequest& request,
                        tunefleet::v1::RunModelResult* result,
                        const std::string& token) {
    auto stub = fleet_->StubAs<tunefleet::v1::TuningService>(token);
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() +
                         std::chrono::seconds(120));
    return stub->RunModel(&context, request, result);
  }

  std::unique_ptr<FleetHarness> fleet_;
  std::string dir_, model_, input_, tuner_token_;
};

TEST_F(ModelRunFleetTest, RunsOnTheAgentAndMatchesOnnxRuntime) {
  // No --device-key: the one key with a connected agent.
  auto r = Run("--input image=" + input_ + " --save-outputs " + dir_ +
               "/agent --runs 2 --warmup 1 --json");
  ASSERT_EQ(r.exit_code, 0) << r.err << ReadAll(fleet_->agent_log(0));
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["device_key"], kFleetRunKey);
  EXPECT_THAT(j["run_on"].get<std::string>(),
              HasSubstr("an agent of device key fleetrun"));
  EXPECT_GT(j["latency_ms"]["median"].get<double>(), 0);
  // The runs with inputs and outputs in device buffers came back from the
  // agent, as a local run prints them.
  ASSERT_TRUE(j.contains("device_buffers_latency_ms")) << r.out;
  const nlohmann::json& on_device = j["device_buffers_latency_ms"];
  EXPECT_GT(on_device["p10"].get<double>(), 0);
  EXPECT_LE(on_device["p10"].get<double>(), on_device["median"].get<double>());
  EXPECT_LE(on_device["median"].get<double>(), on_device["p90"].get<double>());
  EXPECT_GT(j["device_buffers_submit_cpu_ms"].get<double>(), 0);
  EXPECT_GT(j["peak_device_bytes"].get<int64_t>(), 0);
  EXPECT_EQ(j["entries"]["reference"].get<int>(), j["layers"].get<int>());
  // The agent ran it, in a model-run process of its own.
  EXPECT_THAT(ReadAll(fleet_->agent_log(0)), HasSubstr("model run 1: done"));
  const std::map<std::string, base::NpyArray> agent = Outputs(j);
  ASSERT_FALSE(agent.empty());

  // The same plan run here (--local) on the same kind of device gives the
  // same outputs.
  auto local = Run("--device-key " + std::string(kFleetRunKey) +
                   " --local --input image=" + input_ + " --save-outputs " +
                   dir_ + "/local --runs 1 --warmup 0 --json");
  ASSERT_EQ(local.exit_code, 0) << local.err;
  const nlohmann::json lj = nlohmann::json::parse(local.out);
  EXPECT_EQ(lj["run_on"], "this machine");
  EXPECT_TRUE(testing::OutputsMatch(agent, Outputs(lj), 1e-6));

  TUNEFLEET_ORT_ORACLE_OR_SKIP(oracle);
  EXPECT_TRUE(testing::MatchesOrt(oracle, model_, {{"image", input_}}, agent));
}

TEST_F(ModelRunFleetTest, AKeyWithoutAgentsIsUnavailable) {
  auto r = Run("--device-key nobody --save-outputs " + dir_ + "/out");
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_THAT(r.err, HasSubstr("no agent of device key 'nobody' is connected"));
  EXPECT_THAT(r.err, HasSubstr("connected: fleetrun (1 agent)"));
  EXPECT_FALSE(std::filesystem::exists(dir_ + "/out"));

  // The RPC itself, for a key no agent serves, and for a reader's token.
  tunefleet::v1::RunModelRequest request;
  request.set_device_key("nobody");
  request.set_plan("x");
  request.set_runs(1);
  tunefleet::v1::RunModelResult result;
  grpc::Status s = RunModel(request, &result, fleet_->tuner_token());
  EXPECT_EQ(s.error_code(), grpc::StatusCode::UNAVAILABLE);
  EXPECT_THAT(s.error_message(),
              HasSubstr("no agent of device key 'nobody' is connected"));
  request.set_device_key(kFleetRunKey);
  s = RunModel(request, &result, fleet_->reader_token());
  EXPECT_EQ(s.error_code(), grpc::StatusCode::PERMISSION_DENIED)
      << s.error_message();
}

TEST_F(ModelRunFleetTest, APlanOfAnotherModelIsRefusedWithTheRuntimesMessage) {
  // A plan of the small model for the fleet's key, saved by a local run.
  const std::string lib = dir_ + "/lib";
  auto r = Run("--device-key " + std::string(kFleetRunKey) +
               " --local --runs 1 --warmup 0 --profiled-runs 0 --json "
               "--save-plan " +
               lib);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string sha =
      nlohmann::json::parse(r.out)["model_sha256"].get<std::string>();
  tunefleet::v1::RunModelRequest request;
  request.set_device_key(kFleetRunKey);
  request.set_plan(ReadAll(lib + "/plans/fleetrun/small.tfplan"));
  request.set_weights(ReadAll(lib + "/plans/fleetrun/small.tfweights"));
  request.set_runs(1);
  tunefleet::v1::RunModelTensor* input = request.add_inputs();
  input->mutable_values()->Resize(1 * 3 * 17 * 23, 0.5f);
  ASSERT_FALSE(request.plan().empty());

  // Another model's hash.
  request.set_model_sha256(std::string(64, '0'));
  tunefleet::v1::RunModelResult result;
  grpc::Status s = RunModel(request, &result, fleet_->tuner_token());
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(s.error_message(), HasSubstr("made for another model"));
  // A truncated weights file.
  request.set_model_sha256(sha);
  const std::string weights = request.weights();
  request.set_weights(weights.substr(0, weights.size() / 2));
  s = RunModel(request, &result, fleet_->tuner_token());
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(s.error_message(), HasSubstr("truncated"));
  // The agent is still there and runs the whole plan.
  request.set_weights(weights);
  s = RunModel(request, &result, fleet_->tuner_token());
  ASSERT_TRUE(s.ok()) << s.error_message();
  ASSERT_EQ(result.outputs_size(), 1);
  EXPECT_GT(result.outputs(0).values_size(), 0);
  EXPECT_EQ(result.latency_ns_size(), 1);
  EXPECT_FALSE(result.agent_name().empty());
  // Runs with device buffers only when asked for, as many as the runs.
  EXPECT_EQ(result.device_buffers_latency_ns_size(), 0);
  request.set_device_buffer_runs(true);
  request.set_runs(3);
  s = RunModel(request, &result, fleet_->tuner_token());
  ASSERT_TRUE(s.ok()) << s.error_message();
  EXPECT_EQ(result.latency_ns_size(), 3);
  ASSERT_EQ(result.device_buffers_latency_ns_size(), 3);
  ASSERT_EQ(result.device_buffers_submit_cpu_ns_size(), 3);
  for (int i = 0; i < 3; ++i) {
    EXPECT_GT(result.device_buffers_latency_ns(i), 0) << i;
    EXPECT_GT(result.device_buffers_submit_cpu_ns(i), 0) << i;
  }
}

}  // namespace
}  // namespace tunefleet::testing
