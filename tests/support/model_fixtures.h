// Fixtures of the model runtime's tests (model_runtime_test,
// model_recording_test): records of one device key given by the test,
// TinyModel, a model made by hand as a ModelGraph (onnx_import/
// model_graph.h) with a plain C++ computation of its output, and
// ModelDeviceTest, the OpenCL device they run on. Header-only.
#ifndef TUNEFLEET_TESTS_SUPPORT_MODEL_FIXTURES_H_
#define TUNEFLEET_TESTS_SUPPORT_MODEL_FIXTURES_H_

#include <algorithm>
#include <cmath>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "data_source/data_source.h"
#include "gtest/gtest.h"
#include "kernels_templates/registry.h"
#include "kernels_templates/workload.h"
#include "onnx_import/model_graph.h"
#include "opencl/opencl.h"
#include "plan_builder/plan_builder.h"
#include "tests/support/cl_device_test.h"
#include "trial/trial_request.h"

namespace tunefleet::testing_support {

using onnx_import::ModelGraph;
using onnx_import::ModelStep;
using onnx_import::StepBuffer;

// Records of one device key given by the test: the best record per
// workload, no reference times.
class FakeRecords : public data_source::RecordReader {
 public:
  FakeRecords(std::string key, tunefleet::v1::DeviceInfo info)
      : key_(std::move(key)), info_(std::move(info)) {}

  void Add(const templates::KernelTemplate& tmpl, const templates::Workload& w,
           const std::string& config, double time_ns) {
    tunefleet::v1::TuningRecord r;
    r.set_device_key(key_);
    *r.mutable_workload() = trial::WorkloadToProto(w);
    r.set_workload_key(w.Canonical());
    r.set_template_name(std::string(tmpl.name()));
    r.set_template_version(tmpl.version());
    auto parsed = tmpl.ParseConfig(config);
    EXPECT_TRUE(parsed.ok()) << parsed.status();
    *r.mutable_config() = trial::ConfigToProto(tmpl, *parsed);
    r.set_time_ns(time_ns);
    records_.push_back(r);
  }

  absl::StatusOr<std::vector<std::string>> DeviceKeys() override {
    return std::vector<std::string>{key_};
  }
  absl::StatusOr<tunefleet::v1::DeviceInfo> GetDevice(
      const std::string& key) override {
    if (key != key_ || records_.empty()) {
      return absl::NotFoundError(
          absl::StrCat("no device with key '", key, "'"));
    }
    return info_;
  }
  absl::StatusOr<std::vector<tunefleet::v1::TuningRecord>> BestRecords(
      const std::string& key) override {
    return records_;
  }
  absl::StatusOr<std::optional<double>> ReferenceTime(
      const std::string&, const std::string&, const std::string&) override {
    return std::optional<double>();
  }
  absl::StatusOr<std::string> TemplateSource(const std::string& name,
                                             int version) override {
    for (const templates::KernelTemplate* t : templates::AllTemplates()) {
      if (t->name() == name) return std::string(t->source());
    }
    return absl::NotFoundError(name);
  }

 private:
  std::string key_;
  tunefleet::v1::DeviceInfo info_;
  std::vector<tunefleet::v1::TuningRecord> records_;
};

inline templates::Workload Parse(const std::string& op,
                                 const std::string& shape) {
  auto w = templates::Workload::Parse(op, shape, "fp32");
  EXPECT_TRUE(w.ok()) << w.status();
  return *w;
}

inline std::vector<float> Random(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (float& x : v) x = u(rng);
  return v;
}

// The hand-made model: x [1,C,H,W] -> conv 3x3 pad 1 to K channels with a
// bias and relu -> + a per-channel constant -> global average pool ->
// "out" [1,K], a view of the pool's [1,K,1,1].
struct TinyModel {
  int C = 3, H = 8, W = 8, K = 4;
  std::vector<float> weight, bias, add;
  ModelGraph graph;

