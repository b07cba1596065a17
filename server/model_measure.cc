#include "server/model_measure.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "dashboard/store_source.h"
#include "model_runtime/plan_format.h"
#include "onnx_import/model_graph.h"
#include "onnx_import/onnx_import.h"
#include "plan_builder/plan_builder.h"
#include "trial/trial_request.h"

namespace tunefleet::server {
namespace {

tunefleet::v1::MeasuredLatency Missing(tunefleet::v1::MeasuredLatency m,
                                       absl::string_view why,
                                       const absl::Status& status) {
  m.set_missing_reason(absl::StrCat(why, ": ", status.message()));
  return m;
}

}  // namespace

double NearestRank(std::vector<double> values, double q) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const double rank = std::ceil(q * static_cast<double>(values.size()));
  const size_t i = rank < 1 ? 0 : static_cast<size_t>(rank) - 1;
  return values[std::min(i, values.size() - 1)];
}

tunefleet::v1::MeasuredLatency MeasureModelJob(
    store::Store& store, const store::ModelJob& row, double estimate_ns,
    const ModelRunFn& run, const ModelMeasureOptions& options, int64_t now_ms,
    const std::function<bool()>& cancelled) {
  tunefleet::v1::MeasuredLatency m;
  m.set_estimate_ns(estimate_ns);
  m.set_measured_ms(now_ms);
  absl::StatusOr<store::ModelJobModel> model = store.GetModelJobModel(row.id);
  if (!model.ok()) {
    m.set_missing_reason(
        absl::IsNotFound(model.status())
            ? "the job request carried no ONNX model (submit it with "
              "`tunefleet tune --onnx`, which sends the file)"
            : absl::StrCat("store: ", model.status().message()));
    return m;
  }
  onnx_import::InputShapes shapes;
  for (const std::string& s : model->input_shapes) {
    if (absl::Status st = onnx_import::ParseInputShape(s, &shapes); !st.ok()) {
      return Missing(std::move(m), "input shape", st);
    }
  }
  absl::StatusOr<onnx_import::ModelGraph> graph =
      onnx_import::ImportModelGraph(model->onnx, row.model_name, shapes);
  if (!graph.ok()) return Missing(std::move(m), "model", graph.status());
  for (const auto& [name, dims] : graph->tasks.input_shapes) {
    shapes[name] = dims;
  }
  plan_builder::PlanOptions po;
  po.model_name = row.model_name;
  po.model_sha256 = plan_builder::Sha256Hex(model->onnx);
  po.input_shapes = shapes;
  po.device_key = row.device_key;
  absl::StatusOr<tunefleet::v1::DeviceInfo> device =
      store.GetDevice(row.device_key);
  if (device.ok()) {
    po.device_name = device->device_name();
    po.device_vendor = device->vendor();
    // DeviceInfo.libraries holds "name version" ("clblast 1.5.3").
    po.include_library = trial::LimitsFromDeviceInfo(*device).library_clblast;
  }
  dashboard::StoreDataSource records(&store);
  absl::StatusOr<tunefleet_tuned::Plan> plan =
      plan_builder::BuildPlan(*graph, records, po);
  if (!plan.ok()) return Missing(std::move(m), "plan", plan.status());
  tunefleet::v1::RunModelRequest request;
  request.set_device_key(row.device_key);
  tunefleet_tuned::EncodePlan(*plan, request.mutable_plan(),
                              request.mutable_weights());
  request.set_model_sha256(po.model_sha256);
  // Inputs of a fixed pattern in [-1, 1]: the latency does not depend on
  // the values.
  for (int32_t t : plan->inputs) {
    const tunefleet_tuned::PlanTensor& tensor = plan->tensors[t];
    tunefleet::v1::RunModelTensor* in = request.add_inputs();
    in->set_name(tensor.name);
    for (uint64_t i = 0; i < tensor.elements; ++i) {
      in->add_values(static_cast<float>(std::sin(0.37 * double(i))));
    }
  }
  request.set_warmup(options.warmup);
  request.set_runs(options.runs);
  request.set_profiled_runs(options.profiled_runs);
  request.set_timeout_ms(options.timeout_ms);
  request.set_record("auto");
  // As many runs again with the inputs and outputs in device buffers: the
  // figure a peer whose tensors stay on the device is timed by.
  request.set_device_buffer_runs(true);
  absl::StatusOr<tunefleet::v1::RunModelResult> result =
      run(request, cancelled);
  if (!result.ok()) return Missing(std::move(m), "run", result.status());
  std::vector<double> times(result->latency_ns().begin(),
                            result->latency_ns().end());
  if (times.empty()) {
    m.set_missing_reason("run: the agent returned no measured run");
    return m;
  }
  m.set_median_ns(NearestRank(times, 0.5));
  m.set_p10_ns(NearestRank(times, 0.1));
  m.set_p90_ns(NearestRank(times, 0.9));
  m.set_runs(static_cast<uint32_t>(times.size()));
  // Empty from an agent before device_buffer_runs: left 0 (not measured).
  const std::vector<double> on_device(
      result->device_buffers_latency_ns().begin(),
      result->device_buffers_latency_ns().end());
  if (!on_device.empty()) {
    m.set_device_buffers_median_ns(NearestRank(on_device, 0.5));
    m.set_device_buffers_p10_ns(NearestRank(on_device, 0.1));
    m.set_device_buffers_p90_ns(NearestRank(on_device, 0.9));
    m.set_device_buffers_runs(static_cast<uint32_t>(on_device.size()));
  }
  m.set_agent_name(result->agent_name());
  m.set_device_name(result->device_name());
  m.set_record(result->record());
  m.set_commands_per_run(result->commands_per_run());
  for (const tunefleet::v1::RunModelLayer& l : result->layers()) {
    tunefleet::v1::MeasuredLayer* out = m.add_layers();
    out->set_label(l.label());
    out->set_workload(l.workload());
    out->set_entry(l.entry());
    out->set_measured_ns(l.measured_ns());
    out->set_estimate_ns(l.estimate_ns());
  }
  return m;
}

}  // namespace tunefleet::server
