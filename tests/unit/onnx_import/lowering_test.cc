// The lowerings of onnx_import/lowering.h and the padded convolutions and
// pools of match.h: per ONNX op a small model whose steps are checked, and
// whose outputs, computed by running the steps on the host
// (step_simulator.h), are compared with the ONNX semantics written out in
// the test.
#include <cfloat>
#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernels_templates/registry.h"
#include "onnx_import/match.h"
#include "onnx_import/model_graph.h"
#include "tests/support/onnx_test_models.h"
#include "tests/unit/onnx_import/step_simulator.h"

namespace tunefleet::onnx_import {
namespace {

using ::testing::ElementsAre;
using testing::GraphBuilder;
using ::testing::HasSubstr;
using Dims = std::vector<int64_t>;

absl::StatusOr<ModelGraph> Lower(GraphBuilder& b) {
  return ImportModelGraph(b.Bytes(), "test.onnx", {});
}

std::vector<std::string> Ops(const ModelGraph& m) {
  std::vector<std::string> out;
  for (const ModelStep& s : m.steps) out.push_back(s.workload.op());
  return out;
}

// 0.5, 1.5, ... distinct values, negative ones from `negative_from` on.
std::vector<float> Values(int64_t n, int64_t negative_from = 1 << 30) {
  std::vector<float> v(n);
  for (int64_t i = 0; i < n; ++i)
    v[i] = (i >= negative_from ? -1 : 1) * (i + 0.5f);
  return v;
}

int64_t Count(const Dims& d) {
  int64_t n = 1;
  for (int64_t x : d) n *= x;
  return n;
}

// The value at multi-index `at` of a row-major tensor of `dims`.
float At(const std::vector<float>& v, const Dims& dims, const Dims& at) {
  int64_t i = 0;
  for (size_t k = 0; k < dims.size(); ++k) i = i * dims[k] + at[k];
  return v[i];
}

// Calls f(index) for every multi-index of `dims`, in row-major order.
void ForEach(const Dims& dims, const std::function<void(const Dims&)>& f) {
  Dims at(dims.size(), 0);
  for (int64_t n = 0; n < Count(dims); ++n) {
    f(at);
    for (size_t k = dims.size(); k-- > 0;) {
      if (++at[k] < dims[k]) break;
      at[k] = 0;
    }
  }
}

// The expected tensor of `dims` whose element at each index is f(index).
std::vector<float> Expected(const Dims& dims,
                            const std::function<float(const Dims&)>& f) {
  std::vector<float> out;
  ForEach(dims, [&](const Dims& at) { out.push_back(f(at)); });
  return out;
}

void ExpectNear(const std::vector<float>& got, const std::vector<float>& want,
                const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_NEAR(got[i], want[i], 1e-5 * std::max(1.0f, std::fabs(want[i])))
        << what << " element " << i;
  }
}

// Lowers `b`, checks that every step runs on some template, runs the steps
// on `inputs` and returns the outputs.
std::map<std::string, std::vector<float>> LowerAndRun(
    GraphBuilder& b, const std::map<std::string, std::vector<float>>& inputs,
    ModelGraph* graph = nullptr) {
  absl::StatusOr<ModelGraph> m = Lower(b);
  EXPECT_TRUE(m.ok()) << m.status();
  if (!m.ok()) return {};
  for (const ModelStep& s : m->steps) {
    EXPECT_TRUE(templates::FindTemplateFor(s.workload, "").ok())
        << s.workload.Canonical();
  }
  if (graph != nullptr) *graph = *m;
  return testing::StepSimulator(*m).Run(inputs);
}

TEST(Lowering, TransposeIsOneCopy) {
  GraphBuilder b;
  b.Input("x", {1, 3, 4, 5});
  GraphBuilder::Ints(b.Node("Transpose", {"x"}, {"nhwc"}), "perm",
                     {0, 2, 3, 1});
  GraphBuilder::Ints(b.Node("Transpose", {"x"}, {"mixed"}), "perm",
                     {3, 1, 0, 2});
  b.Output("nhwc");
  b.Output("mixed");
  const Dims xd = {1, 3, 4, 5};
  const std::vector<float> x = Values(60);
  ModelGraph m;
  auto out = LowerAndRun(b, {{"x", x}}, &m);
  EXPECT_THAT(Ops(m), ElementsAre("copy", "copy"));
  ExpectNear(out["nhwc"],
             Expected({1, 4, 5, 3},
                      [&](const Dims& i) {
                        return At(x, xd, {i[0], i[3], i[1], i[2]});
                      }),
             "nhwc");
  ExpectNear(out["mixed"],
             Expected({5, 3, 1, 4},
                      [&](const Dims& i) {
                        return At(x, xd, {i[2], i[1], i[3], i[0]});
                      }),
             "mixed");
}

TEST(Lowering, SliceWithStepsAndANegativeStep) {
  GraphBuilder b;
  b.Input("x", {1, 8, 10, 12});
  b.Int64s("starts", {1, 2}), b.Int64s("ends", {7, -1});
  b.Int64s("axes", {1, 3}), b.Int64s("steps", {2, 3});
  b.Node("Slice", {"x", "starts", "ends", "axes", "steps"}, {"strided"});
  b.Int64s("rs", {-2}), b.Int64s("re", {0}), b.Int64s("ra", {2});
  b.Int64s("rstep", {-3});
  b.Node("Slice", {"x", "rs", "re", "ra", "rstep"}, {"reversed"});
  b.Output("strided");
  b.Output("reversed");
  const Dims xd = {1, 8, 10, 12};
  const std::vector<float> x = Values(960);
  ModelGraph m;
  auto out = LowerAndRun(b, {{"x", x}}, &m);
  // 1:7:2 -> 1, 3, 5; 2:-1:3 -> 2, 5, 8.
  ExpectNear(
      out["strided"],
      Expected({1, 3, 10, 3},
               [&](const Dims& i) {
                 return At(x, xd, {i[0], 1 + 2 * i[1], i[2], 2 + 3 * i[3]});
               }),
      "strided");
  // -2:0:-3 on 10 rows -> 8, 5, 2: one copy per row taken.
  ExpectNear(out["reversed"],
             Expected({1, 8, 3, 12},
                      [&](const Dims& i) {
                        return At(x, xd, {i[0], i[1], 8 - 3 * i[2], i[3]});
                      }),
             "reversed");
  EXPECT_EQ(m.steps.size(), 4u);
}

TEST(Lowering, ConcatOfTensorsAndAConstant) {
  GraphBuilder b;
  b.Input("x", {1, 3, 2, 2});
  b.Node("Relu", {"x"}, {"r"});
  b.Floats("c", {1, 1, 2, 2}, {10, 20, 30, 40});
  GraphBuilder::Int(b.Node("Concat", {"x", "r", "c"}, {"y"}), "axis", 1);
  GraphBuilder::Int(b.Node("Concat", {"x", "r"}, {"last"}), "axis", -1);
  b.Output("y");
  b.Output("last");
  const Dims xd = {1, 3, 2, 2};
  const std::vector<float> x = Values(12, 6);
  ModelGraph m;
  auto out = LowerAndRun(b, {{"x", x}}, &m);
  ExpectNear(
      out["y"],
      Expected({1, 7, 2, 2},
               [&](const Dims& i) {
                 if (i[1] < 3) return At(x, xd, i);
                 if (i[1] < 6) {
                   return std::max(0.0f, At(x, xd, {0, i[1] - 3, i[2], i[3]}));
                 }
                 return 10.0f * (1 + i[2] * 2 + i[3]);
               }),
      "y");
  ExpectNear(out["last"],
             Expected({1, 3, 2, 4},
                      [&](const Dims& i) {
                        const float v = At(x, xd, {0, i[1], i[2], i[3] % 2});
                        return i[3] < 2 ? v : std::max(0.0f, v);
                      }),
             "last");
  // The constant's copy reads the constant's values.
  int constants = 0;
  for (const ModelStep& s : m.steps) {
    if (s.workload.op() == "copy" && !s.buffers[0].constant.empty()) {
      ++constants;
      EXPECT_THAT(s.buffers[0].constant, ElementsAre(10, 20, 30, 40));
    }
  }
  EXPECT_EQ(constants, 1);
}

TEST(Lowering, SplitBySizesAndInHalves) {
  GraphBuilder b;
  b.Input("x", {1, 6, 2, 4});
  b.Int64s("sizes", {1, 2, 3});
  GraphBuilder::Int(b.Node("Split", {"x", "sizes"}, {"s0", "s1", "s2"}), "axis",
                    1);
  GraphBuilder::Int(b.Node("Split", {"x"}, {"h0", "h1"}), "axis", 3);
  for (const char* o : {"s0", "s1", "s2", "h0", "h1"}) b.Output(o);
  const Dims xd = {1, 6, 2, 4};
  const std::vector<float> x = Values(48);
  auto out = LowerAndRun(b, {{"x", x}});
  ExpectNear(out["s2"],
             Expected({1, 3, 2, 4},
                      [&](const Dims& i) {
                        return At(x, xd, {0, 3 + i[1], i[2], i[3]});
                      }),
             "s2");
  ExpectNear(out["h1"],
             Expected({1, 6, 2, 2},
                      [&](const Dims& i) {
                        return At(x, xd, {0, i[1], i[2], 2 + i[3]});
                      }),
             "h1");
}

TEST(Lowering, PadConstantEdgeReflectAndCrop) {
  GraphBuilder b;
  b.Input("x", {1, 2, 3, 4});
  b.Int64s("pads", {0, 0, 1, 2, 0, 0, 2, 0});
  b.Floats("value", {}, {0.5});
  b.Node("Pad", {"x", "pads", "value"}, {"constant"});
  b.Int64s("pads2", {0, 0, 2, 1, 0, 0, 1, 3});
  GraphBuilder::String(b.Node("Pad", {"x", "pads2"}, {"edge"}), "mode", "edge");
  GraphBuilder::String(b.Node("Pad", {"x", "pads2"}, {"reflect"}), "mode",
                       "reflect");
  b.Int64s("crop", {0, 0, -1, 1, 0, 0, 0, -2});
  b.Node("Pad", {"x", "crop"}, {"cropped"});
  for (const char* o : {"constant", "edge", "reflect", "cropped"}) b.Output(o);
  const Dims xd = {1, 2, 3, 4};
  const std::vector<float> x = Values(24);
  ModelGraph m;
  auto out = LowerAndRun(b, {{"x", x}}, &m);
  ExpectNear(out["constant"],
             Expected({1, 2, 6, 6},
                      [&](const Dims& i) {
                        const int64_t h = i[2] - 1, w = i[3] - 2;
                        if (h < 0 || h >= 3 || w < 0 || w >= 4) return 0.5f;
                        return At(x, xd, {0, i[1], h, w});
                      }),
             "constant");
  auto clampi = [](int64_t v, int64_t n) {
    return std::max<int64_t>(0, std::min(v, n - 1));
  };
  auto reflect = [](int64_t v, int64_t n) {
    if (v < 0) return -v;
    if (v >= n) return 2 * (n - 1) - v;
    return v;
  };
  ExpectNear(
      out["edge"],
      Expected({1, 2, 6, 8},
               [&](const Dims& i) {
                 return At(x, xd,
                           {0, i[1], clampi(i[2] - 2, 3), clampi(i[3] - 1, 4)});
               }),
      "edge");
  ExpectNear(out["reflect"],
             Expected({1, 2, 6, 8},
                      [&](const Dims& i) {
                        return At(x, xd,
                                  {0, i[1], reflect(i[2] - 2, 3),
                                   reflect(i[3] - 1, 4)});
                      }),
             "reflect");
  ExpectNear(out["cropped"],
             Expected({1, 2, 2, 3},
                      [&](const Dims& i) {
                        if (i[3] == 0) return 0.0f;
                        return At(x, xd, {0, i[1], i[2] + 1, i[3] - 1});
                      }),
             "cropped");
  EXPECT_EQ(m.steps[0].workload.op(), "fill");
  EXPECT_THAT(m.steps[0].floats, ElementsAre(0.5f));
}

TEST(Lowering, GatherWithConstantIndices) {
  GraphBuilder b;
  b.Input("x", {1, 5, 6});
  b.Int64s("list", {4, 0, 2, 3, 4});
  GraphBuilder::Int(b.Node("Gather", {"x", "list"}, {"picked"}), "axis", 1);
  b.Int64s("one", {5}, /*scalar=*/true);
  GraphBuilder::Int(b.Node("Gather", {"x", "one"}, {"column"}), "axis", 2);
  b.Int64s("last", {-1});
  GraphBuilder::Int(b.Node("Gather", {"x", "last"}, {"row"}), "axis", 1);
  for (const char* o : {"picked", "column", "row"}) b.Output(o);
  const Dims xd = {1, 5, 6};
  const std::vector<float> x = Values(30);
  ModelGraph m;
  auto out = LowerAndRun(b, {{"x", x}}, &m);
  const Dims list = {4, 0, 2, 3, 4};
  ExpectNear(out["picked"],
             Expected({1, 5, 6},
                      [&](const Dims& i) {
                        return At(x, xd, {0, list[i[1]], i[2]});
                      }),
             "picked");
  ExpectNear(out["column"],
             Expected({1, 5},
                      [&](const Dims& i) {
                        return At(x, xd, {0, i[1], 5});
                      }),
             "column");
  ExpectNear(out["row"],
             Expected({1, 1, 6},
                      [&](const Dims& i) {
                        return At(x, xd, {0, 4, i[2]});
                      }),
             "row");
  // {4}, {0, 2, 4}... runs in arithmetic progression: 4 | 0 2 | 3 4.
  int picked = 0;
  for (const ModelStep& s : m.steps) picked += s.label == "Gather_1";
  EXPECT_EQ(picked, 3);
}

TEST(Lowering, ExpandTileAndDepthToSpace) {
  GraphBuilder b;
  b.Input("x", {1, 3, 1, 2});
  b.Int64s("to", {2, 3, 4, 2});
  b.Node("Expand", {"x", "to"}, {"big"});
  b.Int64s("reps", {1, 2, 3, 1});
  b.Node("Tile", {"x", "reps"}, {"tiled"});
  b.Input("z", {1, 8, 2, 3});
  auto* dcr = b.Node("DepthToSpace", {"z"}, {"dcr"});
  GraphBuilder::Int(dcr, "blocksize", 2);
  auto* crd = b.Node("DepthToSpace", {"z"}, {"crd"});
  GraphBuilder::Int(crd, "blocksize", 2);
  GraphBuilder::String(crd, "mode", "CRD");
  b.Input("s", {1, 2, 4, 6});
  GraphBuilder::Int(b.Node("SpaceToDepth", {"s"}, {"s2d"}), "blocksize", 2);
  for (const char* o : {"big", "tiled", "dcr", "crd", "s2d"}) b.Output(o);
  const Dims xd = {1, 3, 1, 2}, zd = {1, 8, 2, 3}, sd = {1, 2, 4, 6};
  const std::vector<float> x = Values(6), z = Values(48), s = Values(48);
  auto out = LowerAndRun(b, {{"x", x}, {"z", z}, {"s", s}});
  ExpectNear(out["big"],
             Expected({2, 3, 4, 2},
                      [&](const Dims& i) {
                        return At(x, xd, {0, i[1], 0, i[3]});
                      }),
             "big");
  ExpectNear(out["tiled"],
             Expected({1, 6, 3, 2},
                      [&](const Dims& i) {
                        return At(x, xd, {0, i[1] % 3, 0, i[3]});
                      }),
             "tiled");
  // DCR: y[n, c, h*b+i, w*b+j] = x[n, (i*b+j)*C' + c, h, w], C' = 2;
  // CRD: x[n, c*b*b + i*b + j, h, w].
  ExpectNear(
      out["dcr"],
      Expected(
          {1, 2, 4, 6},
          [&](const Dims& o) {
            const int64_t i = o[2] % 2, j = o[3] % 2;
            return At(z, zd, {0, (i * 2 + j) * 2 + o[1], o[2] / 2, o[3] / 2});
          }),
      "dcr");
  ExpectNear(
      out["crd"],
      Expected(
          {1, 2, 4, 6},
          [&](const Dims& o) {
            const int64_t i = o[2] % 2, j = o[3] % 2;
            return At(z, zd, {0, o[1] * 4 + i * 2 + j, o[2] / 2, o[3] / 2});
          }),
      "crd");
  // y[n, (i*b+j)*C + c, h, w] = x[n, c, h*b+i, w*b+j].
  ExpectNear(out["s2d"],
             Expected({1, 8, 2, 3},
                      [&](const Dims& o) {
                        const int64_t block = o[1] / 2, c = o[1] % 2;
                        return At(
                            s, sd,
                            {0, c, o[2] * 2 + block / 2, o[3] * 2 + block % 2});
                      }),
             "s2d");
}

// ConstantOfShape of a folded shape is a constant (small), concatenated as
// channel padding; Cast fp32 -> fp32 is an alias; Cast to an integer type
// at run time is refused by name.
TEST(Lowering, ConstantOfShapeAndCast) {
  GraphBuilder b;
  b.Input("x", {1, 3, 2, 2});
  b.Node("Shape", {"x"}, {"shape"});
  auto* zeros = b.Node("ConstantOfShape", {"shape"}, {"quarters"});
  auto* a = zeros->add_attribute();
  a->set_name("value");
  a->set_type(onnx::AttributeProto::TENSOR);
  a->mutable_t()->set_data_type(onnx::TensorProto::FLOAT);
  a->mutable_t()->add_dims(1);
  a->mutable_t()->add_float_data(0.25f);
  b.Node("Add", {"x", "quarters"}, {"shifted"});
  GraphBuilder::Int(b.Node("Cast", {"x"}, {"same"}), "to",
                    onnx::TensorProto::FLOAT);
  b.Node("Relu", {"same"}, {"r"});
  b.Output("shifted");
  b.Output("r");
  const std::vector<float> x = Values(12, 6);
  ModelGraph m;
  auto out = LowerAndRun(b, {{"x", x}}, &m);
  ExpectNear(out["shifted"],
             Expected({1, 3, 2, 2},
                      [&](const Dims& i) {
                        return x[i[1] * 4 + i[2] * 2 + i[3]] + 0.25f;
                      }),
             "shifted");
  EXPECT_EQ(m.tensors.at("same").alias_of, "x");
  GraphBuilder bad;
  bad.Input("x", {1, 3});
  GraphBuilder::Int(bad.Node("Cast", {"x"}, {"i"}), "to",
                    onnx::TensorProto::INT64);
  bad.Output("i");
  bad.graph()
      ->mutable_output(0)
      ->mutable_type()
      ->mutable_tensor_type()
      ->set_elem_type(onnx::TensorProto::INT64);
  auto refused = Lower(bad);
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(refused.status().message()),
              HasSubstr("node 'Cast_1' (Cast): a Cast to INT64 at run time"));
}

