// ONNX import on small graphs built here with ONNX's protobuf classes.
#include "onnx_import/onnx_import.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "onnx/onnx_pb.h"
#include "tests/support/onnx_test_models.h"

namespace tunefleet::onnx_import {
namespace {

using testing::SmallNet;

using ::testing::HasSubstr;

const onnx_import::ModelTask* Find(const onnx_import::ModelTasks& m,
                                   const std::string& canonical) {
  for (const onnx_import::ModelTask& t : m.tasks) {
    if (t.workload.Canonical() == canonical) return &t;
  }
  return nullptr;
}

TEST(OnnxImport, FindsTasksAndFoldsEpilogues) {
  auto m = onnx_import::ImportOnnxBytes(SmallNet(), "small.onnx",
                                        {{"image", {1, 3, 17, 23}}});
  ASSERT_TRUE(m.ok()) << m.status();
  std::vector<std::string> names;
  for (const onnx_import::ModelTask& t : m->tasks)
    names.push_back(t.workload.Canonical());
  const std::string conv =
      "conv2d N=1 C=3 H=17 W=23 K=8 R=3 S=3 SH=2 SW=2 PH=1 PW=1 DH=1 DW=1 "
      "G=1 fp32 affine=scale_shift act=relu";
  const std::string depthwise =
      "depthwise_conv2d N=1 C=8 H=9 W=12 R=3 S=3 SH=1 SW=1 PH=1 PW=1 DH=1 "
      "DW=1 fp32 affine=scale_shift act=hardswish";
  const std::string pointwise =
      "conv2d N=1 C=8 H=9 W=12 K=16 R=1 S=1 SH=1 SW=1 PH=0 PW=0 DH=1 DW=1 "
      "G=1 fp32 affine=shift act=hardsigmoid";
  EXPECT_THAT(
      names, ::testing::UnorderedElementsAre(
                 conv, depthwise, pointwise,
                 "pool2d N=1 C=16 H=9 W=12 R=3 S=3 SH=2 SW=2 PH=1 "
                 "PW=1 fp32",
                 "global_pool N=1 C=16 H=5 W=6 fp32 mode=avg",
                 "dense M=1 N=5 K=16 fp32 affine=shift", "softmax N=1 D=5 fp32",
                 // The Add of the two HardSigmoids' outputs.
                 "eltwise N=1 C=16 H=9 W=12 fp32 fn=add"));
  ASSERT_NE(Find(*m, pointwise), nullptr);
  EXPECT_EQ(Find(*m, pointwise)->count, 2);
  EXPECT_EQ(Find(*m, pointwise)->TemplateName(), "conv2d_1x1_gemm");
  EXPECT_DOUBLE_EQ(Find(*m, pointwise)->flops, 2.0 * 16 * 9 * 12 * 8);
  // Heaviest first (FLOPs x count).
  for (size_t i = 1; i < m->tasks.size(); ++i) {
    EXPECT_GE(m->tasks[i - 1].flops * m->tasks[i - 1].count,
              m->tasks[i].flops * m->tasks[i].count);
  }
  // Nothing is left: the Adds, Clips, Muls and Divs are folded into
  // epilogues or an eltwise task, the Reshape is a view (folded).
  EXPECT_TRUE(m->unsupported.empty()) << m->unsupported[0].op_type;
}

TEST(OnnxImport, ClearErrors) {
  auto malformed =
      onnx_import::ImportOnnxBytes("not a model at all", "bad.onnx", {});
  ASSERT_FALSE(malformed.ok());
  EXPECT_EQ(malformed.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(malformed.status().message()),
              HasSubstr("bad.onnx is not an ONNX model"));

  auto unknown = onnx_import::ImportOnnxBytes(SmallNet(), "small.onnx",
                                              {{"images", {1, 3, 8, 8}}});
  ASSERT_FALSE(unknown.ok());
  EXPECT_THAT(std::string(unknown.status().message()),
              HasSubstr("has no input 'images'; its inputs: image (?x3x?x?)"));

  auto missing = onnx_import::ImportOnnxBytes(SmallNet(), "small.onnx", {});
  ASSERT_FALSE(missing.ok());
  EXPECT_THAT(std::string(missing.status().message()),
              HasSubstr("has dynamic dims: give --input-shape image="));

  auto rank = onnx_import::ImportOnnxBytes(SmallNet(), "small.onnx",
                                           {{"image", {1, 3}}});
  ASSERT_FALSE(rank.ok());
  EXPECT_THAT(std::string(rank.status().message()), HasSubstr("has 2 dims"));

  auto fixed = onnx_import::ImportOnnxBytes(SmallNet(), "small.onnx",
                                            {{"image", {1, 4, 8, 8}}});
  ASSERT_FALSE(fixed.ok());
  EXPECT_THAT(std::string(fixed.status().message()),
              HasSubstr("dim 1 is 4 but the model fixes it to 3"));

  EXPECT_EQ(onnx_import::ImportOnnx("/nonexistent.onnx", {}).status().code(),
            absl::StatusCode::kNotFound);
}

TEST(OnnxImport, ParsesInputShapes) {
  onnx_import::InputShapes shapes;
  ASSERT_TRUE(onnx_import::ParseInputShape("x=1,3,48,192", &shapes).ok());
  ASSERT_TRUE(onnx_import::ParseInputShape("y=2x5", &shapes).ok());
  EXPECT_EQ(shapes["x"], (std::vector<int64_t>{1, 3, 48, 192}));
  EXPECT_EQ(shapes["y"], (std::vector<int64_t>{2, 5}));
  for (const char* bad : {"x", "x=", "=1,2", "x=1,0", "x=1,a"}) {
    EXPECT_FALSE(onnx_import::ParseInputShape(bad, &shapes).ok()) << bad;
  }
}

// ONNX models are read as hostile too (onnx_import/onnx_import.h).
TEST(Validation, OnnxImportSurvivesHostileModels) {
  using tunefleet::testing::GraphBuilder;
  {  // A cycle after a conv: folding its epilogue must end.
    auto tasks = onnx_import::ImportOnnxBytes(
        tunefleet::testing::EpilogueCycle(), "cycle.onnx", {});
    ASSERT_TRUE(tasks.ok()) << tasks.status();
    // The conv with the first Add folded; "a" is a graph output, so the
    // Add after it is a task of its own (eltwise), not folded through it.
    EXPECT_EQ(tasks->tasks.size(), 2u);
  }
  {  // Zero strides: libonnx's shape inference would divide by them.
    GraphBuilder b;
    b.Input("x", {1, 4, 8, 8});
    b.Weight("w", {4, 4, 3, 3});
    auto* c = b.Node("Conv", {"x", "w"}, {"c"});
    GraphBuilder::Ints(c, "strides", {0, 1});
    b.Output("c");
    auto tasks = onnx_import::ImportOnnxBytes(b.Bytes(), "strides.onnx", {});
    EXPECT_THAT(std::string(tasks.status().message()),
                HasSubstr("attribute strides must be >= 1"));
  }
  {  // A 2D input to a conv: libonnx's inference dereferences a null
     // pointer. It runs in a child process, so this is a refusal.
    GraphBuilder b;
    b.Input("x", {10, 10});
    b.Weight("w", {8, 2, 3, 3});
    auto* c = b.Node("Conv", {"x", "w"}, {"c"});
    GraphBuilder::Int(c, "group", 4);
    b.Output("c");
    auto tasks = onnx_import::ImportOnnxBytes(b.Bytes(), "rank.onnx", {});
    EXPECT_EQ(tasks.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(std::string(tasks.status().message()),
                HasSubstr("shape inference of rank.onnx"));
  }
  {  // A dense layer whose weight has a 0 dim: no division by zero.
    GraphBuilder b;
    b.Input("x", {2, 8});
    b.Weight("w", {0, 4});
    b.Node("MatMul", {"x", "w"}, {"y"});
    b.Output("y");
    auto tasks = onnx_import::ImportOnnxBytes(b.Bytes(), "zero.onnx", {});
    ASSERT_TRUE(tasks.ok()) << tasks.status();
    EXPECT_TRUE(tasks->tasks.empty());  // unsupported, not a crash
  }
}

}  // namespace
}  // namespace tunefleet::onnx_import
