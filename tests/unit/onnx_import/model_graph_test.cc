// ImportModelGraph (onnx_import/model_graph.h): every node of small models
// lowered to steps whose buffers, constants (batch norm folded, weights
// transposed) and per-call floats are checked, views as aliases, constant
// outputs, execution order, errors naming the node, and the real PP-OCR
// models lowered completely when present.
#include "onnx_import/model_graph.h"

#include <cmath>
#include <limits>
#include <set>
#include <string>
#include <vector>

#include "base/files.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernels_templates/registry.h"
#include "tests/support/onnx_test_models.h"
#include "tests/support/pp_ocr_models.h"

namespace tunefleet::onnx_import {
namespace {

using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using testing::GraphBuilder;
using ::testing::HasSubstr;
using ::testing::Pointwise;
using Dims = std::vector<int64_t>;

absl::StatusOr<ModelGraph> LowerGraph(GraphBuilder& b,
                                      const InputShapes& shapes = {}) {
  return ImportModelGraph(b.Bytes(), "test.onnx", shapes);
}

// Lowers `b` into *m: a failure, with the status or the count of steps,
// unless it lowers to `steps` steps.
::testing::AssertionResult LowersTo(GraphBuilder& b, size_t steps,
                                    absl::StatusOr<ModelGraph>* m) {
  *m = LowerGraph(b);
  if (!m->ok()) return ::testing::AssertionFailure() << m->status();
  if ((*m)->steps.size() != steps) {
    return ::testing::AssertionFailure()
           << (*m)->steps.size() << " steps, not " << steps;
  }
  return ::testing::AssertionSuccess();
}

// Lowering `b` is refused as a failed precondition whose message matches
// `message`.
void ExpectRefused(GraphBuilder& b,
                   const ::testing::Matcher<std::string>& message) {
  auto m = LowerGraph(b);
  EXPECT_EQ(m.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(m.status().message()), message);
}

std::vector<std::string> StepWorkloads(const ModelGraph& m) {
  std::vector<std::string> out;
  for (const ModelStep& s : m.steps) out.push_back(s.workload.Canonical());
  return out;
}

// The tensor names of a step's buffers ("" for constants).
std::vector<std::string> Tensors(const ModelStep& s) {
  std::vector<std::string> out;
  for (const StepBuffer& b : s.buffers) out.push_back(b.tensor);
  return out;
}

// Step `s` runs the workload `canonical` on the tensors `tensors`, one a
// buffer ("" for constants).
void ExpectStep(const ModelStep& s, const std::string& canonical,
                const std::vector<std::string>& tensors) {
  EXPECT_EQ(s.workload.Canonical(), canonical);
  EXPECT_EQ(Tensors(s), tensors);
}

MATCHER(Near, "") {
  return std::fabs(std::get<0>(arg) - std::get<1>(arg)) <=
         1e-6f * std::max(1.0f, std::fabs(std::get<1>(arg)));
}

// Every step's workload runs on some template (FindTemplateFor), every
// buffer is bound, and every tensor a step names is in `tensors`.
void ExpectRunnable(const ModelGraph& m) {
  for (const ModelStep& s : m.steps) {
    EXPECT_TRUE(templates::FindTemplateFor(s.workload, "").ok())
        << s.workload.Canonical();
    EXPECT_FALSE(s.nodes.empty()) << s.label;
    for (const StepBuffer& b : s.buffers) {
      EXPECT_NE(b.tensor.empty(), b.constant.empty()) << s.label;
      if (!b.tensor.empty()) {
        EXPECT_TRUE(m.tensors.count(b.tensor)) << b.tensor;
      }
    }
  }
}

// Conv with a bias, BatchNormalization and Clip(0, 6): one conv2d step with
// BN folded into scale and shift, the weight as stored (OIHW), and the
// clip bounds as floats.
TEST(ModelGraph, ConvFoldsBiasAndBatchNormIntoScaleAndShift) {
  GraphBuilder b;
  b.Input("x", {1, 1, 4, 4});
  b.Floats("w", {2, 1, 1, 1}, {3, 5});
  b.Floats("bias", {2}, {1, 2});
  b.Node("Conv", {"x", "w", "bias"}, {"c"});
  // scale = gamma / sqrt(var + eps) = {4 / 2, 6 / 3} = {2, 2};
  // shift = (bias - mean) * scale + beta = {0.5 * 2 + 0.5, 1 * 2 - 1}.
  b.Floats("gamma", {2}, {4, 6});
  b.Floats("beta", {2}, {0.5, -1});
  b.Floats("mean", {2}, {0.5, 1});
  b.Floats("var", {2}, {3, 8});
  auto* bn = b.Node("BatchNormalization", {"c", "gamma", "beta", "mean", "var"},
                    {"n"});
  GraphBuilder::Float(bn, "epsilon", 1.0f);
  b.Floats("lo", {}, {0});
  b.Floats("hi", {}, {6});
  b.Node("Clip", {"n", "lo", "hi"}, {"y"});
  b.Output("y");
  absl::StatusOr<ModelGraph> m;
  ASSERT_TRUE(LowersTo(b, 1, &m));
  const ModelStep& s = m->steps[0];
  ExpectStep(s,
             "conv2d N=1 C=1 H=4 W=4 K=2 R=1 S=1 SH=1 SW=1 PH=0 PW=0 DH=1 "
             "DW=1 G=1 fp32 affine=scale_shift act=clip",
             {"x", "", "y", "", "", ""});
  EXPECT_THAT(s.buffers[1].constant, ElementsAre(3, 5));
  EXPECT_THAT(s.buffers[3].constant, Pointwise(Near(), {2.0f, 2.0f}));
  EXPECT_THAT(s.buffers[4].constant, Pointwise(Near(), {1.5f, 1.0f}));
  EXPECT_THAT(s.buffers[5].constant, ElementsAre(0));  // no residual
  EXPECT_THAT(s.floats, ElementsAre(0, 6));
  EXPECT_EQ(s.nodes, (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(s.label, "Conv_1");
  EXPECT_THAT(m->inputs, ElementsAre("x"));
  EXPECT_THAT(m->outputs, ElementsAre("y"));
  EXPECT_EQ(m->tensors.at("y").dims, (Dims{1, 2, 4, 4}));
  ExpectRunnable(*m);
}

// PP-LCNet's block: Mul / Add by scalars before HardSwish (affine), then
// Mul / Add after it (post): the buffers hold 2 * channels values.
TEST(ModelGraph, PostAffineFillsTheSecondHalfOfScaleAndShift) {
  GraphBuilder b;
  b.Opset(14);  // HardSwish
  b.Input("x", {1, 2, 3, 3});
  b.Floats("w", {2, 2, 1, 1}, {1, 0, 0, 1});
  b.Node("Conv", {"x", "w"}, {"c"});
  b.Floats("k", {1}, {1.5});
  b.Node("Mul", {"k", "c"}, {"m"});
  b.Floats("per_c", {2, 1, 1}, {0.25, -0.25});
  b.Node("Add", {"m", "per_c"}, {"a"});
  b.Node("HardSwish", {"a"}, {"h"});
  b.Floats("ps", {}, {0.5});
  b.Node("Mul", {"h", "ps"}, {"p"});
  b.Floats("pb", {}, {-0.125});
  b.Node("Add", {"p", "pb"}, {"y"});
  b.Output("y");
  absl::StatusOr<ModelGraph> m;
  ASSERT_TRUE(LowersTo(b, 1, &m));
  const ModelStep& s = m->steps[0];
  EXPECT_THAT(s.workload.Canonical(),
              HasSubstr("affine=scale_shift act=hardswish post=scale_shift"));
  EXPECT_THAT(s.buffers[3].constant, ElementsAre(1.5, 1.5, 0.5, 0.5));
  EXPECT_THAT(s.buffers[4].constant, ElementsAre(0.25, -0.25, -0.125, -0.125));
  EXPECT_THAT(s.floats, Pointwise(Near(), {1.0f / 6, 0.5f}));
  ExpectRunnable(*m);
}

// Gemm with transB = 1 stores its weight N x K: the dense step reads it
// K x N; C is the bias (shift), a residual Add binds its tensor.
TEST(ModelGraph, GemmWeightIsTransposedAndItsBiasIsTheShift) {
  GraphBuilder b;
  b.Input("x", {2, 3});
  b.Input("r", {2, 2});
  b.Floats("w", {2, 3}, {1, 2, 3, 4, 5, 6});  // N x K
  b.Floats("bias", {2}, {0.5, -0.5});
  auto* g = b.Node("Gemm", {"x", "w", "bias"}, {"d"});
  GraphBuilder::Int(g, "transB", 1);
  b.Node("Add", {"d", "r"}, {"y"});
  b.Output("y");
  absl::StatusOr<ModelGraph> m;
  ASSERT_TRUE(LowersTo(b, 1, &m));
  const ModelStep& s = m->steps[0];
  ExpectStep(s, "dense M=2 N=2 K=3 fp32 affine=shift residual=add",
             {"x", "", "y", "", "", "r"});
  EXPECT_THAT(s.buffers[1].constant, ElementsAre(1, 4, 2, 5, 3, 6));
  EXPECT_THAT(s.buffers[3].constant, ElementsAre(1, 1));
  EXPECT_THAT(s.buffers[4].constant, ElementsAre(0.5, -0.5));
  EXPECT_THAT(s.floats, ElementsAre(0, 0));
  ExpectRunnable(*m);
}

// The activations' parameters are the model's: LeakyRelu's alpha,
// HardSigmoid's alpha and beta; Max / Min with a constant become clip
// bounds (infinite on the open side).
TEST(ModelGraph, ActivationFloatsAreTheModels) {
  constexpr float kInf = std::numeric_limits<float>::infinity();
  GraphBuilder b;
  b.Input("x", {1, 2, 2, 2});
  auto* leaky = b.Node("LeakyRelu", {"x"}, {"l"});
  GraphBuilder::Float(leaky, "alpha", 0.3f);
  auto* hs = b.Node("HardSigmoid", {"x"}, {"h"});
  GraphBuilder::Float(hs, "alpha", 0.25f);
  GraphBuilder::Float(hs, "beta", 0.4f);
  b.Floats("w", {2, 2, 1, 1}, {1, 0, 0, 1});
  b.Node("Conv", {"x", "w"}, {"c1"});
  b.Floats("c", {}, {-2});
  b.Node("Max", {"c1", "c"}, {"mx"});  // clip(-2, inf)
  b.Node("Conv", {"x", "w"}, {"c2"});
  b.Floats("d", {}, {3});
  b.Node("Min", {"d", "c2"}, {"mn"});  // clip(-inf, 3), constant first
  b.Node("Conv", {"x", "w"}, {"c3"});
  b.Node("Relu", {"c3"}, {"r3"});
  b.Node("Min", {"r3", "d"}, {"r6"});  // relu then Min: clip(0, 3)
  for (const char* o : {"l", "h", "mx", "mn", "r6"}) b.Output(o);
  absl::StatusOr<ModelGraph> m;
  ASSERT_TRUE(LowersTo(b, 5, &m));
  EXPECT_THAT(m->steps[0].workload.Canonical(), HasSubstr("act=leakyrelu"));
  EXPECT_THAT(m->steps[0].floats, Pointwise(Near(), {0.3f, 0.0f}));
  EXPECT_THAT(m->steps[1].workload.Canonical(), HasSubstr("act=hardsigmoid"));
  EXPECT_THAT(m->steps[1].floats, Pointwise(Near(), {0.25f, 0.4f}));
  for (int k = 2; k < 5; ++k) {
    EXPECT_THAT(m->steps[k].workload.Canonical(),
                ::testing::AllOf(HasSubstr("conv2d"), HasSubstr("act=clip")));
  }
  EXPECT_THAT(m->steps[2].floats, ElementsAre(-2, kInf));
  EXPECT_THAT(m->steps[3].floats, ElementsAre(-kInf, 3));
  EXPECT_THAT(m->steps[4].floats, ElementsAre(0, 3));
  ExpectRunnable(*m);
}

// Eltwise: A is the operand of the output's shape (swapped for a
// commutative op), B a channel constant spread to C values; a lone
// BatchNormalization is an eltwise whose scale and shift are BN's.
TEST(ModelGraph, EltwiseOperandsAndLoneBatchNorm) {
  GraphBuilder b;
  b.Input("x", {1, 2, 2, 3});
  b.Floats("per_c", {2, 1, 1}, {1, 2});
  b.Node("Mul", {"per_c", "x"}, {"m"});  // B first: swapped
  b.Floats("gamma", {2}, {1, 2});
  b.Floats("beta", {2}, {0, 1});
  b.Floats("mean", {2}, {0, 0});
  b.Floats("var", {2}, {1, 1});
  auto* bn = b.Node("BatchNormalization", {"x", "gamma", "beta", "mean", "var"},
                    {"n"});
  GraphBuilder::Float(bn, "epsilon", 0.0f);
  b.Output("m");
  b.Output("n");
  absl::StatusOr<ModelGraph> m;
  ASSERT_TRUE(LowersTo(b, 2, &m));
  const ModelStep& mul = m->steps[0];
  // a, b, output, scale, shift and the (unread) residual.
  ExpectStep(mul, "eltwise N=1 C=2 H=2 W=3 fp32 fn=mul b=channel",
             {"x", "", "m", "", "", ""});
  EXPECT_THAT(mul.buffers[1].constant, ElementsAre(1, 2));
  const ModelStep& norm = m->steps[1];
  EXPECT_EQ(norm.workload.Canonical(),
            "eltwise N=1 C=2 H=2 W=3 fp32 b=scalar affine=scale_shift");
  EXPECT_THAT(norm.buffers[1].constant, ElementsAre(0));  // unread B
  EXPECT_THAT(norm.buffers[3].constant, ElementsAre(1, 2));
  EXPECT_THAT(norm.buffers[4].constant, ElementsAre(0, 1));
  ExpectRunnable(*m);
}

// LayerNormalization: gamma and beta as buffers, epsilon as the float.
TEST(ModelGraph, LayerNormBindsGammaBetaAndEpsilon) {
  GraphBuilder b;
  b.Opset(17);
  b.Input("x", {1, 3, 4});
  b.Floats("gamma", {4}, {1, 2, 3, 4});
  b.Floats("beta", {4}, {0, 0, 1, 1});
  auto* ln = b.Node("LayerNormalization", {"x", "gamma", "beta"}, {"y"});
  GraphBuilder::Float(ln, "epsilon", 1e-3f);
  b.Output("y");
  absl::StatusOr<ModelGraph> m;
  ASSERT_TRUE(LowersTo(b, 1, &m));
  ExpectStep(m->steps[0], "layernorm N=3 D=4 fp32 affine=scale_shift",
             {"x", "y", "", ""});
  EXPECT_THAT(m->steps[0].buffers[2].constant, ElementsAre(1, 2, 3, 4));
  EXPECT_THAT(m->steps[0].buffers[3].constant, ElementsAre(0, 0, 1, 1));
  EXPECT_THAT(m->steps[0].floats, Pointwise(Near(), {1e-3f}));
  ExpectRunnable(*m);
}

// Views are aliases of their root; folded nodes and dead ones leave
// nothing; a constant graph output is given by value.
TEST(ModelGraph, ViewsAliasFoldedNodesLeaveNothingConstantsAreOutputs) {
  GraphBuilder b;
  b.Input("x", {1, 4, 2, 2});
  b.Node("Flatten", {"x"}, {"f"});  // 1 x 16
  b.Int64s("shape", {2, 8});
  b.Node("Reshape", {"f", "shape"}, {"r"});  // alias of x, not of f
  b.Node("Softmax", {"r"}, {"y"});
  b.Node("Shape", {"x"}, {"s"});  // folded at import
  GraphBuilder::Int(b.Node("Cast", {"s"}, {"sf"}), "to",
                    onnx::TensorProto::FLOAT);
  b.Node("Relu", {"x"}, {"dead"});  // no graph output uses it
  b.Output("y");
  b.Output("sf");
  auto m = LowerGraph(b);
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_THAT(StepWorkloads(*m), ElementsAre("softmax N=2 D=8 fp32"));
  EXPECT_THAT(Tensors(m->steps[0]), ElementsAre("r", "y"));
  EXPECT_EQ(m->tensors.at("r").alias_of, "x");
  EXPECT_EQ(m->tensors.at("r").dims, (Dims{2, 8}));
  EXPECT_EQ(m->tensors.count("f"), 0u);
  EXPECT_THAT(m->outputs, ElementsAre("y", "sf"));
  EXPECT_THAT(m->constant_outputs.at("sf"), ElementsAre(1, 4, 2, 2));
  const Coverage& c = m->tasks.coverage;
  ASSERT_EQ(c.tuned.size(), 1u);
  EXPECT_EQ(c.tuned[0].op_type, "Softmax");
  EXPECT_TRUE(c.left.empty());
  ExpectRunnable(*m);
}

// A conv whose residual comes from a node after it in the model's order:
// the step runs where its last fused node is, after the residual's.
TEST(ModelGraph, FusedStepsRunAfterEverythingTheyRead) {
  GraphBuilder b;
  b.Input("x", {1, 2, 3, 3});
  b.Floats("w", {2, 2, 1, 1}, {1, 0, 0, 1});
  b.Node("Conv", {"x", "w"}, {"c"});  // node 0
  b.Node("Sigmoid", {"x"}, {"s"});    // node 1: the residual
  b.Node("Add", {"c", "s"}, {"y"});   // node 2: folded into node 0
  b.Output("y");
  absl::StatusOr<ModelGraph> m;
  ASSERT_TRUE(LowersTo(b, 2, &m));
  EXPECT_THAT(m->steps[0].workload.Canonical(), HasSubstr("act=sigmoid"));
  EXPECT_THAT(m->steps[1].workload.Canonical(), HasSubstr("residual=add"));
  EXPECT_EQ(m->steps[1].nodes, (std::vector<int>{0, 2}));
  EXPECT_THAT(Tensors(m->steps[1]), ElementsAre("x", "", "y", "", "", "s"));
  ASSERT_EQ(m->tasks.tasks.size(), 2u);
  for (const ModelTask& t : m->tasks.tasks) {
    EXPECT_THAT(
        t.nodes,
        ElementsAre(t.workload.op() == "conv2d" ? "Conv_1" : "Sigmoid_2"));
  }
}

TEST(ModelGraph, NodesThatCannotRunAreNamed) {
  {
    GraphBuilder b;
    b.Input("x", {1, 4});
    b.Node("NonZero", {"x"}, {"nz"})->set_name("find_them");
    GraphBuilder::Int(b.Node("Cast", {"nz"}, {"y"}), "to",
                      onnx::TensorProto::FLOAT);
    b.Output("y");
    ExpectRefused(b, HasSubstr("node 'find_them' (NonZero)"));
  }
  {  // A weight that is computed: conv refuses, nothing else runs it.
    GraphBuilder b;
    b.Input("x", {1, 2, 3, 3});
    b.Input("w", {2, 2, 1, 1});
    b.Node("Conv", {"x", "w"}, {"y"});
    b.Output("y");
    ExpectRefused(b,
                  HasSubstr("node 'Conv_1' (Conv): weights are not constant"));
  }
  {  // An If whose condition is a graph input.
    GraphBuilder b;
    b.Input("x", {1});
    auto* cond = b.graph()->add_input();
    cond->set_name("cond");
    cond->mutable_type()->mutable_tensor_type()->set_elem_type(
        onnx::TensorProto::BOOL);
    cond->mutable_type()->mutable_tensor_type()->mutable_shape();
    auto* n = b.Node("If", {"cond"}, {"y"});
    for (const char* branch : {"then_branch", "else_branch"}) {
      auto* a = n->add_attribute();
      a->set_name(branch);
      a->set_type(onnx::AttributeProto::GRAPH);
      auto* g = a->mutable_g();
      auto* id = g->add_node();
      id->set_op_type("Identity");
      id->add_input("x");
      id->add_output(std::string(branch) + "_out");
      auto* out = g->add_output();
      out->set_name(std::string(branch) + "_out");
      out->mutable_type()->mutable_tensor_type()->set_elem_type(
          onnx::TensorProto::FLOAT);
    }
    b.Output("y");
    auto m = LowerGraph(b);
    EXPECT_FALSE(m.ok());
    EXPECT_THAT(
        std::string(m.status().message()),
        ::testing::AnyOf(HasSubstr("(If): its condition is not constant"),
                         HasSubstr("data type")));
  }
}

// Hostile sizes are refused with the node named, never overflowed: pads
// and repeats past any dim, indices needing more copies than allowed.
TEST(ModelGraph, HostileSizesAreRefused) {
  constexpr int64_t kHuge = int64_t{1} << 40;
  {
    GraphBuilder b;
    b.Input("x", {1, 2, 3, 4});
    b.Int64s("pads", {0, 0, kHuge, 0, 0, 0, kHuge, 0});
    b.Node("Pad", {"x", "pads"}, {"y"});
    b.Output("y");
    auto m = LowerGraph(b);
    EXPECT_FALSE(m.ok());
    if (m.status().code() == absl::StatusCode::kFailedPrecondition) {
      EXPECT_THAT(std::string(m.status().message()),
                  HasSubstr("node 'Pad_1' (Pad)"));
    }
  }
  {
    GraphBuilder b;
    b.Input("x", {1, 2, 1 << 20, 1 << 20});
    b.Int64s("reps", {1 << 20, 1 << 20, 1, 1});
    b.Node("Tile", {"x", "reps"}, {"y"});
    b.Output("y");
    auto m = LowerGraph(b);
    EXPECT_FALSE(m.ok());
  }
  {
    GraphBuilder b;
    b.Input("x", {1, 200, 2});
    std::vector<int64_t> scattered;
    for (int64_t k = 0; k < 200; ++k) {
      scattered.push_back(k % 2 == 0 ? k / 2 : 199 - k / 2);  // 0 199 1 198
    }
    b.Int64s("idx", scattered);
    GraphBuilder::Int(b.Node("Gather", {"x", "idx"}, {"y"}), "axis", 1);
    b.Output("y");
    ExpectRefused(b, ::testing::AllOf(HasSubstr("node 'Gather_1' (Gather)"),
                                      HasSubstr("copies")));
  }
}

// The PP-OCR models (deploy/fetch-model.sh) lower completely: no error,
// and every node that is not folded at import runs in some step.
TEST(ModelGraph, RealModelsLowerCompletely) {
  testing::ForEachPpOcrModelOrSkip(
      TUNEFLEET_SOURCE_DIR, [](const testing::PpOcrModel& model) {
        absl::StatusOr<std::string> bytes = base::ReadWholeFile(model.path);
        ASSERT_TRUE(bytes.ok()) << bytes.status();
        auto m = ImportModelGraph(*bytes, model.file, {{"x", model.dims}});
        ASSERT_TRUE(m.ok()) << model.file << ": " << m.status();
        EXPECT_FALSE(m->steps.empty());
        ExpectRunnable(*m);
        EXPECT_TRUE(m->tasks.coverage.left.empty()) << model.file;
        std::set<int> run;
        for (const ModelStep& s : m->steps)
          run.insert(s.nodes.begin(), s.nodes.end());
        int tuned_or_fused = 0;
        for (const auto* list :
             {&m->tasks.coverage.tuned, &m->tasks.coverage.fused}) {
          for (const OpShare& s : *list) tuned_or_fused += s.nodes;
        }
        EXPECT_EQ(static_cast<int>(run.size()), tuned_or_fused) << model.file;
      });
}

}  // namespace
}  // namespace tunefleet::onnx_import
