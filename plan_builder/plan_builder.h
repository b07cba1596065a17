// The plan builder (issue 35): turns a model lowered to steps
// (onnx_import/model_graph.h) and the tuning records of one device key
// (emitter/choice.h: the same choice as the emitted kernel table) into the
// plan the model runtime runs (model_runtime/model_plan.h):
// - per step, its entry: the generated config of the fastest record, the
//   naive reference kernel where it measured faster or where the workload
//   has no record (a model runs before it is tuned), or a library call
//   where a library template's record is fastest; its launch (source,
//   build options, NDRange, arguments) comes from the template exactly as
//   trials get it (KernelTemplate::Launch / ReferenceLaunch, what
//   trial::BuildMeasureRequest sends), with the step's floats (clip
//   bounds, LeakyRelu's alpha, ...) in place of the spec's fixed ones;
// - constants deduplicated into one weights blob, and those a kernel reads
//   through an image2d_t stored as the image's texels;
// - the memory plan (model_runtime/memory_plan.h): liveness-based offsets
//   of every tensor in one arena.
#ifndef TUNEFLEET_PLAN_BUILDER_PLAN_BUILDER_H_
#define TUNEFLEET_PLAN_BUILDER_PLAN_BUILDER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "data_source/data_source.h"
#include "model_runtime/model_plan.h"
#include "onnx_import/model_graph.h"

namespace tunefleet::plan_builder {

struct PlanOptions {
  std::string model_name;    // for messages and the header
  std::string model_sha256;  // Sha256Hex() of the ONNX bytes
  onnx_import::InputShapes input_shapes;
  std::string device_key;
  // The device's CL_DEVICE_NAME and CL_DEVICE_VENDOR when the records do
  // not know the key (a device never tuned: every step runs its naive
  // kernel); the records' device info wins otherwise.
  std::string device_name;
  std::string device_vendor;
  // false: every step runs its template's naive reference kernel (the
  // naive plan, the baseline of bench/model_e2e).
  bool tuned = true;
  // false: library templates' records are left out (where the process that
  // runs the plan cannot call the library), so each step gets its fastest
  // generated or reference kernel.
  bool include_library = true;
  uint64_t alignment = tunefleet_tuned::kDefaultPlanAlignment;
};

// What the builder chose, for printing.
struct PlanReport {
  int steps = 0;
  int tuned = 0;             // generated configs
  int reference = 0;         // naive kernels: faster, or no record
  int library = 0;           // library calls
  int no_record = 0;         // steps whose workload has no usable record
  double estimate_ns = 0;    // sum of the steps' record times
  int without_estimate = 0;  // steps with no time to add
  std::vector<std::string> skipped;  // records the choice could not use
};

// The plan of `graph` on `options.device_key`. Errors: INVALID_ARGUMENT
// without a device key or model hash; FAILED_PRECONDITION naming the step
// (its label and workload) that cannot run: no template for its workload,
// a buffer bound to an unknown tensor or too short for the template, an
// output bound to a constant, floats that do not match the launch's; the
// source's errors other than NOT_FOUND for an unknown key.
absl::StatusOr<tunefleet_tuned::Plan> BuildPlan(
    const onnx_import::ModelGraph& graph, data_source::RecordReader& records,
    const PlanOptions& options, PlanReport* report = nullptr);

// The SHA-256 of `bytes` as 64 lowercase hex digits (the plan's model
// hash).
std::string Sha256Hex(absl::string_view bytes);

}  // namespace tunefleet::plan_builder

#endif  // TUNEFLEET_PLAN_BUILDER_PLAN_BUILDER_H_