TEST(Lowering, ReductionsOverAnyAxes) {
  GraphBuilder b;
  b.Input("x", {2, 4, 5, 6});
  auto* mean = b.Node("ReduceMean", {"x"}, {"y13"});
  GraphBuilder::Ints(mean, "axes", {1, 3});
  auto* mx = b.Node("ReduceMax", {"x"}, {"y02"});
  GraphBuilder::Ints(mx, "axes", {0, 2});
  GraphBuilder::Int(mx, "keepdims", 0);
  b.Int64s("sum_axes", {2, 3});
  b.Node("ReduceSum", {"x", "sum_axes"}, {"y23"});
  b.Node("ReduceL2", {"x"}, {"all"});
  for (const char* o : {"y13", "y02", "y23", "all"}) b.Output(o);
  const Dims xd = {2, 4, 5, 6};
  const std::vector<float> x = Values(240, 100);
  ModelGraph m;
  auto out = LowerAndRun(b, {{"x", x}}, &m);
  ExpectNear(out["y13"],
             Expected({2, 1, 5, 1},
                      [&](const Dims& o) {
                        double s = 0;
                        for (int64_t c = 0; c < 4; ++c)
                          for (int64_t w = 0; w < 6; ++w)
                            s += At(x, xd, {o[0], c, o[2], w});
                        return static_cast<float>(s / 24);
                      }),
             "y13");
  ExpectNear(out["y02"],
             Expected({4, 6},
                      [&](const Dims& o) {
                        float v = -FLT_MAX;
                        for (int64_t n = 0; n < 2; ++n)
                          for (int64_t h = 0; h < 5; ++h)
                            v = std::max(v, At(x, xd, {n, o[0], h, o[1]}));
                        return v;
                      }),
             "y02");
  ExpectNear(out["y23"],
             Expected({2, 4, 1, 1},
                      [&](const Dims& o) {
                        double s = 0;
                        for (int64_t h = 0; h < 5; ++h)
                          for (int64_t w = 0; w < 6; ++w)
                            s += At(x, xd, {o[0], o[1], h, w});
                        return static_cast<float>(s);
                      }),
             "y23");
  double sq = 0;
  for (float v : x) sq += v * v;
  ExpectNear(out["all"], {static_cast<float>(std::sqrt(sq))}, "all");
  // Non-contiguous axes: a transpose, then the reduction.
  EXPECT_THAT(Ops(m), ElementsAre("copy", "reduce", "copy", "reduce", "reduce",
                                  "reduce"));
  EXPECT_EQ(m.steps[1].workload.Canonical(),
            "reduce O=10 R=24 I=1 fp32 fn=mean");
  EXPECT_EQ(m.steps[4].workload.Canonical(), "reduce O=8 R=30 I=1 fp32");
}

