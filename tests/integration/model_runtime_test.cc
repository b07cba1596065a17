// The plan builder and the model runtime on the OpenCL device (PoCL here),
// with models made by hand as ModelGraphs (onnx_import/model_graph.h):
// a convolution with its epilogue, a per-channel add, a global average pool
// and a view of its output, checked against a plain C++ computation of the
// same model; naive kernels (no records), a tuned config that reads its
// input through an image (rows of whole texels: a copy; others: the packing
// kernel), the plan through its files, and the errors of bad input.
#include <cmath>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "device_agent/opencl.h"
#include "emitter/emitter.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernels_templates/registry.h"
#include "kernels_templates/workload.h"
#include "model_runtime/plan_format.h"
#include "model_runtime/tunefleet_model.h"
#include "onnx_import/model_graph.h"
#include "plan_builder/plan_builder.h"
#include "trial/trial_request.h"

namespace tunefleet {
namespace {

using onnx_import::ModelGraph;
using onnx_import::ModelStep;
using onnx_import::StepBuffer;
using ::testing::HasSubstr;

// Records of one device key given by the test: the best record per
// workload, no reference times.
class FakeRecords : public emitter::RecordSource {
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

templates::Workload Parse(const std::string& op, const std::string& shape) {
  auto w = templates::Workload::Parse(op, shape, "fp32");
  EXPECT_TRUE(w.ok()) << w.status();
  return *w;
}

std::vector<float> Random(size_t n, uint32_t seed) {
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

class ModelRuntimeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto device = agent::OpenDevice(0, 0);
    ASSERT_TRUE(device.ok()) << device.status();
    device_ = std::make_unique<agent::ClDevice>(*std::move(device));
    info_ = agent::QueryDeviceInfo(device_->platform, device_->device);
  }

  plan_builder::PlanOptions Options() const {
    plan_builder::PlanOptions o;
    o.model_name = "tiny.onnx";
    o.model_sha256 = plan_builder::Sha256Hex("tiny model bytes");
    o.device_key = "test-key";
    o.device_name = info_.device_name();
    o.device_vendor = info_.vendor();
    o.input_shapes = {{"x", {1, 3, 8, 8}}};
    return o;
  }

  // Runs `plan` on the device and checks the output against the model's.
  void RunAndCheck(const TinyModel& m, tunefleet_tuned::Plan plan) {
    std::unique_ptr<tunefleet_tuned::Model> model;
    std::string error;
    ASSERT_EQ(tunefleet_tuned::Model::LoadPlan(device_->context.get(),
                                               device_->device, std::move(plan),
                                               {}, &model, &error),
              CL_SUCCESS)
        << error;
    ASSERT_EQ(model->inputs().size(), 1u);
    ASSERT_EQ(model->outputs().size(), 1u);
    EXPECT_EQ(model->outputs()[0].name, "out");
    const std::vector<float> x = Random(m.C * m.H * m.W, 4);
    std::vector<float> out(m.K, -7.0f);
    const float* in[] = {x.data()};
    float* outs[] = {out.data()};
    std::vector<double> layer_ns;
    ASSERT_EQ(model->RunProfiled(device_->queue.get(), in, 1, outs, 1,
                                 &layer_ns, &error),
              CL_SUCCESS)
        << error;
    ASSERT_EQ(layer_ns.size(), 3u);
    for (double ns : layer_ns) EXPECT_GT(ns, 0);
    const std::vector<float> expected = m.Expected(x);
    double max_ref = 0, max_diff = 0;
    for (int k = 0; k < m.K; ++k) {
      max_ref = std::max(max_ref, double(std::fabs(expected[k])));
      max_diff = std::max(max_diff, double(std::fabs(expected[k] - out[k])));
    }
    EXPECT_LE(max_diff, 1e-4 * max_ref) << "max |diff| " << max_diff;
    // A second run gives the same outputs (nothing left over).
    std::vector<float> again(m.K, 0.0f);
    float* outs2[] = {again.data()};
    ASSERT_EQ(model->Run(device_->queue.get(), in, 1, outs2, 1, &error),
              CL_SUCCESS)
        << error;
    EXPECT_EQ(again, out);
  }

