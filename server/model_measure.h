// A model job's end-to-end measurement (issue 36, "tuned against what users
// see"; docs/TUNING.md, "Measured latency"): once its budget is spent, the
// tuned plan of its ONNX model (plan_builder/, from this server's records
// of its device key, as `tunefleet run` builds it) runs on a connected
// agent of the key through the RunModel path (server/model_run_service.h),
// and its measured latency (median, p10, p90 of Run()'s wall time), the
// same figures of as many runs with the inputs and outputs in device
// buffers (no host copies) and per-layer device times come back as a
// MeasuredLatency.
#ifndef TUNEFLEET_SERVER_MODEL_MEASURE_H_
#define TUNEFLEET_SERVER_MODEL_MEASURE_H_

#include <cstdint>
#include <functional>

#include "absl/status/statusor.h"
#include "store/store.h"
#include "tunefleet/v1/agent.pb.h"
#include "tunefleet/v1/tuning.pb.h"

namespace tunefleet::server {

// Runs a model on an agent of request.device_key and waits for its result,
// or until the second argument returns true (ModelRunRouter::Run of the
// server's own). Errors: Run's.
using ModelRunFn = std::function<absl::StatusOr<tunefleet::v1::RunModelResult>(
    const tunefleet::v1::RunModelRequest&, const std::function<bool()>&)>;

struct ModelMeasureOptions {
  uint32_t warmup = 3;  // runs before the measured ones
  // Measured runs (median, p10, p90), then as many with device buffers.
  uint32_t runs = 20;
  uint32_t profiled_runs = 3;  // runs with per-layer profiling
  uint32_t timeout_ms = 300000;
};

// The value at quantile `q` (0..1) of `values` by nearest rank
// (ceil(q * n)-th smallest; the smallest for q = 0); 0 for none.
double NearestRank(std::vector<double> values, double q);

// Measures model job `row` (whose estimated latency is `estimate_ns`):
// reads its ONNX model from `store`, builds the tuned plan of its key and
// runs it through `run`. Never fails: a measurement that cannot be made
// (no ONNX model stored, a model the import or plan builder refuses, no
// agent of the key that runs models, the agent's error) comes back with
// missing_reason saying why and the estimate set. measured_ms is `now_ms`.
// `cancelled`: as for ModelRunFn (the result is then missing, CANCELLED).
tunefleet::v1::MeasuredLatency MeasureModelJob(
    store::Store& store, const store::ModelJob& row, double estimate_ns,
    const ModelRunFn& run, const ModelMeasureOptions& options, int64_t now_ms,
    const std::function<bool()>& cancelled = [] { return false; });

}  // namespace tunefleet::server

#endif  // TUNEFLEET_SERVER_MODEL_MEASURE_H_