TEST(Lowering, UnaryFunctionsAndPow) {
  GraphBuilder b;
  b.Input("x", {1, 3, 2, 2});
  b.Node("Abs", {"x"}, {"ab"});
  b.Node("Sqrt", {"ab"}, {"sq"});
  b.Node("Neg", {"x"}, {"ng"});
  b.Node("Exp", {"ng"}, {"ex"});
  b.Floats("per_c", {3, 1, 1}, {0.5, 2, 3});
  b.Node("Pow", {"ab", "per_c"}, {"pw"});
  for (const char* o : {"sq", "ex", "pw"}) b.Output(o);
  const std::vector<float> x = Values(12, 5);
  ModelGraph m;
  auto out = LowerAndRun(b, {{"x", x}}, &m);
  const float e[3] = {0.5, 2, 3};
  ExpectNear(
      out["sq"],
      Expected({1, 3, 2, 2},
               [&](const Dims& i) {
                 return std::sqrt(std::fabs(x[i[1] * 4 + i[2] * 2 + i[3]]));
               }),
      "sq");
  ExpectNear(out["ex"],
             Expected({1, 3, 2, 2},
                      [&](const Dims& i) {
                        return std::exp(-x[i[1] * 4 + i[2] * 2 + i[3]]);
                      }),
             "ex");
  ExpectNear(out["pw"],
             Expected({1, 3, 2, 2},
                      [&](const Dims& i) {
                        return std::pow(
                            std::fabs(x[i[1] * 4 + i[2] * 2 + i[3]]), e[i[1]]);
                      }),
             "pw");
  EXPECT_THAT(m.steps[1].workload.Canonical(),
              HasSubstr("eltwise N=1 C=3 H=2 W=2 fp32 fn=sqrt b=scalar"));
}

