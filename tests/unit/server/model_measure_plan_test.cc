// A model job's end-to-end measurement (server/model_measure.h) builds the
// plan `tunefleet run` would: a workload whose fastest record is a vendor
// library call runs that call where the key's agent lists the library.
// Agents list libraries as "name version" ("clblast 1.5.3"). Records are
// written through the store's own API with chosen times, so the plan's
// choice is known; the run function captures the request the agent would
// get. The runs with device buffers are asked for and summarized by
// nearest rank, as the host-array runs are.
#include "server/model_measure.h"

#include <functional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernels_templates/registry.h"
#include "model_runtime/plan_format.h"
#include "onnx_import/model_graph.h"
#include "tests/support/onnx_test_models.h"
#include "tests/support/temp_store.h"

namespace tunefleet::server {
namespace {

using ::testing::HasSubstr;

constexpr char kKey[] = "dev";

class ModelMeasureTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_NE(store_, nullptr); }

  // The device of kKey as its agent describes itself.
  void Device(const std::vector<std::string>& libraries) {
    tunefleet::v1::DeviceInfo info;
    info.set_device_name("Test GPU");
    info.set_vendor("Acme");
    for (const std::string& l : libraries) info.add_libraries(l);
    ASSERT_TRUE(store_->UpsertDevice(kKey, info).ok());
  }

  // SmallNet's dense workload (its only one), from the import.
  templates::Workload DenseWorkload() {
    onnx_import::InputShapes shapes = {{"image", {1, 3, 17, 23}}};
    auto graph = onnx_import::ImportModelGraph(testing::SmallNet(),
                                               "small.onnx", shapes);
    EXPECT_TRUE(graph.ok()) << graph.status();
    for (const auto& t : graph->tasks.tasks) {
      if (t.workload.op() == "dense") return t.workload;
    }
    ADD_FAILURE() << "SmallNet has no dense workload";
    return graph->tasks.tasks.front().workload;
  }

  // One job of `template_name` on `w` whose single trial (`config`) took
  // `ns`, its naive reference `reference_ns`.
  void Record(const templates::Workload& w, const std::string& template_name,
              const std::string& config, double ns, double reference_ns) {
    auto tmpl = templates::FindTemplate(w.op(), template_name);
    ASSERT_TRUE(tmpl.ok()) << tmpl.status();
    store::JobParams job{{w, *tmpl}, kKey, tunefleet::v1::STRATEGY_RANDOM,
                         1,          1,    0};
    auto id = store_->CreateJob(job);
    ASSERT_TRUE(id.ok()) << id.status();
    ASSERT_TRUE(store_->SetJobReference(*id, reference_ns).ok());
    auto trials = store_->InsertTrials(*id, {{0, config}});
    ASSERT_TRUE(trials.ok()) << trials.status();
    tunefleet::v1::Measurement m;
    m.set_error(tunefleet::v1::Measurement::OK);
    m.add_times_ns(ns);
    ASSERT_TRUE(
        store_->CompleteTrial((*trials)[0], m, ns, 1, store::TrialLease{})
            .ok());
  }

  // A model job of SmallNet on kKey, as the store reads it back.
  store::ModelJob SmallNetJob() {
    store::ModelJobParams p;
    p.model_name = "small.onnx";
    p.device_key = kKey;
    p.budget = 1;
    p.onnx_model = testing::SmallNet();
    p.input_shapes = {testing::kSmallNetShape};
    auto id = store_->CreateModelJob(p, "{}");
    EXPECT_TRUE(id.ok()) << id.status();
    auto row = store_->GetModelJob(*id);
    EXPECT_TRUE(row.ok()) << row.status();
    return *row;
  }

  // Measures `row` (estimate 1000 ns) with an agent that answers
  // `answer`; *sent gets the request it was sent.
  tunefleet::v1::MeasuredLatency Measure(
      const store::ModelJob& row,
      absl::StatusOr<tunefleet::v1::RunModelResult> answer,
      tunefleet::v1::RunModelRequest* sent,
      const ModelMeasureOptions& options = {}) {
    const ModelRunFn run = [&](const tunefleet::v1::RunModelRequest& r,
                               const std::function<bool()>&) {
      *sent = r;
      return answer;
    };
    return MeasureModelJob(*store_, row, 1000, run, options, 0);
  }

