// model_run_remote/run_messages.h: a RunRequest and a RunResult survive the
// trip through RunModelRequest / RunModelResult; errors keep their code and
// message; bad messages are refused naming the field.
#include "model_run_remote/run_messages.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tunefleet::model_run_remote {
namespace {

using ::testing::HasSubstr;

TEST(RunMessages, RequestRoundTrips) {
  model_run::RunRequest r;
  r.plan_file = std::string("plan\0bytes", 10);
  r.weights_file = "weights";
  r.model_sha256 = std::string(64, 'a');
  r.device_key = "key";
  r.inputs = {{1.5f, -2.0f}, {3.0f}};
  r.warmup = 2;
  r.runs = 7;
  r.profiled_runs = 0;
  r.device_buffer_runs = true;
  tunefleet::v1::RunModelRequest m = ToProto(r, {"x", "y"}, 1234);
  EXPECT_EQ(m.timeout_ms(), 1234u);
  EXPECT_EQ(m.inputs(1).name(), "y");
  EXPECT_TRUE(m.device_buffer_runs());
  absl::StatusOr<model_run::RunRequest> back = FromProto(m);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->plan_file, r.plan_file);
  EXPECT_EQ(back->weights_file, r.weights_file);
  EXPECT_EQ(back->model_sha256, r.model_sha256);
  EXPECT_EQ(back->device_key, r.device_key);
  EXPECT_EQ(back->inputs, r.inputs);
  EXPECT_EQ(back->warmup, 2);
  EXPECT_EQ(back->runs, 7);
  EXPECT_EQ(back->profiled_runs, 0);
  EXPECT_TRUE(back->device_buffer_runs);
  // Not asked for (or a client before the field): none on the agent.
  r.device_buffer_runs = false;
  m = ToProto(r, {}, 0);
  EXPECT_FALSE(m.device_buffer_runs());
  back = FromProto(m);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_FALSE(back->device_buffer_runs);
}

TEST(RunMessages, BadRequestsAreRefusedNamingTheField) {
  tunefleet::v1::RunModelRequest m;
  m.set_runs(1);
  EXPECT_THAT(FromProto(m).status().message(), HasSubstr("run_model.plan"));
  m.set_plan("p");
  m.set_runs(0);
  EXPECT_THAT(FromProto(m).status().message(), HasSubstr("run_model.runs"));
  m.set_runs(1000000);
  EXPECT_TRUE(absl::IsInvalidArgument(FromProto(m).status()));
}

TEST(RunMessages, ResultRoundTrips) {
  model_run::RunResult r;
  r.device.device_name = "dev";
  r.device.device_vendor = "vendor";
  r.output_names = {"out"};
  r.output_dims = {{1, 2, 3}};
  r.outputs = {{1, 2, 3, 4, 5, 6}};
  r.latency_ns = {10, 20};
  r.host_cpu_ns = {1, 2};
  r.device_buffers_latency_ns = {7, 8};
  r.device_buffers_submit_cpu_ns = {3, 4};
  r.layers.push_back({"conv", "conv2d:C=1", "tuned", "{}", 55, -1});
  r.device_bytes = 100;
  r.arena_bytes = 40;
  r.tensor_bytes = 80;
  r.weights_bytes = 20;
  r.estimate_ns = 12.5;
  r.layers_without_estimate = 1;
  r.commands_per_run = 9;
  r.replanned = true;
  r.describe = "layers";
  absl::StatusOr<model_run::RunResult> back = FromProto(ToProto(r));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->device.device_name, "dev");
  EXPECT_EQ(back->output_names, r.output_names);
  EXPECT_EQ(back->output_dims, r.output_dims);
  EXPECT_EQ(back->outputs, r.outputs);
  EXPECT_EQ(back->latency_ns, r.latency_ns);
  EXPECT_EQ(back->host_cpu_ns, r.host_cpu_ns);
  EXPECT_EQ(back->device_buffers_latency_ns, r.device_buffers_latency_ns);
  EXPECT_EQ(back->device_buffers_submit_cpu_ns, r.device_buffers_submit_cpu_ns);
  ASSERT_EQ(back->layers.size(), 1u);
  EXPECT_EQ(back->layers[0].workload, "conv2d:C=1");
  EXPECT_EQ(back->layers[0].estimate_ns, -1);
  EXPECT_EQ(back->arena_bytes, 40u);
  EXPECT_EQ(back->estimate_ns, 12.5);
  EXPECT_EQ(back->layers_without_estimate, 1);
  EXPECT_EQ(back->commands_per_run, 9);
  EXPECT_TRUE(back->replanned);
  EXPECT_EQ(back->record, "off");
  EXPECT_EQ(back->describe, "layers");
}

TEST(RunMessages, ErrorsKeepTheirCodeAndMessage) {
  absl::StatusOr<model_run::RunResult> back = FromProto(
      ToProto(absl::InvalidArgumentError("plan file: made for another model")));
  EXPECT_TRUE(absl::IsInvalidArgument(back.status()));
  EXPECT_EQ(back.status().message(), "plan file: made for another model");
  tunefleet::v1::RunModelResult odd;
  odd.set_error("?");
  odd.set_error_code(99);
  EXPECT_EQ(FromProto(odd).status().code(), absl::StatusCode::kUnknown);
  // Outputs that do not fill their shape.
  tunefleet::v1::RunModelResult short_output;
  auto* t = short_output.add_outputs();
  t->set_name("o");
  t->add_dims(4);
  t->add_values(1);
  EXPECT_THAT(FromProto(short_output).status().message(),
              HasSubstr("output 'o' holds 1 values"));
}

}  // namespace
}  // namespace tunefleet::model_run_remote