// Operands broadcast in ways eltwise does not take are expanded by a copy
// first: a first operand that is broadcast, both operands broadcast.
TEST(Lowering, GeneralBroadcastingExpandsOperands) {
  GraphBuilder b;
  b.Input("x", {2, 3, 2, 2});
  b.Floats("per_c", {3, 1, 1}, {1, 2, 3});
  b.Node("Sub", {"per_c", "x"}, {"d"});
  b.Input("col", {1, 3, 1, 1});
  b.Input("row", {2, 1, 2, 2});
  b.Node("Mul", {"col", "row"}, {"outer"});
  b.Output("d");
  b.Output("outer");
  const Dims xd = {2, 3, 2, 2};
  const std::vector<float> x = Values(24), col = {1, 2, 3}, row = Values(8);
  ModelGraph m;
  auto out = LowerAndRun(b, {{"x", x}, {"col", col}, {"row", row}}, &m);
  ExpectNear(
      out["d"],
      Expected(xd, [&](const Dims& i) { return (i[1] + 1.0f) - At(x, xd, i); }),
      "d");
  ExpectNear(
      out["outer"],
      Expected(
          xd,
          [&](const Dims& i) {
            return col[i[1]] * At(row, {2, 1, 2, 2}, {i[0], 0, i[2], i[3]});
          }),
      "outer");
  EXPECT_THAT(Ops(m),
              ElementsAre("copy", "eltwise", "copy", "copy", "eltwise"));
}

// Clip with bounds computed at run time: eltwise max then min with the
// bounds' one-element tensors as B.
TEST(Lowering, ClipWithComputedBounds) {
  GraphBuilder b;
  b.Input("x", {1, 2, 3});
  b.Node("ReduceMax", {"x"}, {"top"});  // keepdims: 1 x 1 x 1
  b.Floats("range", {}, {4});
  b.Node("Sub", {"top", "range"}, {"lo"});
  b.Node("Clip", {"x", "lo"}, {"y"});
  b.Output("y");
  const std::vector<float> x = {-5, 1, 2, 3, 4, 0.5};
  auto out = LowerAndRun(b, {{"x", x}});
  ExpectNear(out["y"], {0, 1, 2, 3, 4, 0.5}, "y");
}

TEST(Lowering, SoftmaxOnAnotherAxisAndMatMulBroadcast) {
  GraphBuilder b;
  b.Input("x", {2, 3, 4});
  GraphBuilder::Int(b.Node("Softmax", {"x"}, {"s"}), "axis", 1);
  b.Input("a", {2, 1, 2, 3});
  b.Input("w", {3, 3, 2});
  b.Node("MatMul", {"a", "w"}, {"p"});  // batch 2 x 1 against 3 -> 2 x 3
  b.Output("s");
  b.Output("p");
  const Dims xd = {2, 3, 4}, ad = {2, 1, 2, 3}, wd = {3, 3, 2};
  const std::vector<float> x = Values(24, 10), a = Values(12, 3),
                           w = Values(18, 9);
  ModelGraph m;
  auto out = LowerAndRun(b, {{"x", x}, {"a", a}, {"w", w}}, &m);
  ExpectNear(out["s"],
             Expected(xd,
                      [&](const Dims& i) {
                        double sum = 0;
                        for (int64_t c = 0; c < 3; ++c) {
                          sum += std::exp(At(x, xd, {i[0], c, i[2]}));
                        }
                        return static_cast<float>(std::exp(At(x, xd, i)) / sum);
                      }),
             "s");
  ExpectNear(
      out["p"],
      Expected(
          {2, 3, 2, 2},
          [&](const Dims& i) {
            double acc = 0;
            for (int64_t k = 0; k < 3; ++k) {
              acc += At(a, ad, {i[0], 0, i[2], k}) * At(w, wd, {i[1], k, i[3]});
            }
            return static_cast<float>(acc);
          }),
      "p");
}

// ONNX Conv with padding `begin` / `end` per spatial axis, written out.
std::vector<float> Conv(const std::vector<float>& x, const Dims& xd,
                        const std::vector<float>& w, const Dims& wd,
                        const Dims& begin, const Dims& stride,
                        const Dims& out) {
  return Expected(out, [&](const Dims& o) {
    double acc = 0;
    for (int64_t c = 0; c < xd[1]; ++c)
      for (int64_t r = 0; r < wd[2]; ++r)
        for (int64_t s = 0; s < wd[3]; ++s) {
          const int64_t h = o[2] * stride[0] - begin[0] + r;
          const int64_t v = o[3] * stride[1] - begin[1] + s;
          if (h < 0 || h >= xd[2] || v < 0 || v >= xd[3]) continue;
          acc += At(x, xd, {o[0], c, h, v}) * At(w, wd, {o[1], c, r, s});
        }
    return static_cast<float>(acc);
  });
}

TEST(Lowering, ConvWithAutomaticAndAsymmetricPadding) {
  GraphBuilder b;
  b.Input("x", {1, 2, 5, 5});
  const std::vector<float> w = Values(36, 17);
  b.Floats("w", {2, 2, 3, 3}, w);
  auto* upper = b.Node("Conv", {"x", "w"}, {"upper"});
  GraphBuilder::String(upper, "auto_pad", "SAME_UPPER");
  GraphBuilder::Ints(upper, "strides", {2, 2});
  auto* lower = b.Node("Conv", {"x", "w"}, {"lower"});
  GraphBuilder::String(lower, "auto_pad", "SAME_LOWER");
  GraphBuilder::Ints(lower, "strides", {2, 2});
  auto* explicit_pads = b.Node("Conv", {"x", "w"}, {"explicit"});
  GraphBuilder::Ints(explicit_pads, "pads", {0, 1, 2, 1});
  for (const char* o : {"upper", "lower", "explicit"}) b.Output(o);
  const Dims xd = {1, 2, 5, 5}, wd = {2, 2, 3, 3};
  const std::vector<float> x = Values(50, 20);
  ModelGraph m;
  auto out = LowerAndRun(b, {{"x", x}}, &m);
  // SAME on 5 with stride 2 and kernel 3: 3 outputs, 2 pads: 1 + 1 either
  // way; explicit (0, 1) rows and (2, 1) columns differ from their end.
  ExpectNear(out["upper"], Conv(x, xd, w, wd, {1, 1}, {2, 2}, {1, 2, 3, 3}),
             "upper");
  ExpectNear(out["lower"], Conv(x, xd, w, wd, {1, 1}, {2, 2}, {1, 2, 3, 3}),
             "lower");
  ExpectNear(out["explicit"], Conv(x, xd, w, wd, {0, 1}, {1, 1}, {1, 2, 5, 5}),
             "explicit");
  EXPECT_THAT(Ops(m),
              ElementsAre("conv2d", "conv2d", "fill", "copy", "conv2d"));
  EXPECT_THAT(m.steps[4].workload.Canonical(),
              ::testing::AllOf(HasSubstr("H=7 W=7"), HasSubstr("PH=0 PW=0")));
}