  std::unique_ptr<agent::ClDevice> device_;
  tunefleet::v1::DeviceInfo info_;
};

TEST_F(ModelRuntimeTest, NaivePlanWithoutRecordsMatchesTheModel) {
  TinyModel m(8, 8);
  FakeRecords records("test-key", info_);  // none: every step naive
  plan_builder::PlanReport report;
  auto plan = plan_builder::BuildPlan(m.graph, records, Options(), &report);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(report.steps, 3);
  EXPECT_EQ(report.reference, 3);
  EXPECT_EQ(report.no_record, 3);
  EXPECT_EQ(report.without_estimate, 3);
  // x, y, z, p: y and p can reuse x's bytes, z cannot (y is read by add).
  EXPECT_LT(plan->memory.arena_bytes, plan->memory.tensor_bytes);
  for (const auto& step : plan->steps) EXPECT_EQ(step.entry, "reference");
  RunAndCheck(m, *std::move(plan));
}

TEST_F(ModelRuntimeTest, TunedConfigReadingAnImageMatches) {
  for (int w : {8, 6}) {  // whole texels (a copy), then the packing kernel
    SCOPED_TRACE(absl::StrCat("W=", w));
    TinyModel m(8, w);
    FakeRecords records("test-key", info_);
    auto tmpl = templates::FindTemplate("conv2d", "conv2d_direct");
    ASSERT_TRUE(tmpl.ok());
    records.Add(**tmpl, m.graph.steps[0].workload,
                "KWI=1,KWG=4,PWI=1,QWI=2,WGP=2,WGQ=2,VW=1,CB=1,LI=0,LW=0,"
                "UNROLL=1,HALF=0,IMI=1",
                2500);
    plan_builder::PlanReport report;
    plan_builder::PlanOptions o = Options();
    o.input_shapes = {{"x", {1, 3, 8, w}}};
    auto plan = plan_builder::BuildPlan(m.graph, records, o, &report);
    ASSERT_TRUE(plan.ok()) << plan.status();
    EXPECT_EQ(report.tuned, 1);
    EXPECT_EQ(report.reference, 2);
    EXPECT_EQ(report.estimate_ns, 2500);
    EXPECT_EQ(plan->steps[0].entry, "tuned");
    EXPECT_THAT(plan->steps[0].config, HasSubstr("IMI=1"));
    EXPECT_EQ(plan->image_pack_source >= 0, w % 4 != 0);
    RunAndCheck(m, *std::move(plan));
  }
}

TEST_F(ModelRuntimeTest, PlanFilesLoadAndBadInputIsRefused) {
  TinyModel m(8, 8);
  FakeRecords records("test-key", info_);
  auto plan = plan_builder::BuildPlan(m.graph, records, Options());
  ASSERT_TRUE(plan.ok()) << plan.status();
  std::string plan_file, weights_file;
  tunefleet_tuned::EncodePlan(*plan, &plan_file, &weights_file);
  const plan_builder::PlanOptions o = Options();
  std::unique_ptr<tunefleet_tuned::Model> model;
  std::string error;
  tunefleet_tuned::ModelLoadOptions load;
  load.model_sha256 = o.model_sha256;
  load.device_key = "test-key";
  ASSERT_EQ(tunefleet_tuned::Model::LoadBytes(
                device_->context.get(), device_->device, plan_file,
                weights_file, load, &model, &error),
            CL_SUCCESS)
      << error;
  EXPECT_THAT(model->Describe(), HasSubstr("conv_0"));
  EXPECT_THAT(model->Describe(), HasSubstr("out [1,4]"));
  // Wrong counts and null pointers.
  std::vector<float> x(3 * 8 * 8, 0.5f), out(4);
  const float* in[] = {x.data()};
  float* outs[] = {out.data()};
  EXPECT_EQ(model->Run(device_->queue.get(), in, 0, outs, 1, &error),
            tunefleet_tuned::kModelBadArguments);
  EXPECT_THAT(error, HasSubstr("takes 1 inputs"));
  const float* null_in[] = {nullptr};
  EXPECT_EQ(model->Run(device_->queue.get(), null_in, 1, outs, 1, &error),
            tunefleet_tuned::kModelBadArguments);
  EXPECT_EQ(model->Run(device_->queue.get(), in, 1, outs, 1, &error),
            CL_SUCCESS)
      << error;
  // RunProfiled wants a profiling queue: the device's queue has one; a
  // plain Run does not care.
  // Another key, another model, a device of another name.
  std::unique_ptr<tunefleet_tuned::Model> other;
  load.device_key = "mali-g610";
  EXPECT_EQ(tunefleet_tuned::Model::LoadBytes(
                device_->context.get(), device_->device, plan_file,
                weights_file, load, &other, &error),
            tunefleet_tuned::kPlanOtherDevice);
  load.device_key = "";
  load.model_sha256 = plan_builder::Sha256Hex("other bytes");
  EXPECT_EQ(tunefleet_tuned::Model::LoadBytes(
                device_->context.get(), device_->device, plan_file,
                weights_file, load, &other, &error),
            tunefleet_tuned::kPlanOtherModel);
  load.model_sha256 = "";
  tunefleet_tuned::Plan renamed = *plan;
  renamed.header.device_name = "Mali-G610";
  EXPECT_EQ(
      tunefleet_tuned::Model::LoadPlan(device_->context.get(), device_->device,
                                       renamed, load, &other, &error),
      tunefleet_tuned::kModelOtherDevice);
  EXPECT_THAT(error, HasSubstr("tuned on 'Mali-G610'"));
  // A truncated weights file.
  EXPECT_EQ(tunefleet_tuned::Model::LoadBytes(
                device_->context.get(), device_->device, plan_file,
                weights_file.substr(0, weights_file.size() / 2), load, &other,
                &error),
            tunefleet_tuned::kPlanTruncated);
  EXPECT_THAT(error, HasSubstr("weights file: truncated"));
}

TEST_F(ModelRuntimeTest, ARequiredAlignmentAboveThePlansReplansTheArena) {
  TinyModel m(8, 8);
  FakeRecords records("test-key", info_);
  plan_builder::PlanOptions o = Options();
  o.alignment = 4;  // below every device's base address alignment
  auto plan = plan_builder::BuildPlan(m.graph, records, o);
  ASSERT_TRUE(plan.ok()) << plan.status();
  std::unique_ptr<tunefleet_tuned::Model> model;
  std::string error;
  ASSERT_EQ(
      tunefleet_tuned::Model::LoadPlan(device_->context.get(), device_->device,
                                       *plan, {}, &model, &error),
      CL_SUCCESS)
      << error;
  EXPECT_TRUE(model->replanned());
  std::vector<float> x = Random(3 * 8 * 8, 4), out(4);
  const float* in[] = {x.data()};
  float* outs[] = {out.data()};
  ASSERT_EQ(model->Run(device_->queue.get(), in, 1, outs, 1, &error),
            CL_SUCCESS)
      << error;
  const std::vector<float> expected = m.Expected(x);
  for (int k = 0; k < 4; ++k) EXPECT_NEAR(out[k], expected[k], 1e-4);
}

TEST_F(ModelRuntimeTest, AStepThatCannotRunIsNamed) {
  TinyModel m(8, 8);
  m.graph.steps[1].buffers[0].tensor = "nowhere";
  FakeRecords records("test-key", info_);
  auto plan = plan_builder::BuildPlan(m.graph, records, Options());
  ASSERT_FALSE(plan.ok());
  EXPECT_THAT(plan.status().message(), HasSubstr("step 1 ('add_1'"));
  EXPECT_THAT(plan.status().message(), HasSubstr("'nowhere'"));
  TinyModel f(8, 8);
  f.graph.steps[0].floats = {0};
  plan = plan_builder::BuildPlan(f.graph, records, Options());
  ASSERT_FALSE(plan.ok());
  EXPECT_THAT(plan.status().message(), HasSubstr("gives 1 floats"));
}

}  // namespace
}  // namespace tunefleet
