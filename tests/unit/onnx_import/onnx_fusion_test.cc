// Epilogue fusions of the ONNX import, each spelling on a small graph:
// affine steps, activations (ops and their spelled-out forms), residual
// adds and post-activation affine steps.
#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "onnx_import/onnx_import.h"
#include "tests/support/onnx_test_models.h"

namespace tunefleet::onnx_import {
namespace {

using testing::GraphBuilder;

// The canonical workloads of a model's tasks.
std::vector<std::string> Workloads(GraphBuilder& b,
                                   const InputShapes& shapes = {}) {
  auto m = ImportOnnxBytes(b.Bytes(), "test.onnx", shapes);
  EXPECT_TRUE(m.ok()) << m.status();
  std::vector<std::string> out;
  if (!m.ok()) return out;
  for (const ModelTask& t : m->tasks) out.push_back(t.workload.Canonical());
  return out;
}

// Float scalar initializers of `b`, named and valued, in order.
void Scalars(GraphBuilder& b,
             std::initializer_list<std::pair<const char*, float>> values) {
  for (const auto& [name, v] : values) b.Weight(name, {}, false, v);
}

// x (1x4x8x8) -> Conv 1x1 with bias to 8 channels -> "c".
GraphBuilder ConvBlock() {
  GraphBuilder b;
  b.Input("x", {1, 4, 8, 8});
  b.Weight("w", {8, 4, 1, 1});
  b.Weight("bias", {8});
  b.Node("Conv", {"x", "w", "bias"}, {"c"});
  return b;
}

const char kConv[] =
    "conv2d N=1 C=4 H=8 W=8 K=8 R=1 S=1 SH=1 SW=1 PH=0 PW=0 DH=1 DW=1 G=1 "
    "fp32";

// The workloads of `b` (ConvBlock and more) with "y" as its output.
std::vector<std::string> WorkloadsOfY(GraphBuilder& b) {
  b.Output("y");
  return Workloads(b);
}

// Matches the workloads of one task: ConvBlock's conv with `epilogue`
// (" affine=shift act=relu") fused.
auto IsConvWith(const std::string& epilogue) {
  return ::testing::ElementsAre(std::string(kConv) + epilogue);
}

TEST(OnnxFusion, PpLcNetBlockFoldsAffineHardSwishAndPost) {
  // As PP-OCRv4 det writes it: Mul(C, x) + C, then HardSwish as
  // Add(x, 3) -> Clip -> Mul(x, clip) -> Div 6, then Mul(C, x) + C.
  GraphBuilder b = ConvBlock();
  b.Weight("s", {1}, false, 2.0f);
  b.Weight("t", {1}, false, 1.0f);
  Scalars(b, {{"three", 3.0f}, {"zero", 0.0f}, {"six", 6.0f}});
  b.Node("Mul", {"s", "c"}, {"m1"});
  b.Node("Add", {"m1", "t"}, {"a1"});
  b.Node("Add", {"a1", "three"}, {"a3"});
  b.Node("Clip", {"a3", "zero", "six"}, {"cl"});
  b.Node("Mul", {"a1", "cl"}, {"m2"});
  b.Node("Div", {"m2", "six"}, {"hs"});
  b.Node("Mul", {"s", "hs"}, {"m3"});
  b.Node("Add", {"m3", "t"}, {"y"});
  b.Output("y");
  auto m = ImportOnnxBytes(b.Bytes(), "det.onnx", {});
  ASSERT_TRUE(m.ok()) << m.status();
  ASSERT_EQ(m->tasks.size(), 1u);
  EXPECT_EQ(m->tasks[0].workload.Canonical(),
            std::string(kConv) +
                " affine=scale_shift act=hardswish post=scale_shift");
  EXPECT_TRUE(m->unsupported.empty());
  ASSERT_EQ(m->coverage.tuned.size(), 1u);
  EXPECT_EQ(m->coverage.tuned[0].op_type, "Conv");
  int fused = 0;
  for (const OpShare& s : m->coverage.fused) fused += s.nodes;
  EXPECT_EQ(fused, 8);
  EXPECT_TRUE(m->coverage.left.empty());
}

TEST(OnnxFusion, HardSwishSpellings) {
  for (int spelling = 0; spelling < 4; ++spelling) {
    GraphBuilder b = ConvBlock();
    Scalars(
        b,
        {{"three", 3.0f}, {"zero", 0.0f}, {"six", 6.0f}, {"sixth", 1.0f / 6}});
    if (spelling == 3) {
      b.Node("HardSwish", {"c"}, {"y"});
    } else {
      b.Node("Add", {"c", "three"}, {"a3"});
      b.Node("Clip", {"a3", "zero", "six"}, {"cl"});
      if (spelling == 0) {  // the clip first, then * 1/6
        b.Node("Mul", {"cl", "c"}, {"m"});
        b.Node("Mul", {"m", "sixth"}, {"y"});
      } else if (spelling == 1) {  // Clip(x + 3, 0, 6) / 6 first
        b.Node("Div", {"cl", "six"}, {"hsig"});
        b.Node("Mul", {"c", "hsig"}, {"y"});
      } else {  // 1/6 * (x * clip)
        b.Node("Mul", {"c", "cl"}, {"m"});
        b.Node("Mul", {"sixth", "m"}, {"y"});
      }
    }
    EXPECT_THAT(WorkloadsOfY(b), IsConvWith(" affine=shift act=hardswish"))
        << "spelling " << spelling;
  }
}

TEST(OnnxFusion, HardSigmoidSpellings) {
  for (int spelling = 0; spelling < 3; ++spelling) {
    GraphBuilder b = ConvBlock();
    Scalars(b, {{"alpha", 0.2f},
                {"beta", 0.5f},
                {"three", 3.0f},
                {"zero", 0.0f},
                {"one", 1.0f},
                {"six", 6.0f}});
    if (spelling == 0) {
      b.Node("HardSigmoid", {"c"}, {"y"});
    } else if (spelling == 1) {  // Clip(x * a + b, 0, 1)
      b.Node("Mul", {"c", "alpha"}, {"m"});
      b.Node("Add", {"m", "beta"}, {"a"});
      b.Node("Clip", {"a", "zero", "one"}, {"y"});
    } else {  // Clip(x + 3, 0, 6) / 6
      b.Node("Add", {"c", "three"}, {"a"});
      b.Node("Clip", {"a", "zero", "six"}, {"cl"});
      b.Node("Div", {"cl", "six"}, {"y"});
    }
    EXPECT_THAT(WorkloadsOfY(b), IsConvWith(" affine=shift act=hardsigmoid"))
        << "spelling " << spelling;
  }
}

TEST(OnnxFusion, SiluSpellingsAfterBatchNorm) {
  for (bool times_one : {false, true}) {
    GraphBuilder b = ConvBlock();
    b.Weight("bn_s", {8}), b.Weight("bn_b", {8}), b.Weight("bn_m", {8});
    b.Weight("bn_v", {8}, false, 1.0f);
    b.Weight("one", {}, false, 1.0f);
    b.Node("BatchNormalization", {"c", "bn_s", "bn_b", "bn_m", "bn_v"}, {"n"});
    std::string in = "n";
    if (times_one) {  // rec: x * Sigmoid(x * 1)
      b.Node("Mul", {"n", "one"}, {"n1"});
      in = "n1";
    }
    b.Node("Sigmoid", {in}, {"sg"});
    b.Node("Mul", {"n", "sg"}, {"y"});
    EXPECT_THAT(WorkloadsOfY(b), IsConvWith(" affine=scale_shift act=silu"))
        << "times one " << times_one;
  }
}

TEST(OnnxFusion, SwishWithABetaIsNotSilu) {
  GraphBuilder b = ConvBlock();
  b.Weight("beta", {}, false, 1.5f);
  b.Node("Mul", {"c", "beta"}, {"cb"});
  b.Node("Sigmoid", {"cb"}, {"sg"});
  b.Node("Mul", {"c", "sg"}, {"y"});
  b.Output("y");
  const std::vector<std::string> w = Workloads(b);
  ASSERT_FALSE(w.empty());
  EXPECT_THAT(w, ::testing::Contains(std::string(kConv) + " affine=shift"));
  EXPECT_THAT(
      w, ::testing::Not(::testing::Contains(::testing::HasSubstr("act=silu"))));
}

TEST(OnnxFusion, SingleOpActivations) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"Relu", "relu"}, {"LeakyRelu", "leakyrelu"}, {"Sigmoid", "sigmoid"},
      {"Clip", "clip"}, {"MaxMin", "clip"},         {"Max", "relu"}};
  for (const auto& [op, act] : cases) {
    GraphBuilder b = ConvBlock();
    Scalars(b, {{"zero", 0.0f}, {"six", 6.0f}});
    if (op == "Clip") {
      b.Node("Clip", {"c", "zero", "six"}, {"y"});
    } else if (op == "Max") {
      b.Node("Max", {"c", "zero"}, {"y"});
    } else if (op == "MaxMin") {
      b.Node("Max", {"c", "zero"}, {"r"});
      b.Node("Min", {"r", "six"}, {"y"});
    } else {
      b.Node(op, {"c"}, {"y"});
    }
    EXPECT_THAT(WorkloadsOfY(b), IsConvWith(" affine=shift act=" + act)) << op;
  }
}

