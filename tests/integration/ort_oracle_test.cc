// The ONNX Runtime oracle (tests/support/ort_oracle.h) and the synthetic
// models (tests/support/synthetic_models.h): every synthetic model is a
// valid ONNX model that ORT runs to finite outputs of the shapes its ops
// give; the comparison says where and by how much outputs differ. The
// tests that run ORT skip, with the reason, when ORT is not installed
// (bash deploy/fetch-ort.sh).
#include "tests/support/ort_oracle.h"

#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <set>
#include <string>

#include "base/files.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "onnx/checker.h"
#include "onnx/onnx_pb.h"
#include "tests/support/ort_expect.h"
#include "tests/support/synthetic_models.h"

namespace tunefleet::testing {
namespace {

using ::testing::HasSubstr;

std::string TestDir(const std::string& name) {
  const std::string dir = ::testing::TempDir() + "/ort_oracle_test_" +
                          std::to_string(getpid()) + "_" + name;
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

std::string Message(const absl::Status& s) { return std::string(s.message()); }

TEST(SyntheticModels, AreValidOnnxWithUniqueNames) {
  std::set<std::string> names;
  const std::vector<SyntheticModel> models = SyntheticModels();
  EXPECT_GE(models.size(), 30u);
  for (const SyntheticModel& m : models) {
    EXPECT_TRUE(names.insert(m.name).second) << m.name << " twice";
    onnx::ModelProto proto;
    ASSERT_TRUE(proto.ParseFromString(m.bytes)) << m.name;
    try {
      onnx::checker::check_model(proto);
    } catch (const std::exception& e) {
      ADD_FAILURE() << m.name << ": ONNX's checker: " << e.what();
    }
    EXPECT_EQ(proto.graph().input_size(), static_cast<int>(m.inputs.size()));
    EXPECT_EQ(proto.graph().output_size(), static_cast<int>(m.outputs.size()));
    EXPECT_FALSE(m.forms.empty()) << m.name;
  }
  EXPECT_EQ(models.back().name, "all_forms");
}

class SyntheticModelInOrt : public ::testing::TestWithParam<SyntheticModel> {};

// ORT runs the model on inputs uniform in [-1, 1): outputs named and
// shaped as the model says, finite, and not all zero.
TEST_P(SyntheticModelInOrt, GivesFiniteOutputsOfTheExpectedShapes) {
  TUNEFLEET_ORT_ORACLE_OR_SKIP(oracle);
  const SyntheticModel& m = GetParam();
  const std::string dir = TestDir(m.name);
  const std::string path = dir + "/" + m.name + ".onnx";
  ASSERT_TRUE(base::WriteFileAtomically(path, m.bytes).ok());
  std::map<std::string, base::NpyArray> inputs;
  uint64_t seed = 1;
  for (const auto& [name, shape] : m.inputs) {
    inputs[name] = RandomNpy(shape, seed++, -1.0f, 1.0f);
  }
  absl::StatusOr<OrtResult> ort = oracle.Run(path, inputs);
  ASSERT_TRUE(ort.ok()) << ort.status();
  std::vector<std::string> expected_order;
  for (const auto& [name, shape] : m.outputs) {
    expected_order.push_back(name);
    ASSERT_TRUE(ort->outputs.count(name)) << name;
    const base::NpyArray& out = ort->outputs.at(name);
    EXPECT_EQ(out.shape, shape)
        << name << ": ORT gives " << base::NpyShapeString(out.shape)
        << ", expected " << base::NpyShapeString(shape);
    int non_finite = 0;
    float max_abs = 0;
    for (float v : out.data) {
      if (!std::isfinite(v)) ++non_finite;
      max_abs = std::max(max_abs, std::abs(v));
    }
    EXPECT_EQ(non_finite, 0) << name;
    EXPECT_GT(max_abs, 0) << name << " is all zeros";
  }
  EXPECT_EQ(ort->output_order, expected_order);
  std::filesystem::remove_all(dir);
}

INSTANTIATE_TEST_SUITE_P(
    Synthetic, SyntheticModelInOrt, ::testing::ValuesIn(SyntheticModels()),
    [](const ::testing::TestParamInfo<SyntheticModel>& info) {
      return info.param.name;
    });

TEST(OrtOracle, TimesRunsAndReadsItsOwnInputsBack) {
  TUNEFLEET_ORT_ORACLE_OR_SKIP(oracle);
  const std::string dir = TestDir("timing");
  // Transpose moves values without changing them.
  SyntheticModel m = SyntheticModels().front();  // transpose
  ASSERT_EQ(m.name, "transpose");
  ASSERT_TRUE(base::WriteFileAtomically(dir + "/t.onnx", m.bytes).ok());
  const base::NpyArray x = RandomNpy({1, 3, 4, 5}, 42);
  OrtRunOptions options;
  options.runs = 3;
  options.warmup = 1;
  options.threads = 1;
  absl::StatusOr<OrtResult> ort =
      oracle.Run(dir + "/t.onnx", {{"x", x}}, options);
  ASSERT_TRUE(ort.ok()) << ort.status();
  ASSERT_TRUE(ort->median_ms.has_value());
  EXPECT_GT(*ort->median_ms, 0);
  EXPECT_LE(*ort->p10_ms, *ort->median_ms);
  EXPECT_LE(*ort->median_ms, *ort->p90_ms);
  EXPECT_THAT(ort->runtime, HasSubstr("onnxruntime"));
  // nhwc[0, h, w, c] == x[0, c, h, w]: values went through unchanged.
  const base::NpyArray& nhwc = ort->outputs.at("nhwc");
  for (int c = 0; c < 3; ++c) {
    for (int h = 0; h < 4; ++h) {
      for (int w = 0; w < 5; ++w) {
        ASSERT_EQ(nhwc.data[(h * 5 + w) * 3 + c], x.data[(c * 4 + h) * 5 + w]);
      }
    }
  }
  std::filesystem::remove_all(dir);
}

TEST(OrtOracle, ModelErrorsComeBackWithOrtsReason) {
  TUNEFLEET_ORT_ORACLE_OR_SKIP(oracle);
  const std::string dir = TestDir("errors");
  ASSERT_TRUE(base::WriteFileAtomically(dir + "/bad.onnx", "not a model").ok());
  absl::StatusOr<OrtResult> bad = oracle.Run(dir + "/bad.onnx", {});
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInternal);
  EXPECT_THAT(Message(bad.status()), HasSubstr("cannot load"));

  ASSERT_TRUE(base::WriteFileAtomically(dir + "/t.onnx",
                                        SyntheticModels().front().bytes)
                  .ok());
  absl::StatusOr<OrtResult> missing = oracle.Run(dir + "/t.onnx", {});
  ASSERT_FALSE(missing.ok());
  EXPECT_THAT(Message(missing.status()),
              HasSubstr("no value for the model's input x"));
  absl::StatusOr<OrtResult> wrong_shape =
      oracle.Run(dir + "/t.onnx", {{"x", RandomNpy({1, 3, 4, 6}, 1)}});
  ASSERT_FALSE(wrong_shape.ok());
  EXPECT_THAT(Message(wrong_shape.status()),
              HasSubstr("invalid dimensions for input: x"));
  std::filesystem::remove_all(dir);
}

// The PP-OCR models (deploy/fetch-model.sh) on a text-like image: cls
// and rec give probability rows, det finds the text.
struct PpOcr {
  std::string name, file, output;
  int64_t height, width;
  std::vector<int64_t> output_shape;
};

class PpOcrInOrt : public ::testing::TestWithParam<PpOcr> {};

TEST_P(PpOcrInOrt, GivesSaneOutputs) {
  TUNEFLEET_ORT_ORACLE_OR_SKIP(oracle);
  const PpOcr& p = GetParam();
  const std::string model = std::string(TUNEFLEET_SOURCE_DIR) +
                            "/.cache/models/package/assets/" + p.file;
  if (!std::filesystem::exists(model)) {
    GTEST_SKIP() << model << " is absent (bash deploy/fetch-model.sh)";
  }
  absl::StatusOr<OrtResult> ort =
      oracle.Run(model, {{"x", OcrTextImage(p.height, p.width, 7)}});
  ASSERT_TRUE(ort.ok()) << ort.status();
  ASSERT_TRUE(ort->outputs.count(p.output)) << ort->json;
  const base::NpyArray& out = ort->outputs.at(p.output);
  ASSERT_EQ(out.shape, p.output_shape);
  float max = 0;
  for (float v : out.data) {
    ASSERT_TRUE(std::isfinite(v));
    max = std::max(max, v);
  }
  if (p.name == "det") {
    EXPECT_GT(max, 0.5f) << "det found no text";
  } else {  // softmax rows over the last axis
    const int64_t classes = out.shape.back();
    for (size_t row = 0; row < out.data.size() / classes; ++row) {
      double sum = 0;
      for (int64_t k = 0; k < classes; ++k) sum += out.data[row * classes + k];
      ASSERT_NEAR(sum, 1.0, 1e-4) << "row " << row;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    PpOcr, PpOcrInOrt,
    ::testing::Values(PpOcr{"cls",
                            "ch_ppocr_mobile_v2.0_cls_infer.onnx",
                            "softmax_0.tmp_0",
                            48,
                            192,
                            {1, 2}},
                      PpOcr{"det",
                            "ch_PP-OCRv4_det_infer.onnx",
                            "sigmoid_0.tmp_0",
                            640,
                            640,
                            {1, 1, 640, 640}},
                      PpOcr{"rec",
                            "ch_PP-OCRv4_rec_infer.onnx",
                            "softmax_11.tmp_0",
                            48,
                            320,
                            {1, 40, 6625}}),
    [](const ::testing::TestParamInfo<PpOcr>& info) {
      return info.param.name;
    });

TEST(CompareOutputs, PassesWithinTheToleranceOfTheReferencesMaximum) {
  base::NpyArray ref{{2, 2}, {1.0f, -4.0f, 0.5f, 0.0f}};
  base::NpyArray ours = ref;
  ours.data[2] += 3.9e-4f;  // 0.975e-4 x max|ref| = 4
  EXPECT_TRUE(CompareOutput("y", ours, ref).ok());
  EXPECT_TRUE(OutputsMatch({{"y", ours}}, {{"y", ref}}));
  ours.data[3] = 4.1e-4f;  // 1.025e-4 x 4
  const absl::Status s = CompareOutput("y", ours, ref);
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(Message(s),
              HasSubstr("output 'y' (2, 2): max|ours - reference| = 0.00041 "
                        "at [1, 1] (ours 0.00041, reference 0) = 0.000103 x "
                        "max|reference| (4); allowed 0.0001 x max|reference|"));
}

TEST(CompareOutputs, NamesNaNsShapesAndMissingOutputs) {
  base::NpyArray ref{{3}, {1, 2, 3}};
  base::NpyArray nan = ref;
  nan.data[1] = std::nanf("");
  EXPECT_THAT(Message(CompareOutput("y", nan, ref)),
              HasSubstr("max|ours - reference| = inf at [1] (ours nan"));
  base::NpyArray other{{1, 3}, {1, 2, 3}};
  EXPECT_THAT(Message(CompareOutput("y", other, ref)),
              HasSubstr("output 'y': shape (1, 3), the reference's (3,)"));
  base::NpyArray bad_ref = nan;
  EXPECT_THAT(Message(CompareOutput("y", ref, bad_ref)),
              HasSubstr("the reference holds nan at [1]"));
  const absl::Status s = CompareOutputs({{"a", ref}}, {{"a", ref}, {"b", ref}});
  EXPECT_THAT(Message(s), HasSubstr("output 'b' is missing"));
  // An all-zero reference wants exact zeros.
  base::NpyArray zeros{{2}, {0, 0}};
  EXPECT_TRUE(CompareOutput("z", zeros, zeros).ok());
  EXPECT_FALSE(
      CompareOutput("z", base::NpyArray{{2}, {0, 1e-30f}}, zeros).ok());
}

TEST(RandomNpy, IsSeededAndInRange) {
  const base::NpyArray a = RandomNpy({2, 3, 4}, 5, -1, 1);
  const base::NpyArray b = RandomNpy({2, 3, 4}, 5, -1, 1);
  const base::NpyArray c = RandomNpy({2, 3, 4}, 6, -1, 1);
  EXPECT_EQ(a.data, b.data);
  EXPECT_NE(a.data, c.data);
  for (float v : a.data) {
    EXPECT_GE(v, -1);
    EXPECT_LT(v, 1);
  }
  // splitmix64 of seed 0: 0xe220a8397b1dcdaf, 0x6e789e6aa1b965f4, ...;
  // their top 24 bits / 2^24 (ort_run.mjs --random-input --seed 0 gives
  // the same values).
  const base::NpyArray s0 = RandomNpy({2}, 0);
  EXPECT_EQ(s0.data[0], 0xe220a8 / 16777216.0f);
  EXPECT_EQ(s0.data[1], 0x6e789e / 16777216.0f);
}

}  // namespace
}  // namespace tunefleet::testing