  TinyModel(int h, int w) : H(h), W(w) {
    weight = Random(K * C * 9, 1);
    bias = Random(K, 2);
    add = Random(K, 3);
    const std::string dims = absl::StrCat("C=", C, ",H=", H, ",W=", W);
    ModelStep conv{
        Parse("conv2d",
              absl::StrCat(dims, ",K=", K,
                           ",R=3,S=3,PH=1,PW=1,affine=shift,act=relu")),
        {StepBuffer{"x", {}}, StepBuffer{"", weight}, StepBuffer{"y", {}},
         StepBuffer{"", std::vector<float>(K, 1)}, StepBuffer{"", bias}},
        {0, 0},
        {0},
        "conv_0"};
    ModelStep plus{
        Parse("eltwise",
              absl::StrCat("C=", K, ",H=", H, ",W=", W, ",fn=add,b=channel")),
        {StepBuffer{"y", {}}, StepBuffer{"", add}, StepBuffer{"z", {}},
         StepBuffer{"", std::vector<float>(K, 1)},
         StepBuffer{"", std::vector<float>(K, 0)}},
        {0, 0},
        {1},
        "add_1"};
    ModelStep pool{Parse("global_pool", absl::StrCat("C=", K, ",H=", H,
                                                     ",W=", W, ",mode=avg")),
                   {StepBuffer{"z", {}}, StepBuffer{"p", {}}},
                   {},
                   {2},
                   "pool_2"};
    graph.steps = {conv, plus, pool};
    graph.tensors["x"] = {"x", {1, C, H, W}, ""};
    graph.tensors["y"] = {"y", {1, K, H, W}, ""};
    graph.tensors["z"] = {"z", {1, K, H, W}, ""};
    graph.tensors["p"] = {"p", {1, K, 1, 1}, ""};
    graph.tensors["out"] = {"out", {1, K}, "p"};
    graph.inputs = {"x"};
    graph.outputs = {"out"};
  }

  // The model in plain C++.
  std::vector<float> Expected(const std::vector<float>& x) const {
    std::vector<float> out(K, 0.0f);
    for (int k = 0; k < K; ++k) {
      double sum = 0;
      for (int i = 0; i < H; ++i) {
        for (int j = 0; j < W; ++j) {
          double acc = bias[k];
          for (int c = 0; c < C; ++c) {
            for (int r = 0; r < 3; ++r) {
              for (int s = 0; s < 3; ++s) {
                const int y = i + r - 1, z = j + s - 1;
                if (y < 0 || y >= H || z < 0 || z >= W) continue;
                acc += double(weight[((k * C + c) * 3 + r) * 3 + s]) *
                       x[(c * H + y) * W + z];
              }
            }
          }
          sum += std::max(acc, 0.0) + add[k];
        }
      }
      out[k] = static_cast<float>(sum / (H * W));
    }
    return out;
  }
};

// Adds to `records` a tuned config of conv2d_direct for TinyModel `m`'s
// conv, at 2500 ns, that reads x through an image (IMI=1) when `image`,
// else as a buffer (IMI=0).
inline void AddTunedConvRecord(const TinyModel& m, bool image,
                               FakeRecords& records) {
  auto tmpl = templates::FindTemplate("conv2d", "conv2d_direct");
  ASSERT_TRUE(tmpl.ok()) << tmpl.status();
  records.Add(**tmpl, m.graph.steps[0].workload,
              absl::StrCat("KWI=1,KWG=4,PWI=1,QWI=2,WGP=2,WGQ=2,VW=1,CB=1,"
                           "LI=0,LW=0,UNROLL=1,HALF=0,IMI=",
                           image ? 1 : 0),
              2500);
}

// A test on the OpenCL device (tests/support/cl_device_test.h) with the
// device's info.
class ModelDeviceTest : public testing::ClDeviceTest {
 protected:
  void SetUp() override {
    ClDeviceTest::SetUp();
    if (HasFatalFailure()) return;
    info_ = opencl::QueryDeviceInfo(device_->platform, device_->device);
  }

  // The plan options of TinyModel(8, w) ("tiny.onnx", input x 1x3x8xw) on
  // this device under the key "test-key".
  plan_builder::PlanOptions Options(int w = 8) const {
    plan_builder::PlanOptions o;
    o.model_name = "tiny.onnx";
    o.model_sha256 = plan_builder::Sha256Hex("tiny model bytes");
    o.device_key = "test-key";
    o.device_name = info_.device_name();
    o.device_vendor = info_.vendor();
    o.input_shapes = {{"x", {1, 3, 8, w}}};
    return o;
  }

  tunefleet::v1::DeviceInfo info_;
};

}  // namespace tunefleet::testing_support

#endif  // TUNEFLEET_TESTS_SUPPORT_MODEL_FIXTURES_H_
