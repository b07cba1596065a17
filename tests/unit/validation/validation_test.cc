// Unit tests of tunefleet_validation: configs must lie in the template's
// space, agents' hellos and measurements are checked field by field, and a
// bad measurement can neither crash a job nor win it.
#include "validation/validation.h"

#include <cmath>
#include <functional>
#include <limits>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernels_templates/registry.h"
#include "kernels_templates/workload.h"
#include "tests/support/test_device.h"
#include "trial/trial_request.h"

namespace tunefleet::validation {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

using ::tunefleet::testing::TestDevice;

TEST(Validation, ConfigsMustLieInTheTemplatesSpace) {
  auto tmpl = templates::FindTemplate("gemm", "");
  ASSERT_TRUE(tmpl.ok());
  const templates::KernelTemplate& t = **tmpl;
  auto w = templates::Workload::Parse("gemm", "M=64,N=64,K=64");
  ASSERT_TRUE(w.ok());
  // A config from the space is accepted, in any order.
  const templates::KnobValues first = [&] {
    templates::KnobValues v;
    for (const auto& k : t.knobs()) v.push_back(k.values.front());
    return v;
  }();
  tunefleet::v1::Config good = trial::ConfigToProto(t, first);
  std::reverse(good.mutable_knobs()->begin(), good.mutable_knobs()->end());
  auto parsed = validation::ValidateConfig(t, good);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(*parsed, first);

  tunefleet::v1::Config bad = trial::ConfigToProto(t, first);
  bad.mutable_knobs(0)->set_value(12345);
  EXPECT_THAT(
      std::string(validation::ValidateConfig(t, bad).status().message()),
      StartsWith(absl::StrCat("config.knobs[0].value: ", t.knobs()[0].name,
                              "=12345 is outside its values {")));
  bad = trial::ConfigToProto(t, first);
  bad.mutable_knobs(1)->set_name(t.knobs()[0].name);
  EXPECT_THAT(
      std::string(validation::ValidateConfig(t, bad).status().message()),
      StartsWith("config.knobs[1].name: knob"));
  bad = trial::ConfigToProto(t, first);
  bad.mutable_knobs(2)->set_name("NOPE");
  EXPECT_THAT(
      std::string(validation::ValidateConfig(t, bad).status().message()),
      StartsWith("config.knobs[2].name: template gemm_tiled has no "
                 "knob 'NOPE'"));
  bad = trial::ConfigToProto(t, first);
  bad.mutable_knobs()->RemoveLast();
  EXPECT_THAT(
      std::string(validation::ValidateConfig(t, bad).status().message()),
      StartsWith("config: "));
}

TEST(Validation, HellosFromAgentsAreChecked) {
  tunefleet::v1::Hello good;
  good.set_device_key("rk3588-mali");
  *good.mutable_device() = TestDevice();
  good.set_agent_name("board-1:123");
  ASSERT_TRUE(validation::ValidateHello(good).ok());
  const std::vector<
      std::pair<std::function<void(tunefleet::v1::Hello&)>, const char*>>
      cases = {
          {[](auto& h) { h.clear_device_key(); },
           "hello.device_key: must not be empty"},
          {[](auto& h) { h.set_device_key("key;rm -rf"); },
           "hello.device_key: 'key;rm -rf' may hold only"},
          {[](auto& h) { h.set_agent_name(std::string(5000, 'a')); },
           "hello.agent_name: 5000 bytes; at most 1024"},
          {[](auto& h) {
             h.mutable_device()->set_vendor(std::string(2000, 'v'));
           },
           "hello.device.vendor: 2000 bytes"},
          {[](auto& h) { h.set_max_in_flight(100000); },
           "hello.max_in_flight: at most 1024, got 100000"},
          {[](auto& h) { h.mutable_device()->set_max_work_group_size(0); },
           "hello.device.max_work_group_size: must be > 0"},
          {[](auto& h) {
             for (int i = 0; i < 20; ++i)
               h.mutable_device()->add_max_work_item_sizes(1);
           },
           "hello.device.max_work_item_sizes: 23 sizes; at most 16"},
          {[](auto& h) {
             h.mutable_device()->add_extensions(std::string(300, 'x'));
           },
           "hello.device.extensions[0]: 300 bytes"},
          // Issue 34: text that would forge log lines or drive a terminal.
          {[](auto& h) { h.set_agent_name("a\n[server] forged"); },
           "hello.agent_name: 'a\\n[server] forged' holds a control"},
          {[](auto& h) { h.set_agent_version("1\x1b[2J"); },
           "hello.agent_version: '1\\033[2J' holds a control"},
          {[](auto& h) {
             h.mutable_device()->set_device_name("gpu\xe2\x80\xae");
           },
           "hello.device.device_name:"},
          {[](auto& h) { h.mutable_device()->set_driver_version("\xff"); },
           "hello.device.driver_version:"},
          {[](auto& h) { h.mutable_device()->add_extensions("cl_x\r"); },
           "hello.device.extensions[0]:"},
          {[](auto& h) { h.mutable_device()->add_libraries("clblast\x07"); },
           "hello.device.libraries[0]:"},
      };
  for (const auto& [edit, message] : cases) {
    tunefleet::v1::Hello h = good;
    edit(h);
    absl::Status s = validation::ValidateHello(h);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << message;
    EXPECT_THAT(std::string(s.message()), StartsWith(message));
  }
}

// Issue 34: a user's source that no agent compiles, and names that would
// reach logs and terminals, are refused at submission.
TEST(Validation, SubmissionsRefuseIncludesAndUnprintableNames) {
  tunefleet::v1::SubmitJobRequest r;
  *r.mutable_workload() = trial::WorkloadToProto(
      *templates::Workload::Parse("gemm", "M=8,N=8,K=8"));
  r.set_trials(1);
  r.mutable_template_spec()->set_spec("name = \"t\"");
  r.mutable_template_spec()->set_format("toml");
  r.mutable_template_spec()->set_source(
      "kernel void f() {}\n#  include </etc/passwd>\n");
  EXPECT_THAT(std::string(ValidateSubmitJobRequest(r).message()),
              StartsWith("template_spec.source: line 2: #include is not "
                         "allowed"));
  r.mutable_template_spec()->set_source("kernel void f() {}\n");
  EXPECT_TRUE(ValidateSubmitJobRequest(r).ok());
  r.set_template_name("spec.toml\x1b]0;x\x07");
  EXPECT_THAT(std::string(ValidateSubmitJobRequest(r).message()),
              StartsWith("template_name: "));
  tunefleet::v1::SubmitModelJobRequest m;
  m.set_model_name("model\n[server] forged");
  EXPECT_THAT(std::string(ValidateSubmitModelJobRequest(m).message()),
              StartsWith("model_name: "));
}

TEST(Validation, ResultsFromAgentsAreCheckedAndBadOnesCannotWin) {
  tunefleet::v1::Measurement good;
  good.set_trial_id(7);
  good.set_error(tunefleet::v1::Measurement::OK);
  good.add_times_ns(1500);
  ASSERT_TRUE(validation::ValidateMeasurement(good, "measurement").ok());
  EXPECT_EQ(validation::CheckedMeasurement(good).times_ns(0), 1500);
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const std::vector<
      std::pair<std::function<void(tunefleet::v1::Measurement&)>, const char*>>
      cases = {
          {[](auto& m) { m.set_error(tunefleet::v1::Measurement::Error(99)); },
           "measurement.error: unknown error code 99"},
          {[](auto& m) { m.clear_error(); },
           "measurement.error: unknown error code 0"},
          {[&](auto& m) { m.add_times_ns(nan); },
           "measurement.times_ns: time nan is not a finite number"},
          {[](auto& m) { m.set_times_ns(0, -3); },
           "measurement.times_ns: time -3"},
          {[](auto& m) { m.set_times_ns(0, 0); },
           "measurement.times_ns: an OK result needs a time > 0"},
          {[](auto& m) {
             for (int i = 0; i < 1001; ++i) m.add_times_ns(1);
           },
           "measurement.times_ns: 1002 times; at most 1000"},
          {[](auto& m) { m.set_error_message(std::string(70000, 'e')); },
           "measurement.error_message: 70000 bytes"},
      };
  for (const auto& [edit, message] : cases) {
    tunefleet::v1::Measurement r = good;
    edit(r);
    absl::Status s = validation::ValidateMeasurement(r, "measurement");
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << message;
    EXPECT_THAT(std::string(s.message()), StartsWith(message));
    const tunefleet::v1::Measurement m = validation::CheckedMeasurement(r);
    EXPECT_EQ(m.error(), tunefleet::v1::Measurement::RUNTIME_ERROR);
    EXPECT_THAT(m.error_message(), HasSubstr(message));
    EXPECT_EQ(m.times_ns_size(), 0);
  }
}

}  // namespace
}  // namespace tunefleet::validation
