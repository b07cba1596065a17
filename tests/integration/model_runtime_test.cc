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
#include "emitter/emitter.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernels_templates/registry.h"
#include "kernels_templates/workload.h"
#include "model_runtime/plan_format.h"
#include "model_runtime/tunefleet_model.h"
#include "onnx_import/model_graph.h"
#include "opencl/opencl.h"
#include "plan_builder/plan_builder.h"
#include "tests/support/model_fixtures.h"

namespace tunefleet {
namespace {

using onnx_import::ModelGraph;
using onnx_import::ModelStep;
using onnx_import::StepBuffer;
using ::testing::HasSubstr;

using testing_support::FakeRecords;
using testing_support::Random;
using testing_support::TinyModel;

class ModelRuntimeTest : public testing_support::ModelDeviceTest {
 protected:
  // Runs `plan` on the device and checks the output against the model's.
  // Loads `plan` with `options`, runs it (profiled, then plain) and checks
  // its output against the model's; the loaded model in *kept when asked.
  void RunAndCheck(const TinyModel& m, tunefleet_tuned::Plan plan,
                   const tunefleet_tuned::ModelLoadOptions& options = {},
                   std::unique_ptr<tunefleet_tuned::Model>* kept = nullptr) {
    std::unique_ptr<tunefleet_tuned::Model> model;
    std::string error;
    ASSERT_EQ(tunefleet_tuned::Model::LoadPlan(device_->context.get(),
                                               device_->device, std::move(plan),
                                               options, &model, &error),
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
    if (kept != nullptr) *kept = std::move(model);
  }
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
    ASSERT_NO_FATAL_FAILURE(
        testing_support::AddTunedConvRecord(m, /*image=*/true, records));
    plan_builder::PlanReport report;
    auto plan = plan_builder::BuildPlan(m.graph, records, Options(w), &report);
    ASSERT_TRUE(plan.ok()) << plan.status();
    EXPECT_EQ(report.tuned, 1);
    EXPECT_EQ(report.reference, 2);
    EXPECT_EQ(report.estimate_ns, 2500);
    EXPECT_EQ(plan->steps[0].entry, "tuned");
    EXPECT_THAT(plan->steps[0].config, HasSubstr("IMI=1"));
    EXPECT_GE(plan->image_pack_source, 0);  // also records image copies
    RunAndCheck(m, *std::move(plan));
  }
}

// A tensor read through an image in whole texels is viewed in its own
// memory where the device takes cl_khr_image2d_from_buffer: no copy before
// the layer. PoCL does not list the extension: claimed for it, the view is
// refused and the copy takes over, saying so, with the same outputs; with
// views off, the copy is made without asking.
TEST_F(ModelRuntimeTest, AnImageViewOfATensorOrTheCopyWhereRefused) {
  TinyModel m(8, 8);  // rows of 8 floats: whole texels
  struct Case {
    bool views, assume;
  };
  for (const Case c : {Case{false, false}, Case{true, true}}) {
    SCOPED_TRACE(absl::StrCat("views=", c.views, " assume=", c.assume));
    FakeRecords records("test-key", info_);
    ASSERT_NO_FATAL_FAILURE(
        testing_support::AddTunedConvRecord(m, /*image=*/true, records));
    auto plan = plan_builder::BuildPlan(m.graph, records, Options(8));
    ASSERT_TRUE(plan.ok()) << plan.status();
    tunefleet_tuned::ModelLoadOptions options;
    options.image_views = c.views;
    options.assume_image_from_buffer = c.assume;
    std::unique_ptr<tunefleet_tuned::Model> model;
    ASSERT_NO_FATAL_FAILURE(RunAndCheck(m, *std::move(plan), options, &model));
    ASSERT_NE(model, nullptr);
    ASSERT_EQ(model->layers()[0].image_reads.size(), 1u);
    const std::string& read = model->layers()[0].image_reads[0];
    if (!c.views) {
      EXPECT_EQ(read, "x packed into an image");
      EXPECT_EQ(model->commands_per_run(), 4);  // the copy, then 3 layers
      EXPECT_GT(model->image_bytes(), 0u);
    } else if (read == "x viewed as an image") {  // a device that takes it
      EXPECT_EQ(model->commands_per_run(), 3);
    } else {
      EXPECT_THAT(read, HasSubstr("x packed into an image (the driver refused "
                                  "a view: OpenCL error "));
      EXPECT_EQ(model->commands_per_run(), 4);
    }
  }
}

// Two convolutions of the same workload read x, each through an image (a
// tuned config with IMI=1): x is packed once and the second reads the
// first one's image (one command fewer, the layer says so), with the
// outputs of a plan that reads x from buffers.
TEST_F(ModelRuntimeTest, ATensorReadThroughAnImageTwiceIsPackedOnce) {
  TinyModel m(8, 6);  // rows of 6 floats: the packing kernel
  // x -> conv_0 -> y -> add_1 -> z -> pool_2 -> out, and
  // x -> conv_3 (other weights) -> y2 -> pool_4 -> p2.
  ModelStep twin = m.graph.steps[0];
  twin.buffers[1].constant = Random(m.K * m.C * 9, 11);
  twin.buffers[2].tensor = "y2";
  twin.nodes = {3};
  twin.label = "conv_3";
  ModelStep pool = m.graph.steps[2];
  pool.buffers = {StepBuffer{"y2", {}}, StepBuffer{"p2", {}}};
  pool.nodes = {4};
  pool.label = "pool_4";
  m.graph.steps.push_back(twin);
  m.graph.steps.push_back(pool);
  m.graph.tensors["y2"] = {"y2", {1, m.K, m.H, m.W}, ""};
  m.graph.tensors["p2"] = {"p2", {1, m.K, 1, 1}, ""};
  m.graph.outputs.push_back("p2");
  const plan_builder::PlanOptions o = Options(6);
  const std::vector<float> x = Random(m.C * m.H * m.W, 4);
  auto run = [&](bool image, std::vector<std::vector<float>>* outs)
      -> std::unique_ptr<tunefleet_tuned::Model> {
    FakeRecords records("test-key", info_);
    testing_support::AddTunedConvRecord(m, image, records);
    auto plan = plan_builder::BuildPlan(m.graph, records, o);
    EXPECT_TRUE(plan.ok()) << plan.status();
    std::unique_ptr<tunefleet_tuned::Model> model;
    std::string error;
    EXPECT_EQ(tunefleet_tuned::Model::LoadPlan(
                  device_->context.get(), device_->device, *std::move(plan), {},
                  &model, &error),
              CL_SUCCESS)
        << error;
    if (model == nullptr) return model;
    outs->assign(2, std::vector<float>(m.K, -7.0f));
    const float* in[] = {x.data()};
    float* out[] = {(*outs)[0].data(), (*outs)[1].data()};
    EXPECT_EQ(model->Run(device_->queue.get(), in, 1, out, 2, &error),
              CL_SUCCESS)
        << error;
    return model;
  };
  std::vector<std::vector<float>> buffers, images;
  auto plain = run(false, &buffers);
  auto packed = run(true, &images);
  ASSERT_NE(plain, nullptr);
  ASSERT_NE(packed, nullptr);
  // Five launches read from buffers; with images, one packing kernel more
  // (not two).
  EXPECT_EQ(plain->commands_per_run(), 5);
  EXPECT_EQ(packed->commands_per_run(), 6);
  ASSERT_EQ(packed->layers().size(), 5u);
  EXPECT_THAT(packed->layers()[0].image_reads,
              ::testing::ElementsAre("x packed into an image"));
  EXPECT_THAT(packed->layers()[3].image_reads,
              ::testing::ElementsAre("x through the image packed by layer 0"));
  EXPECT_THAT(packed->Describe(),
              HasSubstr("reads x through the image packed by layer 0"));
  EXPECT_TRUE(plain->layers()[3].image_reads.empty());
  for (int o = 0; o < 2; ++o) {
    for (int k = 0; k < m.K; ++k) {
      EXPECT_NEAR(images[o][k], buffers[o][k],
                  1e-5 * (1 + std::fabs(buffers[o][k])))
          << "output " << o << " channel " << k;
    }
  }
  // The first output is the model's (the second conv's weights differ).
  const std::vector<float> expected = m.Expected(x);
  for (int k = 0; k < m.K; ++k) {
    EXPECT_NEAR(images[0][k], expected[k], 1e-4) << k;
  }
  EXPECT_NE(images[1], images[0]);
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
