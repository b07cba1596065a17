// New matches of the ONNX import (conv_transpose2d, batch_matmul, resize,
// layernorm, eltwise), constant folding on a fixed input shape, the
// coverage report, hostile chains, and the real PP-OCR models when
// present.
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "onnx_import/onnx_import.h"
#include "tests/support/onnx_test_models.h"
#include "tests/support/pp_ocr_models.h"

namespace tunefleet::onnx_import {
namespace {

using ::testing::ElementsAre;
using testing::GraphBuilder;
using ::testing::UnorderedElementsAre;

absl::StatusOr<ModelTasks> ImportMatched(GraphBuilder& b,
                                         const InputShapes& shapes = {}) {
  return ImportOnnxBytes(b.Bytes(), "test.onnx", shapes);
}

// Expects the import of a hostile graph `b` to end accepted or refused as
// INVALID_ARGUMENT, never with another error.
void ExpectAcceptedOrRefused(GraphBuilder& b) {
  auto m = ImportMatched(b);
  EXPECT_TRUE(m.ok() || m.status().code() == absl::StatusCode::kInvalidArgument)
      << m.status();
}

std::vector<std::string> TaskWorkloads(const ModelTasks& m) {
  std::vector<std::string> out;
  for (const ModelTask& t : m.tasks) out.push_back(t.workload.Canonical());
  return out;
}

int Nodes(const std::vector<OpShare>& shares) {
  int n = 0;
  for (const OpShare& s : shares) n += s.nodes;
  return n;
}

TEST(OnnxMatch, ConvTransposeFoldsBiasBatchNormAndRelu) {
  // As PP-OCRv4 det writes it: ConvTranspose -> Add C[1,K,1,1] -> BN -> Relu.
  GraphBuilder b;
  b.Input("x", {1, 24, 16, 16});
  b.Weight("w", {24, 12, 2, 2});
  auto* ct = b.Node("ConvTranspose", {"x", "w"}, {"ct"});
  GraphBuilder::Ints(ct, "strides", {2, 2});
  b.Weight("bias", {1, 12, 1, 1});
  b.Node("Add", {"ct", "bias"}, {"a"});
  b.Weight("bn_s", {12}), b.Weight("bn_b", {12}), b.Weight("bn_m", {12});
  b.Weight("bn_v", {12}, false, 1.0f);
  b.Node("BatchNormalization", {"a", "bn_s", "bn_b", "bn_m", "bn_v"}, {"n"});
  b.Node("Relu", {"n"}, {"y"});
  b.Output("y");
  auto m = ImportMatched(b);
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_THAT(TaskWorkloads(*m),
              ElementsAre("conv_transpose2d N=1 C=24 H=16 W=16 K=12 R=2 S=2 "
                          "SH=2 SW=2 PH=0 PW=0 DH=1 DW=1 OPH=0 OPW=0 G=1 fp32 "
                          "affine=scale_shift act=relu"));
  EXPECT_EQ(Nodes(m->coverage.fused), 3);
}

TEST(OnnxMatch, MatMulOfTwoComputedTensorsIsABatchMatmul) {
  GraphBuilder b;
  b.Input("a", {2, 3, 4, 5});
  b.Input("b", {2, 3, 5, 6});
  b.Input("c", {1, 3, 5, 6});
  b.Node("MatMul", {"a", "b"}, {"y"});
  b.Node("MatMul", {"a", "c"}, {"z"});  // a broadcast batch: left
  b.Output("y");
  b.Output("z");
  auto m = ImportMatched(b);
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_THAT(TaskWorkloads(*m),
              ElementsAre("batch_matmul B=6 M=4 N=6 K=5 fp32"));
  ASSERT_EQ(m->unsupported.size(), 1u);
  EXPECT_EQ(m->unsupported[0].op_type, "MatMul");
  EXPECT_THAT(m->unsupported[0].reason, ::testing::HasSubstr("batch"));
}

TEST(OnnxMatch, ResizeTakesItsModesFromTheAttributes) {
  GraphBuilder b;
  b.Input("x", {1, 8, 10, 12});
  b.Floats("scales", {4}, {1, 1, 2, 2});
  auto* nearest = b.Node("Resize", {"x", "", "scales"}, {"y"});
  GraphBuilder::String(nearest, "mode", "nearest");
  GraphBuilder::String(nearest, "coordinate_transformation_mode", "asymmetric");
  GraphBuilder::String(nearest, "nearest_mode", "floor");
  b.Int64s("sizes", {1, 8, 15, 18});
  auto* linear = b.Node("Resize", {"x", "", "", "sizes"}, {"z"});
  GraphBuilder::String(linear, "mode", "linear");
  b.Floats("odd", {4}, {1, 1, 1.5f, 1.6f});  // 15 / 10, but 19.2 -> 19 / 12
  b.Node("Resize", {"x", "", "odd"}, {"w"});
  b.Output("y");
  b.Output("z");
  b.Output("w");
  auto m = ImportMatched(b);
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_THAT(TaskWorkloads(*m),
              UnorderedElementsAre(
                  "resize N=1 C=8 H=10 W=12 OH=20 OW=24 fp32 coord=asymmetric "
                  "round=floor",
                  "resize N=1 C=8 H=10 W=12 OH=15 OW=18 fp32 mode=linear"));
  ASSERT_EQ(m->unsupported.size(), 1u);
  EXPECT_THAT(m->unsupported[0].reason, ::testing::HasSubstr("scales"));
}

// x (N x D) normalised over D as rec's SVTR neck writes it, with gamma and
// beta, or as one LayerNormalization op (opset 17).
TEST(OnnxMatch, LayerNormDecomposedAndAsAnOp) {
  for (bool op : {false, true}) {
    GraphBuilder b;
    b.Input("x", {1, 40, 120});
    b.Weight("gamma", {120}, false, 1.0f);
    b.Weight("beta", {120});
    if (op) {
      b.Opset(17);
      b.Node("LayerNormalization", {"x", "gamma", "beta"}, {"y"});
    } else {
      b.Weight("two", {}, false, 2.0f);
      b.Weight("eps", {}, false, 1e-5f);
      b.LayerNormSpelledOut("x", "two", "eps", "gamma", "beta", "y");
    }
    b.Output("y");
    auto m = ImportMatched(b);
    ASSERT_TRUE(m.ok()) << m.status();
    EXPECT_THAT(TaskWorkloads(*m),
                ElementsAre("layernorm N=40 D=120 fp32 affine=scale_shift"));
    EXPECT_TRUE(m->coverage.left.empty());
    EXPECT_EQ(Nodes(m->coverage.fused), op ? 0 : 8);
  }
}

TEST(OnnxMatch, EltwiseBroadcastsAndViews) {
  GraphBuilder b;
  b.Input("x", {2, 4, 3, 5});
  b.Input("y", {2, 4, 3, 5});
  b.Input("nc", {2, 4, 1, 1});
  b.Input("t", {1, 6, 16});
  b.Weight("k", {}, false, 2.0f);
  b.Weight("per_d", {16}, false, 1.0f);
  b.Weight("per_c", {4, 1, 1}, false, 1.0f);
  b.Node("Add", {"x", "y"}, {"o1"});      // tensor
  b.Node("Mul", {"k", "x"}, {"o2"});      // scalar, constant first
  b.Node("Mul", {"x", "nc"}, {"o3"});     // N x C (an SE scale)
  b.Node("Sub", {"x", "per_c"}, {"o4"});  // channel
  b.Node("Add", {"t", "per_d"}, {"o5"});  // channel = the last axis
  b.Node("Sub", {"per_c", "x"}, {"o6"});  // broadcast first: left
  b.Weight("bn_s", {4}), b.Weight("bn_b", {4}), b.Weight("bn_m", {4});
  b.Weight("bn_v", {4}, false, 1.0f);
  b.Node("BatchNormalization", {"y", "bn_s", "bn_b", "bn_m", "bn_v"}, {"o7"});
  b.Node("Relu", {"o7"}, {"o8"});
  for (const char* o : {"o1", "o2", "o3", "o4", "o5", "o6", "o8"}) {
    b.Output(o);
  }
  auto m = ImportMatched(b);
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_THAT(TaskWorkloads(*m),
              UnorderedElementsAre(
                  "eltwise N=2 C=4 H=3 W=5 fp32 fn=add",
                  "eltwise N=2 C=4 H=3 W=5 fp32 fn=mul b=scalar",
                  "eltwise N=2 C=4 H=3 W=5 fp32 fn=mul b=nc",
                  "eltwise N=2 C=4 H=3 W=5 fp32 fn=sub b=channel",
                  "eltwise N=6 C=16 H=1 W=1 fp32 fn=add b=channel",
                  "eltwise N=2 C=4 H=3 W=5 fp32 b=scalar affine=scale_shift "
                  "act=relu"));
  ASSERT_EQ(m->unsupported.size(), 1u);
  EXPECT_EQ(m->unsupported[0].op_type, "Sub");
}

// A Shape -> Cast -> Gather / Slice -> Div -> Unsqueeze -> Concat chain
// gives a Reshape its target: folded, the shapes behind it are known.
TEST(OnnxMatch, ConstantFoldingMakesShapesKnown) {
  GraphBuilder b;
  b.Input("x", {0, 6, 8});
  b.Node("Shape", {"x"}, {"s"});
  auto* f = b.Node("Cast", {"s"}, {"sf"});
  GraphBuilder::Int(f, "to", onnx::TensorProto::FLOAT);
  auto* i = b.Node("Cast", {"sf"}, {"si"});
  GraphBuilder::Int(i, "to", onnx::TensorProto::INT64);
  b.Int64s("two", {2}, /*scalar=*/true);
  b.Node("Gather", {"si", "two"}, {"d"});  // 8
  b.Int64s("zero", {0});
  b.Node("Unsqueeze", {"d", "zero"}, {"du"});
  b.Int64s("one", {1}), b.Int64s("end", {2});
  b.Node("Slice", {"si", "one", "end"}, {"h"});  // [6]
  b.Int64s("three", {3});
  b.Node("Div", {"h", "three"}, {"h2"});  // [2]
  b.Int64s("lead", {1});
  auto* cat = b.Node("Concat", {"lead", "h2", "three", "du"}, {"shape"});
  GraphBuilder::Int(cat, "axis", 0);
  b.Node("Reshape", {"x", "shape"}, {"r"});  // 1 x 2 x 3 x 8
  auto* tr = b.Node("Transpose", {"r"}, {"rt"});
  GraphBuilder::Ints(tr, "perm", {0, 1, 3, 2});
  b.Node("MatMul", {"r", "rt"}, {"scores"});
  b.Node("Softmax", {"scores"}, {"y"});
  b.Output("y");
  auto m = ImportMatched(b, {{"x", {1, 6, 8}}});
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_THAT(TaskWorkloads(*m),
              UnorderedElementsAre("batch_matmul B=2 M=3 N=3 K=8 fp32",
                                   "softmax N=6 D=3 fp32"));
  std::map<std::string, int> folded;
  for (const OpShare& s : m->coverage.folded) folded[s.op_type] = s.nodes;
  EXPECT_EQ(folded, (std::map<std::string, int>{{"Cast", 2},
                                                {"Concat", 1},
                                                {"Div", 1},
                                                {"Gather", 1},
                                                {"Reshape", 1},
                                                {"Shape", 1},
                                                {"Slice", 1},
                                                {"Unsqueeze", 1}}));
  ASSERT_EQ(m->coverage.left.size(), 1u);
  EXPECT_EQ(m->coverage.left[0].op_type, "Transpose");
  EXPECT_EQ(m->coverage.left[0].flops, 0);
  EXPECT_EQ(m->coverage.left[0].bytes, 2 * 4 * 48);
}

TEST(OnnxMatch, CoverageOfAKnownGraph) {
  GraphBuilder b = testing::PaddedConv3x3(3, 8, 4);
  b.Node("Relu", {"c"}, {"y"});
  b.Output("y");
  auto m = ImportMatched(b);
  ASSERT_TRUE(m.ok()) << m.status();
  const Coverage& c = m->coverage;
  // Conv: 2 * 256 outputs * 27; Relu: one per output element.
  ASSERT_EQ(c.tuned.size(), 1u);
  EXPECT_EQ(c.tuned[0].flops, 2.0 * 256 * 27);
  EXPECT_EQ(c.tuned[0].bytes, 4.0 * (192 + 108 + 256));
  ASSERT_EQ(c.fused.size(), 1u);
  EXPECT_EQ(c.fused[0].op_type, "Relu");
  EXPECT_EQ(c.fused[0].flops, 256);
  EXPECT_EQ(c.fused[0].bytes, 4.0 * 512);
  EXPECT_EQ(c.flops, 2.0 * 256 * 27 + 256);
  EXPECT_EQ(c.bytes, 4.0 * (192 + 108 + 256 + 512));
}

// A node whose output shape stays unknown (NonZero's count depends on the
// data) counts no work and is reported, not silently taken as covered.
TEST(OnnxMatch, UnknownShapesAreCountedAsUnknown) {
  GraphBuilder b;
  b.Input("x", {1, 4});
  b.Node("NonZero", {"x"}, {"nz"});
  GraphBuilder::Int(b.Node("Cast", {"nz"}, {"y"}), "to",
                    onnx::TensorProto::FLOAT);
  b.Output("y");
  auto m = ImportMatched(b);
  ASSERT_TRUE(m.ok()) << m.status();
  const Coverage& c = m->coverage;
  EXPECT_EQ(c.unknown_nodes, 2);
  ASSERT_EQ(c.left.size(), 2u);
  for (const OpShare& s : c.left) {
    EXPECT_EQ(s.unknown, 1) << s.op_type;
    EXPECT_EQ(s.flops, 0) << s.op_type;
  }
}

TEST(OnnxMatch, CoverageClassesAddUpToTheTotals) {
  auto m = ImportOnnxBytes(testing::SmallNet(), "small.onnx",
                           {{"image", {1, 3, 17, 23}}});
  ASSERT_TRUE(m.ok()) << m.status();
  const Coverage& c = m->coverage;
  double flops = 0, bytes = 0;
  int nodes = 0;
  for (const auto* list : {&c.tuned, &c.fused, &c.folded, &c.left}) {
    for (size_t i = 0; i < list->size(); ++i) {
      flops += (*list)[i].flops;
      bytes += (*list)[i].bytes;
      nodes += (*list)[i].nodes;
      if (i > 0) {
        EXPECT_GE((*list)[i - 1].flops, (*list)[i].flops);
      }
    }
  }
  EXPECT_DOUBLE_EQ(flops, c.flops);
  EXPECT_DOUBLE_EQ(bytes, c.bytes);
  EXPECT_GT(c.flops, 0);
  // Every node but the 5 Constant nodes is in one class.
  EXPECT_EQ(nodes, m->nodes - 5);
  // Nothing left: the Add after the two HardSigmoids is an eltwise task.
  EXPECT_TRUE(c.left.empty());
  int tuned_adds = 0;
  for (const OpShare& s : c.tuned) {
    if (s.op_type == "Add") tuned_adds += s.nodes;
  }
  EXPECT_EQ(tuned_adds, 1);
}

// Hostile graphs: chains and cycles end, long chains stop folding.
TEST(OnnxMatch, HostileChainsEnd) {
  {  // A cycle through Shape and Reshape: nothing folds forever.
    GraphBuilder b;
    b.Input("x", {1, 4});
    b.Node("Shape", {"r"}, {"s"});
    b.Node("Reshape", {"x", "s"}, {"r"});
    b.Output("r");
    ExpectAcceptedOrRefused(b);
  }
  {  // 40 Relus after a conv: the epilogue takes one, the rest are tasks.
    GraphBuilder b;
    b.Input("x", {1, 4, 8, 8});
    b.Weight("w", {4, 4, 1, 1});
    b.Node("Conv", {"x", "w"}, {"r0"});
    for (int i = 0; i < 40; ++i) {
      b.Node("Relu", {"r" + std::to_string(i)}, {"r" + std::to_string(i + 1)});
    }
    b.Output("r40");
    auto m = ImportMatched(b);
    ASSERT_TRUE(m.ok()) << m.status();
    int tasks = 0;
    for (const ModelTask& t : m->tasks) tasks += t.count;
    EXPECT_EQ(tasks, 1 + 39);
    EXPECT_TRUE(m->coverage.left.empty());
  }
  {  // A constant cycle: Add(a, k) -> b, Add(b, k) -> a.
    GraphBuilder b;
    b.Weight("k", {1}, false, 1.0f);
    b.Input("x", {1});
    b.Node("Add", {"b", "k"}, {"a"});
    b.Node("Add", {"a", "k"}, {"b"});
    b.Node("Add", {"x", "a"}, {"y"});
    b.Output("y");
    ExpectAcceptedOrRefused(b);
  }
}

// PP-OCRv4 det and rec and the PP-OCR classifier (deploy/fetch-model.sh):
// at least 99% of their FLOPs run in tuned tasks or their epilogues.
TEST(OnnxMatch, RealModelsAreCovered) {
  testing::ForEachPpOcrModelOrSkip(
      TUNEFLEET_SOURCE_DIR, [](const testing::PpOcrModel& model) {
        auto m = ImportOnnx(model.path, {{"x", model.dims}});
        ASSERT_TRUE(m.ok()) << m.status();
        double covered = 0;
        for (const auto* list : {&m->coverage.tuned, &m->coverage.fused}) {
          for (const OpShare& s : *list) covered += s.flops;
        }
        EXPECT_GE(covered, 0.99 * m->coverage.flops) << model.file;
        EXPECT_GT(m->coverage.flops, 1e7) << model.file;
        for (const OpShare& s : m->coverage.left) {
          EXPECT_EQ(s.flops, 0)
              << model.file << ": " << s.op_type << " " << s.reason;
        }
      });
}

}  // namespace
}  // namespace tunefleet::onnx_import