TEST(Lowering, ConvSameUpperWithAnEvenKernelPadsTheEnd) {
  GraphBuilder b;
  b.Input("x", {1, 1, 4, 4});
  const std::vector<float> w = {1, 2, 3, 4};
  b.Floats("w", {1, 1, 2, 2}, w);
  GraphBuilder::String(b.Node("Conv", {"x", "w"}, {"y"}), "auto_pad",
                       "SAME_UPPER");
  GraphBuilder::String(b.Node("Conv", {"x", "w"}, {"z"}), "auto_pad",
                       "SAME_LOWER");
  b.Output("y");
  b.Output("z");
  const std::vector<float> x = Values(16);
  auto out = LowerAndRun(b, {{"x", x}});
  ExpectNear(
      out["y"],
      Conv(x, {1, 1, 4, 4}, w, {1, 1, 2, 2}, {0, 0}, {1, 1}, {1, 1, 4, 4}),
      "y");
  ExpectNear(
      out["z"],
      Conv(x, {1, 1, 4, 4}, w, {1, 1, 2, 2}, {1, 1}, {1, 1}, {1, 1, 4, 4}),
      "z");
}

TEST(Lowering, PoolsWithPaddingTheKernelDoesNotDo) {
  GraphBuilder b;
  b.Input("x", {1, 2, 5, 5});
  auto* mp = b.Node("MaxPool", {"x"}, {"max"});
  GraphBuilder::Ints(mp, "kernel_shape", {3, 3});
  GraphBuilder::Ints(mp, "strides", {2, 2});
  GraphBuilder::Ints(mp, "pads", {0, 0, 1, 1});
  auto* ap = b.Node("AveragePool", {"x"}, {"avg"});
  GraphBuilder::Ints(ap, "kernel_shape", {3, 3});
  GraphBuilder::Ints(ap, "pads", {1, 1, 1, 1});
  GraphBuilder::Int(ap, "count_include_pad", 1);
  auto* ceil = b.Node("MaxPool", {"x"}, {"ceil"});
  GraphBuilder::Ints(ceil, "kernel_shape", {2, 2});
  GraphBuilder::Ints(ceil, "strides", {2, 2});
  GraphBuilder::Int(ceil, "ceil_mode", 1);
  for (const char* o : {"max", "avg", "ceil"}) b.Output(o);
  const Dims xd = {1, 2, 5, 5};
  const std::vector<float> x = Values(50, 25);
  ModelGraph m;
  auto out = LowerAndRun(b, {{"x", x}}, &m);
  auto window = [&](const Dims& o, int64_t k, int64_t s, int64_t pad,
                    bool max) {
    double acc = max ? -INFINITY : 0;
    for (int64_t r = 0; r < k; ++r)
      for (int64_t t = 0; t < k; ++t) {
        const int64_t h = o[2] * s - pad + r, v = o[3] * s - pad + t;
        if (h < 0 || h >= 5 || v < 0 || v >= 5) continue;
        const float e = At(x, xd, {0, o[1], h, v});
        acc = max ? std::max<double>(acc, e) : acc + e;
      }
    return static_cast<float>(max ? acc : acc / (k * k));
  };
  ExpectNear(out["max"],
             Expected({1, 2, 2, 2},
                      [&](const Dims& o) { return window(o, 3, 2, 0, true); }),
             "max");
  ExpectNear(out["avg"],
             Expected({1, 2, 5, 5},
                      [&](const Dims& o) { return window(o, 3, 1, 1, false); }),
             "avg");
  ExpectNear(out["ceil"],
             Expected({1, 2, 3, 3},
                      [&](const Dims& o) { return window(o, 2, 2, 0, true); }),
             "ceil");
  EXPECT_THAT(m.steps[0].floats, ElementsAre(-FLT_MAX));
  GraphBuilder bad;
  bad.Input("x", {1, 2, 5, 5});
  auto* p = bad.Node("AveragePool", {"x"}, {"y"});
  GraphBuilder::Ints(p, "kernel_shape", {3, 3});
  GraphBuilder::Ints(p, "pads", {0, 0, 1, 1});
  bad.Output("y");
  auto refused = Lower(bad);
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(refused.status().message()),
              HasSubstr("node 'AveragePool_1' (AveragePool): asymmetric"));
}

TEST(Lowering, OneDimensionalConvAndPoolRunAs2d) {
  GraphBuilder b;
  b.Input("x", {1, 2, 8});
  const std::vector<float> w = Values(12, 6);
  b.Floats("w", {2, 2, 3}, w);
  auto* c = b.Node("Conv", {"x", "w"}, {"c"});
  GraphBuilder::Ints(c, "pads", {2, 1});
  GraphBuilder::Ints(c, "strides", {2});
  auto* p = b.Node("MaxPool", {"c"}, {"y"});
  GraphBuilder::Ints(p, "kernel_shape", {2});
  GraphBuilder::Ints(p, "strides", {2});
  b.Output("c");
  b.Output("y");
  const std::vector<float> x = Values(16, 8);
  ModelGraph m;
  auto out = LowerAndRun(b, {{"x", x}}, &m);
  const std::vector<float> conv =
      Conv(x, {1, 2, 1, 8}, w, {2, 2, 1, 3}, {0, 2}, {1, 2}, {1, 2, 1, 5});
  ExpectNear(out["c"], conv, "c");
  ExpectNear(out["y"],
             Expected({1, 2, 2},
                      [&](const Dims& o) {
                        return std::max(conv[o[1] * 5 + 2 * o[2]],
                                        conv[o[1] * 5 + 2 * o[2] + 1]);
                      }),
             "y");
  EXPECT_THAT(m.steps[2].workload.Canonical(),
              HasSubstr("conv2d N=1 C=2 H=1 W=11 K=2 R=1 S=3 SH=1 SW=2"));
  EXPECT_EQ(m.tensors.at("c").dims, (Dims{1, 2, 5}));
}

// An If whose condition folds (batch == 1) runs its then branch; a Clip
// whose bounds fold (Neg(0.5), Cast(C) * 0.125) fuses into the conv.
TEST(Lowering, FoldedIfAndClipBounds) {
  GraphBuilder b;
  b.Input("x", {1, 4, 2, 2});
  b.Node("Shape", {"x"}, {"shape"});
  b.Int64s("zero", {0}, /*scalar=*/true);
  b.Node("Gather", {"shape", "zero"}, {"batch"});
  b.Int64s("one", {1}, /*scalar=*/true);
  b.Node("Equal", {"batch", "one"}, {"cond"});
  auto* n = b.Node("If", {"cond"}, {"branch"});
  for (const auto& [attr, op] :
       std::vector<std::pair<std::string, std::string>>{
           {"then_branch", "Relu"}, {"else_branch", "Neg"}}) {
    auto* a = n->add_attribute();
    a->set_name(attr);
    a->set_type(onnx::AttributeProto::GRAPH);
    auto* g = a->mutable_g();
    auto* node = g->add_node();
    node->set_op_type(op);
    node->add_input("x");
    node->add_output(attr + "_out");
    auto* out = g->add_output();
    out->set_name(attr + "_out");
    out->mutable_type()->mutable_tensor_type()->set_elem_type(
        onnx::TensorProto::FLOAT);
  }
  b.Floats("w", {4, 4, 1, 1}, Values(16, 8));
  b.Node("Conv", {"branch", "w"}, {"c"});
  b.Floats("half", {}, {0.5});
  b.Node("Neg", {"half"}, {"lo"});
  b.Int64s("c_axis", {1}, /*scalar=*/true);
  b.Node("Gather", {"shape", "c_axis"}, {"channels"});
  GraphBuilder::Int(b.Node("Cast", {"channels"}, {"channels_f"}), "to",
                    onnx::TensorProto::FLOAT);
  b.Floats("eighth", {}, {0.125});
  b.Node("Mul", {"channels_f", "eighth"}, {"hi"});
  b.Node("Clip", {"c", "lo", "hi"}, {"y"});
  b.Output("y");
  ModelGraph m;
  LowerAndRun(b, {{"x", Values(16, 8)}}, &m);
  ASSERT_EQ(m.steps.size(), 2u);
  EXPECT_THAT(m.steps[0].workload.Canonical(), HasSubstr("act=relu"));
  EXPECT_THAT(m.steps[1].workload.Canonical(), HasSubstr("act=clip"));
  EXPECT_THAT(m.steps[1].floats, ElementsAre(-0.5f, 0.5f));
}