TEST(OnnxFusion, ResidualAddBeforeTheActivation) {
  GraphBuilder b = testing::PaddedConv3x3(8, 8, 8);
  b.Weight("bn_s", {8}), b.Weight("bn_b", {8}), b.Weight("bn_m", {8});
  b.Weight("bn_v", {8}, false, 1.0f);
  b.Node("BatchNormalization", {"c", "bn_s", "bn_b", "bn_m", "bn_v"}, {"n"});
  b.Node("Add", {"x", "n"}, {"sum"});  // the skip connection, first
  b.Node("Relu", {"sum"}, {"y"});
  b.Output("y");
  EXPECT_THAT(Workloads(b),
              ::testing::ElementsAre(
                  "conv2d N=1 C=8 H=8 W=8 K=8 R=3 S=3 SH=1 SW=1 PH=1 PW=1 "
                  "DH=1 DW=1 G=1 fp32 affine=scale_shift act=relu "
                  "residual=add"));
}

TEST(OnnxFusion, AnIntermediateWithAnotherConsumerStopsTheFold) {
  GraphBuilder b = ConvBlock();
  b.Node("Relu", {"c"}, {"y"});
  b.Node("Sigmoid", {"c"}, {"z"});  // c is read twice: nothing folds
  b.Output("y");
  b.Output("z");
  EXPECT_THAT(Workloads(b),
              ::testing::UnorderedElementsAre(
                  std::string(kConv) + " affine=shift",
                  "eltwise N=1 C=8 H=8 W=8 fp32 b=scalar act=relu",
                  "eltwise N=1 C=8 H=8 W=8 fp32 b=scalar act=sigmoid"));
}

