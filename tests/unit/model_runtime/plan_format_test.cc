#include "model_runtime/plan_format.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tunefleet_tuned {
namespace {

using ::testing::HasSubstr;

const char kSha[] =
    "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff";

// A small plan: one kernel over an input and a constant into an output.
Plan SmallPlan() {
  Plan p;
  p.header.model_name = "tiny.onnx";
  p.header.model_sha256 = kSha;
  p.header.device_key = "pocl-cpu";
  p.header.device_name = "pthread-cpu";
  p.header.input_shapes = {{"x", {1, 4}}};
  p.sources = {"__kernel void k(__global float* a) {}"};
  PlanTensor x{"x", {1, 4}, 4, PlanTensor::kInput};
  x.first_step = -1;
  x.last_step = 0;
  PlanTensor y{"y", {4}, 4, PlanTensor::kOutput};
  y.first_step = 0;
  y.last_step = 1;
  y.offset = 1024;
  p.tensors = {x, y};
  p.constants = {PlanConstant{4, 0, 0, 0}};
  p.weights = std::string(16, '\x01');
  PlanStep s;
  s.label = "add_0";
  s.workload = "eltwise N=1 C=4 H=1 W=1 fp32";
  s.entry = "reference";
  s.template_name = "eltwise_direct";
  s.config = "reference";
  s.estimate_ns = 1234.5;
  s.floats = {0.5f, -1e30f};
  s.reads = {0};
  s.writes = {1};
  PlanCommand c;
  c.source = 0;
  c.kernel_name = "k";
  c.build_options = "-DX=1";
  c.global[0] = 4;
  c.args = {PlanArg{PlanArg::kTensor, 0}, PlanArg{PlanArg::kConstant, 0},
            PlanArg{PlanArg::kTensor, 1}, PlanArg{PlanArg::kInt, 7},
            PlanArg{PlanArg::kFloat, 0, 0.25f}};
  s.commands = {c};
  p.steps = {s};
  p.inputs = {0};
  p.outputs = {1};
  p.memory.alignment = 1024;
  p.memory.arena_bytes = 1040;
  p.memory.tensor_bytes = 32;
  return p;
}

// SmallPlan() encoded (or a test's own plan: Encode()), and what
// DecodePlan makes of it.
class PlanFormatTest : public ::testing::Test {
 protected:
  PlanFormatTest() { Encode(SmallPlan()); }

  void Encode(const Plan& p) { EncodePlan(p, &plan_file_, &weights_file_); }