// The matched ops' bindings run too: a ConvTranspose with a bias and a
// BatchNormalization folded, a global pool, a LayerNormalization, a
// nearest Resize.
TEST(Lowering, MatchedOpsComputeTheModelsValues) {
  GraphBuilder b;
  b.Opset(17);
  b.Input("x", {1, 2, 3, 3});
  const std::vector<float> w = Values(24, 12);  // C x K x R x S = 2x3x2x2
  b.Floats("w", {2, 3, 2, 2}, w);
  b.Floats("bias", {3}, {0.5, -0.5, 1});
  auto* ct = b.Node("ConvTranspose", {"x", "w", "bias"}, {"t"});
  GraphBuilder::Ints(ct, "strides", {2, 2});
  b.Floats("gamma", {3}, {1, 2, 0.5});
  b.Floats("beta", {3}, {0, 1, -1});
  b.Floats("mean", {3}, {0.25, 0, 1});
  b.Floats("var", {3}, {1, 4, 0.25});
  b.Node("BatchNormalization", {"t", "gamma", "beta", "mean", "var"}, {"n"});
  b.Node("GlobalAveragePool", {"n"}, {"g"});
  b.Floats("ln_g", {6}, {1, 2, 3, 1, 2, 3});
  b.Floats("ln_b", {6}, {0, 0, 0, 1, 1, 1});
  GraphBuilder::Float(
      b.Node("LayerNormalization", {"n", "ln_g", "ln_b"}, {"ln"}), "epsilon",
      1e-5f);
  b.Floats("scales", {4}, {1, 1, 2, 2});
  auto* rs = b.Node("Resize", {"x", "", "scales"}, {"up"});
  GraphBuilder::String(rs, "mode", "nearest");
  GraphBuilder::String(rs, "coordinate_transformation_mode", "asymmetric");
  GraphBuilder::String(rs, "nearest_mode", "floor");
  for (const char* o : {"g", "ln", "up"}) b.Output(o);
  const Dims xd = {1, 2, 3, 3}, wd = {2, 3, 2, 2};
  const std::vector<float> x = Values(18, 9);
  ModelGraph m;
  auto out = LowerAndRun(b, {{"x", x}}, &m);
  EXPECT_THAT(Ops(m), ElementsAre("conv_transpose2d", "global_pool",
                                  "layernorm", "resize"));
  // ConvTranspose 2x2 / stride 2: each input pixel writes its own 2x2 block.
  const std::vector<float> bias = {0.5, -0.5, 1}, gamma = {1, 2, 0.5},
                           beta = {0, 1, -1}, mean = {0.25, 0, 1},
                           var = {1, 4, 0.25};
  const std::vector<float> n = Expected({1, 3, 6, 6}, [&](const Dims& o) {
    double acc = bias[o[1]];
    for (int64_t c = 0; c < 2; ++c) {
      acc += At(x, xd, {0, c, o[2] / 2, o[3] / 2}) *
             At(w, wd, {c, o[1], o[2] % 2, o[3] % 2});
    }
    const int64_t k = o[1];
    return static_cast<float>(
        (acc - mean[k]) / std::sqrt(var[k] + 1e-5) * gamma[k] + beta[k]);
  });
  ExpectNear(out["g"],
             Expected({1, 3, 1, 1},
                      [&](const Dims& o) {
                        double s = 0;
                        for (int64_t i = 0; i < 36; ++i) s += n[o[1] * 36 + i];
                        return static_cast<float>(s / 36);
                      }),
             "g");
  const std::vector<float> lg = {1, 2, 3, 1, 2, 3}, lb = {0, 0, 0, 1, 1, 1};
  ExpectNear(out["ln"],
             Expected({1, 3, 6, 6},
                      [&](const Dims& o) {
                        const int64_t row = (o[1] * 6 + o[2]) * 6;
                        double mu = 0, sq = 0;
                        for (int64_t k = 0; k < 6; ++k) mu += n[row + k];
                        mu /= 6;
                        for (int64_t k = 0; k < 6; ++k) {
                          sq += (n[row + k] - mu) * (n[row + k] - mu);
                        }
                        return static_cast<float>((n[row + o[3]] - mu) /
                                                      std::sqrt(sq / 6 + 1e-5) *
                                                      lg[o[3]] +
                                                  lb[o[3]]);
                      }),
             "ln");
  ExpectNear(out["up"],
             Expected({1, 2, 6, 6},
                      [&](const Dims& o) {
                        return At(x, xd, {0, o[1], o[2] / 2, o[3] / 2});
                      }),
             "up");
}

// A value of `type` (and `dims`, none: a scalar) named `name` for a
// subgraph's inputs and outputs.
void AddValue(google::protobuf::RepeatedPtrField<onnx::ValueInfoProto>* to,
              const std::string& name, int32_t type, const Dims& dims) {
  onnx::ValueInfoProto* v = to->Add();
  v->set_name(name);
  auto* t = v->mutable_type()->mutable_tensor_type();
  t->set_elem_type(type);
  auto* shape = t->mutable_shape();
  for (int64_t d : dims) shape->add_dim()->set_dim_value(d);
}

// Loop of 3 iterations: v += x, and a scan output 2 * v per iteration;
// `trips` names the trip count (a constant, or a graph input: refused).
GraphBuilder LoopModel(bool constant_trips) {
  GraphBuilder b;
  b.Input("x", {1, 2});
  b.Floats("v0", {1, 2}, {1, -1});
  if (constant_trips) {
    b.Int64s("trips", {3}, /*scalar=*/true);
  } else {
    auto* t = b.graph()->add_input();
    t->set_name("trips");
    t->mutable_type()->mutable_tensor_type()->set_elem_type(
        onnx::TensorProto::INT64);
    t->mutable_type()->mutable_tensor_type()->mutable_shape();
  }
  auto* loop = b.Node("Loop", {"trips", "", "v0"}, {"v", "scan"});
  auto* a = loop->add_attribute();
  a->set_name("body");
  a->set_type(onnx::AttributeProto::GRAPH);
  onnx::GraphProto* body = a->mutable_g();
  body->set_name("body");
  AddValue(body->mutable_input(), "i", onnx::TensorProto::INT64, {});
  AddValue(body->mutable_input(), "c", onnx::TensorProto::BOOL, {});
  AddValue(body->mutable_input(), "v_in", onnx::TensorProto::FLOAT, {1, 2});
  auto node = [&](const std::string& op, std::vector<std::string> in,
                  const std::string& out) {
    onnx::NodeProto* n = body->add_node();
    n->set_op_type(op);
    for (const std::string& x : in) n->add_input(x);
    n->add_output(out);
  };
  node("Identity", {"c"}, "c_out");
  node("Add", {"v_in", "x"}, "v_out");
  onnx::TensorProto* two = body->add_initializer();
  two->set_name("two");
  two->set_data_type(onnx::TensorProto::FLOAT);
  two->add_float_data(2);
  node("Mul", {"v_out", "two"}, "doubled");
  AddValue(body->mutable_output(), "c_out", onnx::TensorProto::BOOL, {});
  AddValue(body->mutable_output(), "v_out", onnx::TensorProto::FLOAT, {1, 2});
  AddValue(body->mutable_output(), "doubled", onnx::TensorProto::FLOAT, {1, 2});
  b.Output("v");
  b.Output("scan");
  return b;
}