  // Measures a model job of SmallNet on kKey; the plan the agent would
  // run, decoded.
  tunefleet_tuned::Plan MeasuredPlan() {
    tunefleet::v1::RunModelRequest sent;
    const tunefleet::v1::MeasuredLatency m = Measure(
        SmallNetJob(), absl::UnavailableError("no agent in this test"), &sent);
    EXPECT_THAT(m.missing_reason(), HasSubstr("no agent in this test"));
    tunefleet_tuned::Plan plan;
    std::string error;
    EXPECT_EQ(
        tunefleet_tuned::DecodePlan(sent.plan(), sent.weights(),
                                    {sent.model_sha256(), kKey}, &plan, &error),
        0)
        << error;
    return plan;
  }

  // The entry of the plan's dense step.
  static std::string DenseEntry(const tunefleet_tuned::Plan& plan) {
    for (const auto& s : plan.steps) {
      if (s.workload.rfind("dense ", 0) == 0) return s.entry;
    }
    return "no dense step";
  }

  ::tunefleet::testing::TempStore db_{"model_measure_test"};
  store::Store* store_ = db_.store();
};

TEST_F(ModelMeasureTest, TheLibraryRecordRunsWhereTheAgentListsTheLibrary) {
  Device({"clblast 1.5.3"});
  const templates::Workload dense = DenseWorkload();
  // CLBlast measured 10x faster than the naive kernel.
  Record(dense, "clblast_dense", "SWAP=0", 100, 1000);
  EXPECT_EQ(DenseEntry(MeasuredPlan()), "library");
}

TEST_F(ModelMeasureTest, WithoutTheLibraryTheNaiveKernelRuns) {
  // The agent lists another library whose name starts the same.
  Device({"clblastx 2.0"});
  const templates::Workload dense = DenseWorkload();
  Record(dense, "clblast_dense", "SWAP=0", 100, 1000);
  EXPECT_EQ(DenseEntry(MeasuredPlan()), "reference");
}

TEST_F(ModelMeasureTest, DeviceBufferRunsAreAskedForAndSummarized) {
  Device({});
  const store::ModelJob row = SmallNetJob();
  // The agent's answer: 10 runs of host arrays, 10 with device buffers
  // (out of order: the figures are of the sorted runs).
  tunefleet::v1::RunModelResult result;
  result.set_agent_name("agent-0");
  for (int i = 10; i >= 1; --i) {
    result.add_latency_ns(1000.0 * i);
    result.add_device_buffers_latency_ns(100.0 * ((i * 7) % 10 + 1));
    result.add_device_buffers_submit_cpu_ns(10);
  }
  ModelMeasureOptions options;
  options.runs = 10;
  tunefleet::v1::RunModelRequest sent;
  const tunefleet::v1::MeasuredLatency m = Measure(row, result, &sent, options);
  ASSERT_EQ(m.missing_reason(), "");
  EXPECT_TRUE(sent.device_buffer_runs());
  EXPECT_EQ(sent.runs(), 10u);
  EXPECT_EQ(m.median_ns(), 5000);
  EXPECT_EQ(m.runs(), 10u);
  // Nearest rank over 100, 200, ..., 1000 ns.
  EXPECT_EQ(m.device_buffers_median_ns(), 500);
  EXPECT_EQ(m.device_buffers_p10_ns(), 100);
  EXPECT_EQ(m.device_buffers_p90_ns(), 900);
  EXPECT_EQ(m.device_buffers_runs(), 10u);

  // An agent before the field sends none: not measured, all 0.
  tunefleet::v1::RunModelResult older;
  older.add_latency_ns(1000);
  const tunefleet::v1::MeasuredLatency old =
      Measure(row, older, &sent, options);
  ASSERT_EQ(old.missing_reason(), "");
  EXPECT_EQ(old.median_ns(), 1000);
  EXPECT_EQ(old.device_buffers_median_ns(), 0);
  EXPECT_EQ(old.device_buffers_p10_ns(), 0);
  EXPECT_EQ(old.device_buffers_p90_ns(), 0);
  EXPECT_EQ(old.device_buffers_runs(), 0u);
}

}  // namespace
}  // namespace tunefleet::server