  std::string plan_file_, weights_file_;
  Plan back_;
  std::string error_;
};

TEST_F(PlanFormatTest, RoundTrips) {
  ASSERT_EQ(DecodePlan(plan_file_, weights_file_, {kSha, "pocl-cpu"}, &back_,
                       &error_),
            0)
      << error_;
  EXPECT_EQ(back_.header.model_name, "tiny.onnx");
  EXPECT_EQ(back_.header.device_name, "pthread-cpu");
  ASSERT_EQ(back_.header.input_shapes.size(), 1u);
  EXPECT_EQ(back_.header.input_shapes[0].second, (std::vector<int64_t>{1, 4}));
  ASSERT_EQ(back_.steps.size(), 1u);
  EXPECT_EQ(back_.steps[0].floats, (std::vector<float>{0.5f, -1e30f}));
  EXPECT_EQ(back_.steps[0].estimate_ns, 1234.5);
  ASSERT_EQ(back_.steps[0].commands.size(), 1u);
  const PlanCommand& c = back_.steps[0].commands[0];
  EXPECT_EQ(c.build_options, "-DX=1");
  EXPECT_EQ(c.global[0], 4u);
  ASSERT_EQ(c.args.size(), 5u);
  EXPECT_EQ(c.args[3].value, 7);
  EXPECT_EQ(c.args[4].real, 0.25f);
  EXPECT_EQ(back_.tensors[1].offset, 1024u);
  EXPECT_EQ(back_.weights, std::string(16, '\x01'));
  // Encoding is deterministic.
  std::string again, again_weights;
  EncodePlan(back_, &again, &again_weights);
  EXPECT_EQ(again, plan_file_);
  EXPECT_EQ(again_weights, weights_file_);
}

// The bytes of format version 1: SmallPlan()'s files as the format's
// first writer wrote them (their size and FNV-1a). A change to the files'
// layout fails here; it needs kPlanFormatVersion raised.
TEST_F(PlanFormatTest, WritesTheBytesOfFormatVersion1) {
  EXPECT_EQ(plan_file_.size(), 827u);
  EXPECT_EQ(Fnv1a64(plan_file_.data(), plan_file_.size()),
            0xd3f6af0123b5f027ULL);
  EXPECT_EQ(weights_file_.size(), 136u);
  EXPECT_EQ(Fnv1a64(weights_file_.data(), weights_file_.size()),
            0xbb3ecb376da3de1cULL);
}

TEST_F(PlanFormatTest, RefusesACommandOfUnknownKind) {
  Plan p = SmallPlan();
  p.steps[0].commands[0].kind = static_cast<PlanCommand::Kind>(2);
  Encode(p);
  EXPECT_EQ(DecodePlan(plan_file_, weights_file_, {}, &back_, &error_),
            kPlanCorrupt);
  EXPECT_EQ(error_, "plan file: a command of unknown kind");
}

TEST_F(PlanFormatTest, RoundTripsLongArgumentListsAtTheEnd) {
  // Counts near the end of the file are checked against the bytes left
  // with the smallest encoding of their items, never a larger one.
  Plan p = SmallPlan();
  p.steps.push_back(p.steps[0]);
  p.steps.back().commands.assign(3, PlanCommand{});
  for (PlanCommand& k : p.steps.back().commands) k.source = 0;
  PlanCommand& c = p.steps.back().commands.back();
  for (int i = 0; i < 40; ++i) c.args.push_back(PlanArg{PlanArg::kInt, i});
  Encode(p);
  ASSERT_EQ(DecodePlan(plan_file_, weights_file_, {}, &back_, &error_), 0)
      << error_;
  ASSERT_EQ(back_.steps[1].commands.size(), 3u);
  EXPECT_EQ(back_.steps[1].commands[2].args.size(), 40u);
}

TEST_F(PlanFormatTest, RefusesAnotherModelOrKeyNamingIt) {
  const std::string other(64, 'f');
  EXPECT_EQ(DecodePlan(plan_file_, weights_file_, {other, ""}, &back_, &error_),
            kPlanOtherModel);
  EXPECT_THAT(error_, HasSubstr("another model"));
  EXPECT_THAT(error_, HasSubstr("tiny.onnx"));
  EXPECT_EQ(
      DecodePlan(plan_file_, weights_file_, {"", "mali-g610"}, &back_, &error_),
      kPlanOtherDevice);
  EXPECT_THAT(error_, HasSubstr("'pocl-cpu', not 'mali-g610'"));
}

TEST_F(PlanFormatTest, RefusesAnotherVersion) {
  plan_file_[8] = 9;  // the version's low byte
  EXPECT_EQ(DecodePlan(plan_file_, weights_file_, {}, &back_, &error_),
            kPlanVersion);
  EXPECT_THAT(error_, HasSubstr("format version 9"));
  EXPECT_THAT(error_, HasSubstr("reads version 1"));
}

TEST_F(PlanFormatTest, RefusesTruncatedFiles) {
  for (size_t keep : {size_t{10}, size_t{30}, plan_file_.size() - 1}) {
    EXPECT_EQ(DecodePlan(plan_file_.substr(0, keep), weights_file_, {}, &back_,
                         &error_),
              kPlanTruncated)
        << keep;
    EXPECT_THAT(error_, HasSubstr("plan file: truncated"));
  }
  EXPECT_EQ(
      DecodePlan(plan_file_, weights_file_.substr(0, weights_file_.size() - 5),
                 {}, &back_, &error_),
      kPlanTruncated);
  EXPECT_THAT(error_, HasSubstr("weights file: truncated"));
  EXPECT_EQ(DecodePlan(plan_file_, "", {}, &back_, &error_), kPlanNotAPlan);
  EXPECT_THAT(error_, HasSubstr("weights file: not a tunefleet model weights"));
}

TEST_F(PlanFormatTest, RefusesCorruptBytesAndOtherWeights) {
  std::string flipped = plan_file_;
  flipped[plan_file_.size() / 2] ^= 0x40;
  EXPECT_EQ(DecodePlan(flipped, weights_file_, {}, &back_, &error_),
            kPlanCorrupt);
  EXPECT_THAT(error_, HasSubstr("checksum mismatch"));
  // Weights of another emit of the same model and key.
  Plan other = SmallPlan();
  other.weights = std::string(16, '\x02');
  std::string other_plan, other_weights;
  EncodePlan(other, &other_plan, &other_weights);
  EXPECT_EQ(DecodePlan(plan_file_, other_weights, {}, &back_, &error_),
            kPlanWeightsMismatch);
  EXPECT_THAT(error_, HasSubstr("not the weights of this plan"));
  // A plan file given as weights, and the reverse.
  EXPECT_EQ(DecodePlan(weights_file_, plan_file_, {}, &back_, &error_),
            kPlanNotAPlan);
}

TEST_F(PlanFormatTest, RefusesIndicesOutOfRange) {
  Plan p = SmallPlan();
  p.steps[0].commands[0].args[0].value = 5;  // no tensor 5
  Encode(p);
  EXPECT_EQ(DecodePlan(plan_file_, weights_file_, {}, &back_, &error_),
            kPlanCorrupt);
  EXPECT_THAT(error_, HasSubstr("names no tensor"));
}

}  // namespace
}  // namespace tunefleet_tuned
