// Hostile values in the ONNX import: Slice's clamping and step arithmetic
// in constant folding, element counts of empty tensors with huge dims,
// unbounded convolution attributes and weights that do not fit their
// input, and Upsample's scales attribute (opsets 7 and 8).
#include "onnx_import/constant_fold.h"

#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "onnx/onnx_pb.h"
#include "onnx_import/graph_index.h"
#include "onnx_import/onnx_import.h"
#include "onnx_import/tensor_values.h"
#include "tests/support/onnx_test_models.h"

namespace tunefleet::onnx_import {
namespace {

using ::testing::ElementsAre;
using testing::GraphBuilder;
using ::testing::HasSubstr;

constexpr int64_t kInt64Max = std::numeric_limits<int64_t>::max();
constexpr int64_t kInt64Min = std::numeric_limits<int64_t>::min();

// The model `b` holds, constant-folded at `opset`.
onnx::ModelProto Folded(GraphBuilder& b, int64_t opset = 13) {
  onnx::ModelProto model;
  EXPECT_TRUE(model.ParseFromString(b.Bytes()));
  std::vector<std::string> folded_ops;
  const absl::Status s = FoldConstants(&model, opset, "test.onnx", &folded_ops);
  EXPECT_TRUE(s.ok()) << s;
  return model;
}

// The node of `model` writing `output`.
const onnx::NodeProto* Writer(const onnx::ModelProto& model,
                              const std::string& output) {
  for (const onnx::NodeProto& n : model.graph().node()) {
    if (n.output_size() > 0 && n.output(0) == output) return &n;
  }
  return nullptr;
}

// The folded int64 values of `output`, or {-999} when it was not folded.
std::vector<int64_t> FoldedInts(const onnx::ModelProto& model,
                                const std::string& output) {
  const onnx::NodeProto* n = Writer(model, output);
  if (n == nullptr || n->op_type() != "Constant") return {-999};
  std::optional<onnx::TensorProto> t = ConstantNodeValue(*n);
  if (!t) return {-999};
  std::optional<TensorValue> v = ReadTensor(*t);
  if (!v) return {-999};
  return v->ints;
}

// Slice of data = [10, 20, 30] (int64) with one starts, ends and steps
// value each, folded.
std::vector<int64_t> SliceOf3(int64_t start, int64_t end, int64_t step) {
  GraphBuilder b;
  b.Int64s("data", {10, 20, 30});
  b.Int64s("starts", {start});
  b.Int64s("ends", {end});
  b.Int64s("steps", {step});
  b.Node("Slice", {"data", "starts", "ends", "", "steps"}, {"y"});
  return FoldedInts(Folded(b), "y");
}

TEST(ConstantFold, SliceWithANegativeStepClampsStartsToZero) {
  // ONNX: starts < -d clamp to 0 for a negative step (not to -1).
  EXPECT_THAT(SliceOf3(-4, kInt64Min, -1), ElementsAre(10));
  // Ends < -d clamp to -1: element 0 is taken (ONNX's clamping, not
  // numpy's, which would give nothing).
  EXPECT_THAT(SliceOf3(-100, -100, -1), ElementsAre(10));
  EXPECT_THAT(SliceOf3(-4, -3, -1), ElementsAre());
  EXPECT_THAT(SliceOf3(kInt64Max, kInt64Min, -1), ElementsAre(30, 20, 10));
  EXPECT_THAT(SliceOf3(-1, -4, -1), ElementsAre(30, 20, 10));
  EXPECT_THAT(SliceOf3(-1, -3, -1), ElementsAre(30, 20));
  EXPECT_THAT(SliceOf3(5, 0, -2), ElementsAre(30));
  EXPECT_THAT(SliceOf3(-4, 2, 1), ElementsAre(10, 20));
}

TEST(ConstantFold, SliceStepsNearTheInt64LimitsTakeOneElement) {
  EXPECT_THAT(SliceOf3(0, kInt64Max, kInt64Max), ElementsAre(10));
  EXPECT_THAT(SliceOf3(1, 3, kInt64Max - 1), ElementsAre(20));
  EXPECT_THAT(SliceOf3(-1, kInt64Min, kInt64Min), ElementsAre(30));
  EXPECT_THAT(SliceOf3(1, kInt64Min, kInt64Min + 1), ElementsAre(20));
  EXPECT_THAT(SliceOf3(0, 3, 2), ElementsAre(10, 30));
}

TEST(ConstantFold, ElementCountBoundsTheDimsOfEmptyTensors) {
  constexpr int64_t kHuge = int64_t{1} << 32;
  EXPECT_EQ(ElementCount({2, 3}, kMaxFoldElements), 6);
  EXPECT_EQ(ElementCount({0, 4}, kMaxFoldElements), 0);
  EXPECT_EQ(ElementCount({}, kMaxFoldElements), 1);
  EXPECT_EQ(ElementCount({0, kHuge, kHuge}, kMaxFoldElements), std::nullopt);
  EXPECT_EQ(ElementCount({kHuge, 0}, kMaxFoldElements), std::nullopt);
  // Each dim under the cap, their product over it: strides would pass it.
  EXPECT_EQ(ElementCount({0, 1 << 12, 1 << 12, 1 << 12}, kMaxFoldElements),
            std::nullopt);
  EXPECT_EQ(ElementCount({-1, 0}, kMaxFoldElements), std::nullopt);
}

// An empty int64 initializer of dims [0, 2^32, 2^32] (no data), as a
// hostile model writes it.
void AddHugeEmpty(GraphBuilder& b, const std::string& name) {
  onnx::TensorProto* t = b.graph()->add_initializer();
  t->set_name(name);
  t->set_data_type(onnx::TensorProto::INT64);
  for (int64_t d : {int64_t{0}, int64_t{1} << 32, int64_t{1} << 32}) {
    t->add_dims(d);
  }
}

TEST(ConstantFold, EmptyTensorsWithHugeDimsAreNotFolded) {
  GraphBuilder b;
  AddHugeEmpty(b, "e");
  b.Node("Concat", {"e", "e", "e"}, {"cat"})->add_attribute()->CopyFrom([] {
    onnx::AttributeProto a;
    a.set_name("axis");
    a.set_type(onnx::AttributeProto::INT);
    a.set_i(1);
    return a;
  }());
  b.Int64s("starts", {0});
  b.Int64s("ends", {1});
  b.Node("Slice", {"e", "starts", "ends"}, {"sl"});
  const onnx::ModelProto m = Folded(b);
  ASSERT_NE(Writer(m, "cat"), nullptr);
  EXPECT_EQ(Writer(m, "cat")->op_type(), "Concat");
  ASSERT_NE(Writer(m, "sl"), nullptr);
  EXPECT_EQ(Writer(m, "sl")->op_type(), "Slice");
}

absl::StatusOr<ModelTasks> Import(GraphBuilder& b) {
  return ImportOnnxBytes(b.Bytes(), "test.onnx", {});
}

// The reason the single unsupported op of `m` (of type `op`) gives.
std::string OnlyReason(const ModelTasks& m, const std::string& op) {
  EXPECT_TRUE(m.tasks.empty());
  if (m.unsupported.size() != 1 || m.unsupported[0].op_type != op) {
    return "not one unsupported " + op;
  }
  return m.unsupported[0].reason;
}

// The reason the import gives for the single `op` on x (1x4x8x8) with an
// all-zero weight w of `w_dims`, and its ints attribute `attr` = `values`
// when `attr` is not empty.
std::string ConvRefusal(const std::string& op, std::vector<int64_t> w_dims,
                        const std::string& attr = "",
                        std::vector<int64_t> values = {}) {
  GraphBuilder b;
  b.Input("x", {1, 4, 8, 8});
  b.Weight("w", std::move(w_dims));
  onnx::NodeProto* n = b.Node(op, {"x", "w"}, {"y"});
  if (!attr.empty()) GraphBuilder::Ints(n, attr, std::move(values));
  b.Output("y");
  auto m = Import(b);
  EXPECT_TRUE(m.ok()) << m.status();
  if (!m.ok()) return "import failed: " + m.status().ToString();
  return OnlyReason(*m, op);
}

TEST(ConvMatch, WeightsMustFitTheInputChannels) {
  // Conv: weight K x C/G x R x S with C/G * G = 4, here 3.
  EXPECT_THAT(ConvRefusal("Conv", {8, 3, 3, 3}), HasSubstr("input channels"));
  {  // Grouped: 2 x 2 = 4 fits.
    GraphBuilder b;
    b.Input("x", {1, 4, 8, 8});
    b.Weight("w", {8, 2, 3, 3});
    GraphBuilder::Int(b.Node("Conv", {"x", "w"}, {"y"}), "group", 2);
    b.Output("y");
    auto m = Import(b);
    ASSERT_TRUE(m.ok()) << m.status();
    ASSERT_EQ(m->tasks.size(), 1u);
    EXPECT_THAT(m->tasks[0].workload.Canonical(),
                ::testing::AllOf(HasSubstr("C=4"), HasSubstr("G=2")));
  }
  // ConvTranspose: weight C x K/G x R x S with C = 4, here 3.
  EXPECT_THAT(ConvRefusal("ConvTranspose", {3, 8, 2, 2}, "strides", {2, 2}),
              HasSubstr("input channels"));
}

TEST(ConvMatch, UnboundedAttributesAndDimsAreRefused) {
  constexpr int64_t kHuge = int64_t{1} << 40;
  {  // Weight dims and group past kMaxDim (their product overflowed).
    GraphBuilder b;
    b.Input("x", {1, 4, 8, 8});
    onnx::TensorProto* w = b.graph()->add_initializer();
    w->set_name("w");
    w->set_data_type(onnx::TensorProto::FLOAT);
    for (int64_t d : {int64_t{4}, kHuge, int64_t{1}, int64_t{1}}) {
      w->add_dims(d);
    }
    GraphBuilder::Int(b.Node("ConvTranspose", {"x", "w"}, {"y"}), "group",
                      kHuge);
    b.Output("y");
    auto m = Import(b);
    ASSERT_TRUE(m.ok()) << m.status();
    EXPECT_THAT(OnlyReason(*m, "ConvTranspose"), HasSubstr("outside"));
  }
  struct Case {
    const char* op;
    std::vector<int64_t> w_dims;
    const char* attr;  // also what the reason names
    std::vector<int64_t> values;
  };
  for (const Case& c : {
           // Strides past kMaxDim.
           Case{"ConvTranspose", {4, 4, 2, 2}, "strides", {kHuge, 1}},
           // Pads past kMaxDim (-2 * pads overflowed).
           Case{"ConvTranspose",
                {4, 4, 2, 2},
                "pads",
                {kInt64Max, 0, kInt64Max, 0}},
           // output_padding past kMaxDim.
           Case{
               "ConvTranspose", {4, 4, 2, 2}, "output_padding", {kInt64Max, 0}},
           // A Conv's dilations past kMaxDim.
           Case{"Conv", {4, 4, 1, 1}, "dilations", {1, kHuge}},
       }) {
    EXPECT_THAT(ConvRefusal(c.op, c.w_dims, c.attr, c.values),
                HasSubstr(c.attr))
        << c.op;
  }
}

// Upsample of opset 8 on 1x8x10x12 with its `scales` attribute.
absl::StatusOr<ModelTasks> Upsample(std::vector<float> scales) {
  GraphBuilder b;
  b.Opset(8);
  b.Input("x", {1, 8, 10, 12});
  onnx::NodeProto* n = b.Node("Upsample", {"x"}, {"y"});
  GraphBuilder::String(n, "mode", "nearest");
  onnx::AttributeProto* a = n->add_attribute();
  a->set_name("scales");
  a->set_type(onnx::AttributeProto::FLOATS);
  for (float s : scales) a->add_floats(s);
  b.Output("y");
  return Import(b);
}

TEST(ResizeMatch, UpsampleChecksItsScalesAttribute) {
  auto ok = Upsample({1, 1, 2, 2});
  ASSERT_TRUE(ok.ok()) << ok.status();
  ASSERT_EQ(ok->tasks.size(), 1u);
  EXPECT_EQ(ok->tasks[0].workload.Canonical(),
            "resize N=1 C=8 H=10 W=12 OH=20 OW=24 fp32 coord=asymmetric "
            "round=floor");
  // 12 * 1.6 = 19.2 -> 19: the kernel's 19 / 12 is not the model's 1.6.
  auto odd = Upsample({1, 1, 1.5f, 1.6f});
  ASSERT_TRUE(odd.ok()) << odd.status();
  EXPECT_THAT(OnlyReason(*odd, "Upsample"), HasSubstr("scales"));
}

}  // namespace
}  // namespace tunefleet::onnx_import