TEST(Lowering, LoopWithAConstantTripCountIsUnrolled) {
  GraphBuilder b = LoopModel(true);
  const std::vector<float> x = {0.5, 2};
  ModelGraph m;
  auto out = LowerAndRun(b, {{"x", x}}, &m);
  ExpectNear(out["v"], {1 + 3 * 0.5f, -1 + 3 * 2.0f}, "v");
  ExpectNear(out["scan"],
             {2 * 1.5f, 2 * 1.0f, 2 * 2.0f, 2 * 3.0f, 2 * 2.5f, 2 * 5.0f},
             "scan");
  EXPECT_EQ(m.tensors.at("scan").dims, (Dims{3, 1, 2}));
  GraphBuilder dynamic = LoopModel(false);
  auto refused =
      ImportModelGraph(dynamic.Bytes(), "loop.onnx", {{"trips", {}}});
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(refused.status().message()),
              HasSubstr("node 'Loop_1' (Loop): loops do not run"));
}

// An NHWC input: its Transpose is a copy before the conv; a Max with a
// constant >= 0 after LeakyRelu folds into the conv.
TEST(Lowering, NhwcInputAndMaxAfterLeakyRelu) {
  GraphBuilder b;
  b.Input("x", {1, 3, 3, 2});
  GraphBuilder::Ints(b.Node("Transpose", {"x"}, {"nchw"}), "perm",
                     {0, 3, 1, 2});
  b.Floats("w", {2, 2, 1, 1}, {1, 0, 0, 1});
  b.Node("Conv", {"nchw", "w"}, {"c"});
  GraphBuilder::Float(b.Node("LeakyRelu", {"c"}, {"l"}), "alpha", 0.1f);
  b.Floats("floor", {}, {0.05});
  b.Node("Max", {"l", "floor"}, {"y"});
  b.Output("y");
  const Dims xd = {1, 3, 3, 2};
  const std::vector<float> x = Values(18, 9);
  ModelGraph m;
  auto out = LowerAndRun(b, {{"x", x}}, &m);
  // max(leakyrelu(y), 0.05) = max(y, 0.05): folded as clip(0.05, inf).
  EXPECT_THAT(Ops(m), ElementsAre("copy", "conv2d"));
  EXPECT_THAT(m.steps[1].floats,
              ElementsAre(0.05f, std::numeric_limits<float>::infinity()));
  ExpectNear(out["y"],
             Expected({1, 2, 3, 3},
                      [&](const Dims& i) {
                        const float v = At(x, xd, {0, i[2], i[3], i[1]});
                        return std::max(v >= 0 ? v : 0.1f * v, 0.05f);
                      }),
             "y");
}

// Issue 36: a squeeze-and-excitation scale and the skip Add after it
// (PP-OCRv4 det's RSE blocks: x + x * s, s per channel, computed) are one
// eltwise launch, the Add fused as its residual step.
TEST(Lowering, SkipAddAfterAnEltwiseIsItsResidualStep) {
  GraphBuilder b;
  b.Input("x", {1, 3, 2, 5});
  b.Input("s", {1, 3, 1, 1});
  b.Node("Mul", {"x", "s"}, {"scaled"});
  b.Node("Add", {"scaled", "x"}, {"y"});
  b.Output("y");
  const Dims xd = {1, 3, 2, 5};
  const std::vector<float> x = Values(30, 4), s = Values(3, 5);
  ModelGraph m;
  auto out = LowerAndRun(b, {{"x", x}, {"s", s}}, &m);
  EXPECT_THAT(Ops(m), ElementsAre("eltwise"));
  ASSERT_EQ(m.steps.size(), 1u);
  EXPECT_EQ(m.steps[0].workload.attr("fn"), "mul");
  EXPECT_EQ(m.steps[0].workload.attr("residual"), "add");
  ExpectNear(out["y"],
             Expected({1, 3, 2, 5},
                      [&](const Dims& i) {
                        const float v = At(x, xd, {0, i[1], i[2], i[3]});
                        return v * s[i[1]] + v;
                      }),
             "y");
}

// Small distinct values 0.1 * ((i * 7 + offset) % 11) - 0.5, so that
// activations neither saturate nor vanish everywhere.
std::vector<float> Small(int64_t n, int offset = 0) {
  std::vector<float> v(n);
  for (int64_t i = 0; i < n; ++i) {
    v[i] = 0.1f * static_cast<float>((i * 7 + offset) % 11) - 0.5f;
  }
  return v;
}

// A squeeze-and-excitation block on x (2 x 5 x 3 x 4) as PP-OCR writes it:
// GlobalAveragePool -> Conv 1x1 to 3 with a bias -> BatchNormalization ->
// Relu -> Conv 1x1 back to 5 with a bias -> HardSigmoid -> Mul(x, gate);
// with `skip`, Add(product, x) after it (PP-OCRv4 det's x + x * se(x)).
// Returns the Mul's (or Add's) output name.
std::string SeBlock(GraphBuilder& b, bool skip) {
  b.Input("x", {2, 5, 3, 4});
  b.Node("GlobalAveragePool", {"x"}, {"pooled"});
  b.Floats("w1", {3, 5, 1, 1}, Small(15, 1));
  b.Floats("b1", {3}, Small(3, 2));
  b.Node("Conv", {"pooled", "w1", "b1"}, {"c1"});
  b.Floats("gamma", {3}, {2.0f, 0.5f, 1.0f});
  b.Floats("beta", {3}, {0.1f, -0.2f, 0.3f});
  b.Floats("mean", {3}, {0.05f, 0.0f, -0.1f});
  b.Floats("var", {3}, {1.0f, 4.0f, 0.25f});
  b.Node("BatchNormalization", {"c1", "gamma", "beta", "mean", "var"}, {"n1"});
  b.Node("Relu", {"n1"}, {"h"});
  b.Floats("w2", {5, 3, 1, 1}, Small(15, 4));
  b.Floats("b2", {5}, Small(5, 6));
  b.Node("Conv", {"h", "w2", "b2"}, {"c2"});
  auto* hs = b.Node("HardSigmoid", {"c2"}, {"gate"});
  GraphBuilder::Float(hs, "alpha", 0.1666667f);
  GraphBuilder::Float(hs, "beta", 0.5f);
  b.Node("Mul", {"x", "gate"}, {"scaled"});
  if (!skip) return "scaled";
  b.Node("Add", {"scaled", "x"}, {"y"});
  return "y";
}

