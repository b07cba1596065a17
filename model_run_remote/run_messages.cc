#include "model_run_remote/run_messages.h"

#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"

namespace tunefleet::model_run_remote {

tunefleet::v1::RunModelRequest ToProto(
    const model_run::RunRequest& request,
    const std::vector<std::string>& input_names, uint32_t timeout_ms) {
  tunefleet::v1::RunModelRequest m;
  m.set_device_key(request.device_key);
  m.set_plan(request.plan_file);
  m.set_weights(request.weights_file);
  m.set_model_sha256(request.model_sha256);
  for (size_t i = 0; i < request.inputs.size(); ++i) {
    tunefleet::v1::RunModelTensor& t = *m.add_inputs();
    if (i < input_names.size()) t.set_name(input_names[i]);
    t.mutable_values()->Assign(request.inputs[i].begin(),
                               request.inputs[i].end());
  }
  m.set_warmup(static_cast<uint32_t>(std::max(0, request.warmup)));
  m.set_runs(static_cast<uint32_t>(std::max(0, request.runs)));
  m.set_profiled_runs(
      static_cast<uint32_t>(std::max(0, request.profiled_runs)));
  m.set_timeout_ms(timeout_ms);
  m.set_record(request.record);
  m.set_device_buffer_runs(request.device_buffer_runs);
  return m;
}

absl::StatusOr<model_run::RunRequest> FromProto(
    const tunefleet::v1::RunModelRequest& m) {
  if (m.plan().empty()) {
    return absl::InvalidArgumentError("run_model.plan: empty");
  }
  if (m.runs() < 1) {
    return absl::InvalidArgumentError("run_model.runs: must be at least 1");
  }
  constexpr uint32_t kMaxRuns = 100000;
  if (m.runs() > kMaxRuns || m.warmup() > kMaxRuns ||
      m.profiled_runs() > kMaxRuns) {
    return absl::InvalidArgumentError(absl::StrCat(
        "run_model: runs, warmup and profiled_runs are at most ", kMaxRuns));
  }
  model_run::RunRequest r;
  r.plan_file = m.plan();
  r.weights_file = m.weights();
  r.model_sha256 = m.model_sha256();
  r.device_key = m.device_key();
  for (const tunefleet::v1::RunModelTensor& t : m.inputs()) {
    r.inputs.emplace_back(t.values().begin(), t.values().end());
  }
  r.warmup = static_cast<int>(m.warmup());
  r.runs = static_cast<int>(m.runs());
  r.profiled_runs = static_cast<int>(m.profiled_runs());
  if (!m.record().empty()) r.record = m.record();
  r.device_buffer_runs = m.device_buffer_runs();
  return r;
}

tunefleet::v1::RunModelResult ToProto(
    const absl::StatusOr<model_run::RunResult>& result) {
  tunefleet::v1::RunModelResult m;
  if (!result.ok()) {
    m.set_error(
        result.status().message().empty()
            ? std::string(absl::StatusCodeToString(result.status().code()))
            : std::string(result.status().message()));
    m.set_error_code(static_cast<uint32_t>(result.status().code()));
    return m;
  }
  const model_run::RunResult& r = *result;
  m.set_device_name(r.device.device_name);
  m.set_device_vendor(r.device.device_vendor);
  for (size_t o = 0; o < r.outputs.size(); ++o) {
    tunefleet::v1::RunModelTensor& t = *m.add_outputs();
    if (o < r.output_names.size()) t.set_name(r.output_names[o]);
    if (o < r.output_dims.size()) {
      t.mutable_dims()->Assign(r.output_dims[o].begin(),
                               r.output_dims[o].end());
    }
    t.mutable_values()->Assign(r.outputs[o].begin(), r.outputs[o].end());
  }
  m.mutable_latency_ns()->Assign(r.latency_ns.begin(), r.latency_ns.end());
  m.mutable_host_cpu_ns()->Assign(r.host_cpu_ns.begin(), r.host_cpu_ns.end());
  m.mutable_device_buffers_latency_ns()->Assign(
      r.device_buffers_latency_ns.begin(), r.device_buffers_latency_ns.end());
  m.mutable_device_buffers_submit_cpu_ns()->Assign(
      r.device_buffers_submit_cpu_ns.begin(),
      r.device_buffers_submit_cpu_ns.end());
  for (const model_run::LayerTime& l : r.layers) {
    tunefleet::v1::RunModelLayer& out = *m.add_layers();
    out.set_label(l.label);
    out.set_workload(l.workload);
    out.set_entry(l.entry);
    out.set_config(l.config);
    out.set_measured_ns(l.measured_ns);
    out.set_estimate_ns(l.estimate_ns);
  }
  m.set_device_bytes(r.device_bytes);
  m.set_arena_bytes(r.arena_bytes);
  m.set_tensor_bytes(r.tensor_bytes);
  m.set_weights_bytes(r.weights_bytes);
  m.set_estimate_ns(r.estimate_ns);
  m.set_layers_without_estimate(
      static_cast<uint32_t>(std::max(0, r.layers_without_estimate)));
  m.set_commands_per_run(
      static_cast<uint32_t>(std::max(0, r.commands_per_run)));
  m.set_replanned(r.replanned);
  m.set_record(r.record);
  m.set_describe(r.describe);
  return m;
}

absl::StatusOr<model_run::RunResult> FromProto(
    const tunefleet::v1::RunModelResult& m) {
  if (!m.error().empty() || m.error_code() != 0) {
    const uint32_t code = m.error_code();
    const absl::StatusCode status_code =
        code == 0 ||
                code > static_cast<uint32_t>(absl::StatusCode::kUnauthenticated)
            ? absl::StatusCode::kUnknown
            : static_cast<absl::StatusCode>(code);
    return absl::Status(status_code, m.error());
  }
  model_run::RunResult r;
  r.device.device_name = m.device_name();
  r.device.device_vendor = m.device_vendor();
  for (const tunefleet::v1::RunModelTensor& t : m.outputs()) {
    int64_t elements = 1;
    for (int64_t d : t.dims()) elements *= d;
    if (elements != t.values_size()) {
      return absl::InvalidArgumentError(
          absl::StrCat("the agent's output '", t.name(), "' holds ",
                       t.values_size(), " values, its shape ", elements));
    }
    r.output_names.push_back(t.name());
    r.output_dims.emplace_back(t.dims().begin(), t.dims().end());
    r.outputs.emplace_back(t.values().begin(), t.values().end());
  }
  r.latency_ns.assign(m.latency_ns().begin(), m.latency_ns().end());
  r.host_cpu_ns.assign(m.host_cpu_ns().begin(), m.host_cpu_ns().end());
  r.device_buffers_latency_ns.assign(m.device_buffers_latency_ns().begin(),
                                     m.device_buffers_latency_ns().end());
  r.device_buffers_submit_cpu_ns.assign(
      m.device_buffers_submit_cpu_ns().begin(),
      m.device_buffers_submit_cpu_ns().end());
  for (const tunefleet::v1::RunModelLayer& l : m.layers()) {
    r.layers.push_back(model_run::LayerTime{.label = l.label(),
                                            .workload = l.workload(),
                                            .entry = l.entry(),
                                            .config = l.config(),
                                            .measured_ns = l.measured_ns(),
                                            .estimate_ns = l.estimate_ns()});
  }
  r.device_bytes = m.device_bytes();
  r.arena_bytes = m.arena_bytes();
  r.tensor_bytes = m.tensor_bytes();
  r.weights_bytes = m.weights_bytes();
  r.estimate_ns = m.estimate_ns();
  r.layers_without_estimate = static_cast<int>(m.layers_without_estimate());
  r.commands_per_run = static_cast<int>(m.commands_per_run());
  r.replanned = m.replanned();
  r.record = m.record().empty() ? "off" : m.record();
  r.describe = m.describe();
  return r;
}

}  // namespace tunefleet::model_run_remote