TEST(OnnxFusion, DenseFoldsBiasResidualAndSilu) {
  GraphBuilder b;
  b.Input("x", {1, 40, 16});
  b.Weight("w", {16, 16});
  b.Weight("bias", {16});
  b.Node("MatMul", {"x", "w"}, {"mm"});
  b.Node("Add", {"mm", "bias"}, {"d"});
  b.Node("Add", {"x", "d"}, {"r"});
  b.Node("Sigmoid", {"r"}, {"sg"});
  b.Node("Mul", {"r", "sg"}, {"y"});
  b.Output("y");
  EXPECT_THAT(Workloads(b),
              ::testing::ElementsAre("dense M=40 N=16 K=16 fp32 affine=shift "
                                     "act=silu residual=add"));
}

}  // namespace
}  // namespace tunefleet::onnx_import

namespace tunefleet::onnx_import {
namespace {

// A tensor that is also a graph output is read by the model's caller:
// nothing is fused through it.
TEST(OnnxFusion, NothingIsFusedThroughAGraphOutput) {
  GraphBuilder b = ConvBlock();
  b.Node("Relu", {"c"}, {"y"});
  b.Output("c");
  b.Output("y");
  EXPECT_THAT(Workloads(b),
              ::testing::UnorderedElementsAre(
                  std::string(kConv) + " affine=shift",
                  "eltwise N=1 C=8 H=8 W=8 fp32 b=scalar act=relu"));
}

// BatchNormalization normalises axis 1: after a dense layer of a 3D input
// ([B, T, N], channels on the last axis) it is not the layer's per-channel
// affine step.
TEST(OnnxFusion, BatchNormIsNotFoldedOnAnotherChannelAxis) {
  GraphBuilder b;
  b.Input("x", {1, 8, 16});
  b.Weight("w", {16, 8});
  b.Node("MatMul", {"x", "w"}, {"d"});
  for (const char* p : {"g", "beta", "mean", "var"}) b.Weight(p, {8});
  b.Node("BatchNormalization", {"d", "g", "beta", "mean", "var"}, {"y"});
  b.Output("y");
  auto m = ImportOnnxBytes(b.Bytes(), "test.onnx", {});
  ASSERT_TRUE(m.ok()) << m.status();
  ASSERT_FALSE(m->tasks.empty());
  for (const ModelTask& t : m->tasks) {
    if (t.workload.op() == "dense") {
      EXPECT_EQ(t.workload.Canonical(), "dense M=8 N=8 K=16 fp32");
    }
  }
  bool bn_fused = false;
  for (const OpShare& s : m->coverage.fused) {
    bn_fused = bn_fused || s.op_type == "BatchNormalization";
  }
  EXPECT_FALSE(bn_fused);
}

}  // namespace
}  // namespace tunefleet::onnx_import