// The block's output computed from ONNX's definitions (BatchNormalization
// with epsilon 1e-5).
std::vector<float> SeExpected(const std::vector<float>& x, bool skip) {
  const std::vector<float> w1 = Small(15, 1), b1 = Small(3, 2),
                           w2 = Small(15, 4), b2 = Small(5, 6);
  const float gamma[] = {2.0f, 0.5f, 1.0f}, beta[] = {0.1f, -0.2f, 0.3f},
              mean[] = {0.05f, 0.0f, -0.1f}, var[] = {1.0f, 4.0f, 0.25f};
  std::vector<float> out(x.size());
  for (int n = 0; n < 2; ++n) {
    float pooled[5], h[3];
    for (int c = 0; c < 5; ++c) {
      pooled[c] = 0;
      for (int k = 0; k < 12; ++k) pooled[c] += x[(n * 5 + c) * 12 + k] / 12;
    }
    for (int r = 0; r < 3; ++r) {
      float conv = b1[r];
      for (int c = 0; c < 5; ++c) conv += w1[r * 5 + c] * pooled[c];
      const float bn =
          (conv - mean[r]) / std::sqrt(var[r] + 1e-5f) * gamma[r] + beta[r];
      h[r] = std::max(bn, 0.0f);
    }
    for (int c = 0; c < 5; ++c) {
      float conv = b2[c];
      for (int r = 0; r < 3; ++r) conv += w2[c * 3 + r] * h[r];
      const float gate = std::clamp(0.1666667f * conv + 0.5f, 0.0f, 1.0f);
      for (int k = 0; k < 12; ++k) {
        const int i = (n * 5 + c) * 12 + k;
        out[i] = x[i] * gate + (skip ? x[i] : 0.0f);
      }
    }
  }
  return out;
}

// SeBlock(b, skip) lowered and run for both `skip` values: one se_block
// step or, when the pooled map is also a graph output (`pooled_output`),
// the pool as a step of its own and the chain after it as one
// channel_gate step that reads it. Either computes SeExpected, and the
// import for tuning has a task for each step.
void ExpectSeBlockLowering(bool pooled_output) {
  const std::string op = pooled_output ? "channel_gate" : "se_block";
  for (const bool skip : {false, true}) {
    GraphBuilder b;
    const std::string y = SeBlock(b, skip);
    b.Output(y);
    if (pooled_output) b.Output("pooled");
    const std::vector<float> x = Small(120, 3);
    ModelGraph m;
    auto out = LowerAndRun(b, {{"x", x}}, &m);
    if (pooled_output) {
      EXPECT_THAT(Ops(m), ElementsAre("global_pool", "channel_gate"));
    } else {
      EXPECT_THAT(Ops(m), ElementsAre("se_block"));
    }
    ASSERT_EQ(m.steps.size(), pooled_output ? 2u : 1u);
    const ModelStep& chain = m.steps.back();
    EXPECT_EQ(chain.workload.Canonical(),
              op + " N=2 C=5 H=3 W=4 R=3 fp32 act1=relu act2=hardsigmoid" +
                  (skip ? " residual=add" : ""));
    // (The pool,) Conv, BatchNormalization, Relu, Conv, HardSigmoid, Mul
    // (, Add).
    EXPECT_EQ(chain.nodes.size(), (pooled_output ? 6u : 7u) + (skip ? 1 : 0));
    // x, the pooled map when it is an input of the step, y, ..., the skip.
    std::vector<std::string> inputs = {"x", y};
    if (pooled_output) inputs.insert(inputs.begin() + 1, "pooled");
    ASSERT_EQ(chain.buffers.size(), inputs.size() + 5);
    for (size_t i = 0; i < inputs.size(); ++i) {
      EXPECT_EQ(chain.buffers[i].tensor, inputs[i]) << i;
    }
    EXPECT_EQ(chain.buffers.back().tensor, skip ? "x" : "");
    EXPECT_THAT(chain.floats, ElementsAre(0.0f, 0.0f, 0.1666667f, 0.5f));
    ExpectNear(out[y], SeExpected(x, skip),
               skip ? "skip" : (pooled_output ? "gate" : "block"));
    // The tasks to tune: the se_block, or the pool and the gate.
    auto tasks = ImportOnnxBytes(b.Bytes(), "se.onnx", {});
    ASSERT_TRUE(tasks.ok()) << tasks.status();
    ASSERT_EQ(tasks->tasks.size(), pooled_output ? 2u : 1u);
    if (pooled_output) {
      EXPECT_EQ(tasks->tasks[0].workload.op() == "channel_gate" ||
                    tasks->tasks[1].workload.op() == "channel_gate",
                true);
    } else {
      EXPECT_EQ(tasks->tasks[0].workload.op(), "se_block");
    }
  }
}

TEST(Lowering, SqueezeExcitationIsOneSeBlock) {
  ExpectSeBlockLowering(/*pooled_output=*/false);
}

TEST(Lowering, SqueezeExcitationOverALargeImageKeepsItsPool) {
  // 2 x 182 x 182 = 66248 elements an image, above kSeBlockMaxImage: every
  // se_block work-group would pool them again.
  for (const int64_t side : {181, 182}) {
    GraphBuilder b;
    b.Input("x", {1, 2, side, side});
    b.Node("GlobalAveragePool", {"x"}, {"pooled"});
    b.Floats("w1", {1, 2, 1, 1}, Small(2, 1));
    b.Node("Conv", {"pooled", "w1"}, {"c1"});
    b.Node("Relu", {"c1"}, {"h"});
    b.Floats("w2", {2, 1, 1, 1}, Small(2, 4));
    b.Node("Conv", {"h", "w2"}, {"c2"});
    b.Node("Sigmoid", {"c2"}, {"gate"});
    b.Node("Mul", {"x", "gate"}, {"y"});
    b.Output("y");
    absl::StatusOr<ModelGraph> m = Lower(b);
    ASSERT_TRUE(m.ok()) << m.status();
    if (2 * side * side <= kSeBlockMaxImage) {
      EXPECT_THAT(Ops(*m), ElementsAre("se_block")) << side;
    } else {
      EXPECT_THAT(Ops(*m), ElementsAre("global_pool", "channel_gate")) << side;
    }
  }
}

TEST(Lowering, SqueezeExcitationIsAPoolAndOneChannelGate) {
  // The pooled map is also a graph output, so the pool stays a step of
  // its own and the chain after it is one channel_gate.
  ExpectSeBlockLowering(/*pooled_output=*/true);
}

TEST(Lowering, SqueezeExcitationChainsThatDifferStayFourSteps) {
  // A second reader of the gate (a graph output), of the hidden units (a
  // graph output), or a grouped first Conv: today's four steps, same
  // values.
  for (int variant = 0; variant < 3; ++variant) {
    GraphBuilder b;
    std::string y = "scaled";
    if (variant < 2) {
      y = SeBlock(b, false);
      b.Output(y);
      b.Output(variant == 0 ? "gate" : "h");
    } else {
      // Conv 1 in 5 groups (10 hidden units), Conv 2 back to 5, Sigmoid.
      b.Input("x", {1, 5, 3, 4});
      b.Node("GlobalAveragePool", {"x"}, {"pooled"});
      b.Floats("w1", {10, 1, 1, 1}, Small(10, 1));
      GraphBuilder::Int(b.Node("Conv", {"pooled", "w1"}, {"h"}), "group", 5);
      b.Floats("w2", {5, 10, 1, 1}, Small(50, 4));
      b.Node("Conv", {"h", "w2"}, {"c2"});
      b.Node("Sigmoid", {"c2"}, {"gate"});
      b.Node("Mul", {"x", "gate"}, {"scaled"});
      b.Output("scaled");
    }
    absl::StatusOr<ModelGraph> m = Lower(b);
    ASSERT_TRUE(m.ok()) << m.status();
    EXPECT_THAT(Ops(*m),
                ElementsAre("global_pool", "conv2d", "conv2d", "eltwise"))
        << "variant " << variant;
    if (variant < 2) {
      const std::vector<float> x = Small(120, 3);
      auto out = testing::StepSimulator(*m).Run({{"x", x}});
      ExpectNear(out[y], SeExpected(x, false), "variant");
    }
  }
}

}  // namespace
}  // namespace tunefleet::onnx_import
