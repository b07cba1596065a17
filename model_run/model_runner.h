// Running a model plan somewhere and measuring it (`tunefleet run`,
// bench/model_e2e): a ModelRunner takes the plan's two files and the
// inputs, runs the plan with the model runtime (model_runtime/
// tunefleet_model.h) warm-up + N times, and returns the outputs with the
// measured latency, the host CPU time per run, per-layer device times and
// the device memory. LocalRunner runs on an OpenCL device of this machine
// in this process; a runner over the fleet protocol (an agent of a device
// key, through the server) is to implement the same interface.
#ifndef TUNEFLEET_MODEL_RUN_MODEL_RUNNER_H_
#define TUNEFLEET_MODEL_RUN_MODEL_RUNNER_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace tunefleet::model_run {

// The device a runner runs on: what plans for it are made for.
struct RunnerDevice {
  std::string device_key;     // the agent's default key of the device
  std::string device_name;    // CL_DEVICE_NAME
  std::string device_vendor;  // CL_DEVICE_VENDOR
  // Vendor libraries its plans may call, e.g. {"clblast"}.
  std::vector<std::string> libraries;
};

struct RunRequest {
  std::string plan_file;  // model_runtime/plan_format.h's two files
  std::string weights_file;
  // Refuse a plan of another model or key (empty: not checked).
  std::string model_sha256;
  std::string device_key;
  // One array per graph input, in the plan's order, each of the input's
  // elements (fp32, row-major).
  std::vector<std::vector<float>> inputs;
  int warmup = 1;  // runs before the measured ones
  int runs = 10;   // measured runs, >= 1
  // Extra runs with profiling events for the per-layer times (0: none).
  int profiled_runs = 1;
  // Recording (issue 36; model_runtime/recording.h): "auto" replays the
  // whole plan recorded at load where the device can record, "on" fails
  // (FAILED_PRECONDITION naming the missing extension) where it cannot,
  // "off" enqueues every command, "both" measures plain and replayed runs
  // of one loaded plan, interleaved (latency_ns: the replayed ones, or the
  // plain ones where the device cannot record).
  std::string record = "auto";
  // Tensors read through an image: viewed in their own memory where the
  // device can (ModelLoadOptions::image_views); false: always a copy.
  bool image_views = true;
  // Also time the plan with its inputs and outputs in device buffers
  // (RunResult::device_buffers_latency_ns): as many runs again.
  bool device_buffer_runs = true;
};

// One layer (plan step) with its measured device time.
struct LayerTime {
  std::string label;
  std::string workload;
  std::string entry;  // "tuned", "reference", "library"
  std::string config;
  double measured_ns = 0;   // median over the profiled runs
  double estimate_ns = -1;  // the record's; < 0: none
};

struct RunResult {
  RunnerDevice device;
  std::vector<std::string> output_names;
  std::vector<std::vector<int64_t>> output_dims;
  std::vector<std::vector<float>> outputs;  // of the last measured run
  std::vector<double> latency_ns;   // per measured run: wall time of Run()
  std::vector<double> host_cpu_ns;  // per measured run: the calling
                                    // thread's CPU time in Run()
  // Per measured run after those (none without
  // RunRequest::device_buffer_runs): the wall time of Model::RunBuffers +
  // clFinish with the inputs and outputs in device buffers (no host copies;
  // latency_ns's mode). What a peer that keeps its tensors on the device
  // times, e.g. PyTorch with CUDA tensors (docs/MODEL_RUNTIME.md). Their
  // outputs are checked against `outputs` (Run fails, INTERNAL, where
  // they differ by more than 1e-5 x max|x|).
  std::vector<double> device_buffers_latency_ns;
  // The CPU time of the RunBuffers call of each of those runs: the host
  // cost of submitting the plan, without the wait. Near the latency: the
  // run is bound by the host's launches, not by the device.
  std::vector<double> device_buffers_submit_cpu_ns;
  std::vector<LayerTime> layers;  // in plan order
  uint64_t device_bytes = 0;      // arena + weights + images + scratch
  uint64_t arena_bytes = 0;       // the arena after any re-planning
  uint64_t tensor_bytes = 0;      // every tensor in its own buffer
  uint64_t weights_bytes = 0;
  double estimate_ns = 0;  // sum of the layers' estimates
  int layers_without_estimate = 0;
  int commands_per_run = 0;
  // Tensors read through an image: views of their own memory, and images
  // filled by a command per run (Model::image_views/image_fills; 0 from an
  // agent, whose reply does not carry them).
  int image_views = 0;
  int image_fills = 0;
  bool replanned = false;  // the arena was planned again at load
  // The mode of latency_ns and host_cpu_ns: "on" (replays of the recorded
  // plan) or "off" (every command enqueued).
  std::string record = "off";
  // The extension recorded with ("cl_khr_command_buffer",
  // "cl_qcom_recordable_queues", "none"), the runtime's note on it (or why
  // the plan is not recorded) and its lists of launches.
  std::string record_extension = "none";
  std::string record_note;
  int recorded_lists = 0;
  // record "both" where the plan was recorded: the plain runs' figures
  // beside the replayed ones in latency_ns / host_cpu_ns, and for both the
  // CPU time of submitting a run alone (Model::RunBuffers: inputs copied
  // in, every command or the recording enqueued, outputs copied out,
  // flushed; not waiting), per run.
  std::vector<double> plain_latency_ns, plain_host_cpu_ns;
  std::vector<double> submit_cpu_ns, plain_submit_cpu_ns;
  std::string describe;  // Model::Describe()
};

class ModelRunner {
 public:
  virtual ~ModelRunner() = default;
  // The device plans for this runner are made for.
  virtual const RunnerDevice& device() const = 0;
  // Loads the plan, runs it and measures it. Errors: INVALID_ARGUMENT for
  // a plan of another version, model or key, a truncated or corrupt file
  // (the runtime's message), inputs of the wrong count or size;
  // FAILED_PRECONDITION for a plan the device cannot run (another device, a
  // library it lacks, a kernel that does not build); INTERNAL for an
  // OpenCL error while running.
  virtual absl::StatusOr<RunResult> Run(const RunRequest& request) = 0;
};

// Runs on device `device` of OpenCL platform `platform` of this machine
// (as clinfo lists them), in this process. Errors: NOT_FOUND / UNAVAILABLE
// when the device cannot be opened.
absl::StatusOr<std::unique_ptr<ModelRunner>> OpenLocalRunner(int platform,
                                                             int device);

}  // namespace tunefleet::model_run

#endif  // TUNEFLEET_MODEL_RUN_MODEL_RUNNER_H_
