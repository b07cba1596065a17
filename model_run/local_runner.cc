// LocalRunner: the model runtime on an OpenCL device of this machine, in
// this process (model_runner.h).
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "base/stats.h"
#include "library_backends/registry.h"
#include "model_run/model_runner.h"
#include "model_runtime/tunefleet_model.h"
#include "opencl/opencl.h"

namespace tunefleet::model_run {
namespace {

// The agent's library backends (library_backends/) as the runtime's
// LibraryCalls: the same CLBlast calls trials measured.
class AgentLibraryCalls : public tunefleet_tuned::LibraryCalls {
 public:
  explicit AgentLibraryCalls(library_backends::LibraryRegistry registry)
      : registry_(std::move(registry)) {}

  bool Has(const std::string& library,
           const std::string& routine) const override {
    library_backends::LibraryBackend* b = registry_.Find(library);
    return b != nullptr && b->HasRoutine(routine);
  }

  cl_int Enqueue(const std::string& library, const std::string& routine,
                 const std::vector<tunefleet_tuned::LibraryArgument>& args,
                 cl_command_queue queue, cl_event* done,
                 std::string* error) override {
    library_backends::LibraryBackend* b = registry_.Find(library);
    if (b == nullptr) {
      *error = "library " + library + " is not loaded";
      return tunefleet_tuned::kModelLibraryMissing;
    }
    // The converted arguments, kept per call site (the loaded Model's
    // argument lists do not move), so that a run converts nothing. Kept
    // for one loaded model only (ForgetCallSites): the next model's lists
    // may sit at the same addresses.
    std::vector<library_backends::LibraryArg>& converted = converted_[&args];
    if (converted.size() != args.size()) converted = Converted(args);
    absl::StatusOr<std::vector<library_backends::LibraryEvent>> events =
        b->Enqueue(routine, converted, queue);
    if (!events.ok()) {
      *error = std::string(events.status().message());
      return absl::IsUnimplemented(events.status())
                 ? tunefleet_tuned::kModelLibraryMissing
                 : CL_INVALID_OPERATION;
    }
    if (done != nullptr) {
      if (!events->empty() && events->back() != nullptr) {
        *done = events->back().get();
        clRetainEvent(*done);
      } else {
        return clEnqueueMarkerWithWaitList(queue, 0, nullptr, done);
      }
    }
    return CL_SUCCESS;
  }

  // Drops the kept conversions: called before a model is loaded, so that
  // a call site of the model unloaded before is never taken for one of its
  // own (its freed buffers passed to the library).
  void ForgetCallSites() { converted_.clear(); }

 private:
  // The library's form of a call site's arguments.
  static std::vector<library_backends::LibraryArg> Converted(
      const std::vector<tunefleet_tuned::LibraryArgument>& args) {
    std::vector<library_backends::LibraryArg> converted;
    for (size_t i = 0; i < args.size(); ++i) {
      const tunefleet_tuned::LibraryArgument& a = args[i];
      switch (a.kind) {
        case tunefleet_tuned::LibraryArgument::kInteger:
          converted.push_back(library_backends::LibraryArg::Integer(a.integer));
          break;
        case tunefleet_tuned::LibraryArgument::kFloat:
          converted.push_back(library_backends::LibraryArg::Float(a.real));
          break;
        case tunefleet_tuned::LibraryArgument::kBuffer:
          converted.push_back(library_backends::LibraryArg::Buffer(
              a.buffer, absl::StrCat("argument ", i), tunefleet::v1::DTYPE_FP32,
              a.elements));
          break;
      }
    }
    return converted;
  }

  library_backends::LibraryRegistry registry_;
  std::map<const void*, std::vector<library_backends::LibraryArg>> converted_;
};

// The status of a runtime code: the plan's and the inputs' problems are the
// caller's (INVALID_ARGUMENT), a device or library that cannot run the plan
// FAILED_PRECONDITION, anything else an OpenCL failure (INTERNAL).
absl::Status StatusOf(cl_int code, const std::string& message) {
  switch (code) {
    case tunefleet_tuned::kPlanUnreadable:
    case tunefleet_tuned::kPlanNotAPlan:
    case tunefleet_tuned::kPlanVersion:
    case tunefleet_tuned::kPlanTruncated:
    case tunefleet_tuned::kPlanCorrupt:
    case tunefleet_tuned::kPlanOtherModel:
    case tunefleet_tuned::kPlanOtherDevice:
    case tunefleet_tuned::kPlanWeightsMismatch:
    case tunefleet_tuned::kModelBadArguments:
      return absl::InvalidArgumentError(message);
    case tunefleet_tuned::kModelLibraryMissing:
    case tunefleet_tuned::kModelOtherDevice:
    case tunefleet_tuned::kModelCannotRecord:
    case CL_BUILD_PROGRAM_FAILURE:
    case CL_INVALID_BUILD_OPTIONS:
    case CL_INVALID_KERNEL_NAME:
      return absl::FailedPreconditionError(message);
    default:
      return absl::InternalError(message);
  }
}

double ThreadCpuNs() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) * 1e9 + static_cast<double>(t.tv_nsec);
}

class LocalRunner : public ModelRunner {
 public:
  LocalRunner(opencl::ClDevice device, RunnerDevice info,
              library_backends::LibraryRegistry registry)
      : device_(std::move(device)),
        info_(std::move(info)),
        library_(std::move(registry)) {}

  const RunnerDevice& device() const override { return info_; }

  absl::StatusOr<RunResult> Run(const RunRequest& request) override {
    if (request.runs < 1 || request.warmup < 0 || request.profiled_runs < 0) {
      return absl::InvalidArgumentError(
          "runs must be >= 1, warm-up and profiled runs >= 0");
    }
    tunefleet_tuned::ModelLoadOptions options;
    options.model_sha256 = request.model_sha256;
    options.device_key = request.device_key;
    options.library = &library_;
    options.image_views = request.image_views;
    if (request.record == "off") {
      options.record = tunefleet_tuned::RecordMode::kOff;
    } else if (request.record == "on") {
      options.record = tunefleet_tuned::RecordMode::kOn;
    } else if (request.record == "auto" || request.record == "both") {
      options.record = tunefleet_tuned::RecordMode::kAuto;
    } else {
      return absl::InvalidArgumentError(absl::StrCat(
          "record '", request.record, "': expected on, off, auto or both"));
    }
    // Measured runs on a queue without profiling, as an application makes
    // it (the recording is made for such a queue); profiled runs on the
    // device's profiling queue. Made before the model, so that the model
    // (its kernels, buffers and recording) goes first.
    cl_int queue_err = CL_SUCCESS;
    opencl::ClQueue plain_queue(clCreateCommandQueue(
        device_.context.get(), device_.device, 0, &queue_err));
    if (queue_err != CL_SUCCESS) {
      return absl::InternalError(
          absl::StrCat("clCreateCommandQueue: OpenCL error ", queue_err));
    }
    library_.ForgetCallSites();
    std::unique_ptr<tunefleet_tuned::Model> model;
    std::string error;
    cl_int err = tunefleet_tuned::Model::LoadBytes(
        device_.context.get(), device_.device, request.plan_file,
        request.weights_file, options, &model, &error);
    if (err != CL_SUCCESS) return StatusOf(err, error);

    const auto& inputs = model->inputs();
    if (request.inputs.size() != inputs.size()) {
      return absl::InvalidArgumentError(
          absl::StrCat("the model has ", inputs.size(), " inputs, ",
                       request.inputs.size(), " given"));
    }
    std::vector<const float*> in;
    for (size_t i = 0; i < inputs.size(); ++i) {
      if (request.inputs[i].size() != inputs[i].elements) {
        return absl::InvalidArgumentError(absl::StrCat(
            "input '", inputs[i].name, "' holds ", request.inputs[i].size(),
            " floats, the model's has ", inputs[i].elements));
      }
      in.push_back(request.inputs[i].data());
    }
    RunResult result;
    result.device = info_;
    for (const auto& o : model->outputs()) {
      result.output_names.push_back(o.name);
      result.output_dims.push_back(o.dims);
      result.outputs.emplace_back(o.elements, 0.0f);
    }
    std::vector<float*> out;
    for (auto& o : result.outputs) out.push_back(o.data());
    cl_command_queue queue = plain_queue.get();
    const bool recorded =
        model->recording() != tunefleet_tuned::RecordKind::kNone;
    const bool both = request.record == "both" && recorded;

    auto timed_run = [&](std::vector<double>* latency,
                         std::vector<double>* cpu) -> absl::Status {
      const double cpu0 = ThreadCpuNs();
      const auto t0 = std::chrono::steady_clock::now();
      const cl_int e = model->Run(queue, in.data(), in.size(), out.data(),
                                  out.size(), &error);
      const auto t1 = std::chrono::steady_clock::now();
      const double cpu1 = ThreadCpuNs();
      if (e != CL_SUCCESS) return StatusOf(e, error);
      if (latency != nullptr) {
        latency->push_back(
            std::chrono::duration<double, std::nano>(t1 - t0).count());
        cpu->push_back(cpu1 - cpu0);
      }
      return absl::OkStatus();
    };
    auto set_replay = [&](bool replay) -> absl::Status {
      const cl_int e = model->SetReplay(replay, &error);
      return e == CL_SUCCESS ? absl::OkStatus() : StatusOf(e, error);
    };
    for (int i = 0; i < request.warmup; ++i) {
      for (bool replay : {true, false}) {
        if (!both && !replay) continue;
        if (both) {
          if (absl::Status s = set_replay(replay); !s.ok()) return s;
        }
        if (absl::Status s = timed_run(nullptr, nullptr); !s.ok()) return s;
      }
    }
    for (int i = 0; i < request.runs; ++i) {
      if (!both) {
        if (absl::Status s = timed_run(&result.latency_ns, &result.host_cpu_ns);
            !s.ok()) {
          return s;
        }
        continue;
      }
      // Interleaved, each mode first every other run: the machine's drift
      // falls on both alike.
      for (int k = 0; k < 2; ++k) {
        const bool replay = (k == 0) == (i % 2 == 0);
        if (absl::Status s = set_replay(replay); !s.ok()) return s;
        absl::Status s =
            replay ? timed_run(&result.latency_ns, &result.host_cpu_ns)
                   : timed_run(&result.plain_latency_ns,
                               &result.plain_host_cpu_ns);
        if (!s.ok()) return s;
      }
    }
    // The request's inputs in device buffers, for RunBuffers.
    absl::StatusOr<IoBuffers> io = IoBuffers();
    if (both || request.device_buffer_runs) io = MakeIoBuffers(*model, request);
    if (!io.ok()) return io.status();
    if (both) {
      // Submitting alone: RunBuffers returns once everything is enqueued
      // and flushed; its CPU time is the host cost of a run without the
      // wait (and without the host copies of Run).
      absl::Status s =
          MeasureSubmits(*model, queue, *io, request.runs,
                         &result.submit_cpu_ns, &result.plain_submit_cpu_ns);
      if (!s.ok()) return s;
      if (absl::Status r = set_replay(true); !r.ok()) return r;
    }
    if (request.device_buffer_runs) {
      absl::Status s =
          MeasureOnDevice(*model, queue, *io, request, result.outputs,
                          &result.device_buffers_latency_ns,
                          &result.device_buffers_submit_cpu_ns);
      if (!s.ok()) return s;
    }
    result.record = model->replay() ? "on" : "off";
    result.record_extension =
        tunefleet_tuned::RecordKindName(model->recording());
    result.record_note = model->recording_note();
    result.recorded_lists = model->recorded_lists();
    // Per-layer times from separate profiled runs (events cost host time
    // the measured runs should not pay), into scratch outputs.
    std::vector<std::vector<double>> per_layer(model->layers().size());
    std::vector<std::vector<float>> scratch = result.outputs;
    std::vector<float*> scratch_out;
    for (auto& o : scratch) scratch_out.push_back(o.data());
    std::vector<double> layer_ns;
    for (int i = 0; i < request.profiled_runs; ++i) {
      err = model->RunProfiled(device_.queue.get(), in.data(), in.size(),
                               scratch_out.data(), scratch_out.size(),
                               &layer_ns, &error);
      if (err != CL_SUCCESS) return StatusOf(err, error);
      for (size_t l = 0; l < layer_ns.size(); ++l) {
        per_layer[l].push_back(layer_ns[l]);
      }
    }
    for (size_t l = 0; l < model->layers().size(); ++l) {
      const tunefleet_tuned::ModelLayer& layer = model->layers()[l];
      result.layers.push_back(
          LayerTime{.label = layer.label,
                    .workload = layer.workload,
                    .entry = layer.entry,
                    .config = layer.config,
                    .measured_ns =
                        per_layer[l].empty() ? 0.0 : base::Median(per_layer[l]),
                    .estimate_ns = layer.estimate_ns});
    }
    result.device_bytes = model->device_bytes();
    result.arena_bytes = model->arena_bytes();
    result.tensor_bytes = model->tensor_bytes();
    result.weights_bytes = model->weights_bytes();
    result.estimate_ns = model->estimate_ns();
    result.layers_without_estimate = model->layers_without_estimate();
    result.commands_per_run = model->commands_per_run();
    result.image_views = model->image_views();
    result.image_fills = model->image_fills();
    result.replanned = model->replanned();
    result.describe = model->Describe();
    return result;
  }

 private:
  // Device buffers holding the request's inputs (copied in once) and
  // room for the model's outputs: what RunBuffers takes.
  struct IoBuffers {
    std::vector<opencl::ClMem> owned;
    std::vector<cl_mem> in, out;
  };
  absl::StatusOr<IoBuffers> MakeIoBuffers(const tunefleet_tuned::Model& model,
                                          const RunRequest& request) {
    IoBuffers b;
    cl_int err = CL_SUCCESS;
    for (size_t i = 0; i < model.inputs().size() && err == CL_SUCCESS; ++i) {
      b.owned.emplace_back(clCreateBuffer(
          device_.context.get(), CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR,
          request.inputs[i].size() * 4,
          const_cast<float*>(request.inputs[i].data()), &err));
      b.in.push_back(b.owned.back().get());
    }
    for (size_t o = 0; o < model.outputs().size() && err == CL_SUCCESS; ++o) {
      b.owned.emplace_back(
          clCreateBuffer(device_.context.get(), CL_MEM_READ_WRITE,
                         model.outputs()[o].elements * 4, nullptr, &err));
      b.out.push_back(b.owned.back().get());
    }
    if (err != CL_SUCCESS) {
      return absl::InternalError(
          absl::StrCat("clCreateBuffer: OpenCL error ", err));
    }
    return b;
  }

  // One RunBuffers on `io`, then clFinish: the CPU time of the submit alone
  // and the wall time of both, ns.
  absl::Status RunOnDevice(tunefleet_tuned::Model& model,
                           cl_command_queue queue, const IoBuffers& io,
                           double* submit_cpu_ns, double* wall_ns) {
    std::string error;
    const auto t0 = std::chrono::steady_clock::now();
    const double cpu0 = ThreadCpuNs();
    cl_int err = model.RunBuffers(queue, io.in.data(), io.in.size(),
                                  io.out.data(), io.out.size(), &error);
    const double cpu1 = ThreadCpuNs();
    if (err != CL_SUCCESS) return StatusOf(err, error);
    err = clFinish(queue);
    const auto t1 = std::chrono::steady_clock::now();
    if (err != CL_SUCCESS) {
      return absl::InternalError(absl::StrCat("clFinish: OpenCL error ", err));
    }
    *submit_cpu_ns = cpu1 - cpu0;
    *wall_ns = std::chrono::duration<double, std::nano>(t1 - t0).count();
    return absl::OkStatus();
  }

  // The CPU time of RunBuffers (submitting a run without waiting for it),
  // replayed and plain, `runs` each, interleaved, on `io`; the device work
  // of each is waited for outside the measurement.
  absl::Status MeasureSubmits(tunefleet_tuned::Model& model,
                              cl_command_queue queue, const IoBuffers& io,
                              int runs, std::vector<double>* replayed,
                              std::vector<double>* plain) {
    std::string error;
    for (int i = 0; i < runs + 1; ++i) {  // the first: warm-up
      for (int k = 0; k < 2; ++k) {
        const bool replay = (k == 0) == (i % 2 == 0);
        const cl_int err = model.SetReplay(replay, &error);
        if (err != CL_SUCCESS) return StatusOf(err, error);
        double cpu = 0, wall = 0;
        absl::Status s = RunOnDevice(model, queue, io, &cpu, &wall);
        if (!s.ok()) return s;
        if (i > 0) (replay ? replayed : plain)->push_back(cpu);
      }
    }
    return absl::OkStatus();
  }

  // The wall time of RunBuffers + clFinish with the inputs and outputs in
  // device buffers `io` (no host copies), warm-up + `request.runs`, in the
  // model's current mode, and the CPU time of each RunBuffers call (the
  // submit alone). The last run's outputs are read back and must
  // match `expected` (the host-array runs' outputs) to 1e-5 x max|x|:
  // INTERNAL, naming the output, when they do not.
  absl::Status MeasureOnDevice(tunefleet_tuned::Model& model,
                               cl_command_queue queue, const IoBuffers& io,
                               const RunRequest& request,
                               const std::vector<std::vector<float>>& expected,
                               std::vector<double>* latency_ns,
                               std::vector<double>* submit_cpu_ns) {
    for (int i = 0; i < request.warmup + request.runs; ++i) {
      double cpu = 0, wall = 0;
      absl::Status s = RunOnDevice(model, queue, io, &cpu, &wall);
      if (!s.ok()) return s;
      if (i >= request.warmup) {
        latency_ns->push_back(wall);
        submit_cpu_ns->push_back(cpu);
      }
    }
    for (size_t o = 0; o < io.out.size(); ++o) {
      std::vector<float> got(expected[o].size());
      const cl_int err =
          clEnqueueReadBuffer(queue, io.out[o], CL_TRUE, 0, got.size() * 4,
                              got.data(), 0, nullptr, nullptr);
      if (err != CL_SUCCESS) {
        return absl::InternalError(
            absl::StrCat("clEnqueueReadBuffer: OpenCL error ", err));
      }
      float scale = 0, diff = 0;
      for (size_t k = 0; k < got.size(); ++k) {
        scale = std::max(scale, std::abs(expected[o][k]));
        diff = std::max(diff, std::abs(got[k] - expected[o][k]));
      }
      if (!(diff <= 1e-5f * scale)) {
        return absl::InternalError(
            absl::StrCat("output '", model.outputs()[o].name,
                         "' of the run on device "
                         "buffers differs from the run on host arrays by ",
                         diff, " (max |x| ", scale, ")"));
      }
    }
    return absl::OkStatus();
  }

  opencl::ClDevice device_;
  RunnerDevice info_;
  AgentLibraryCalls library_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<ModelRunner>> OpenLocalRunner(int platform,
                                                             int device) {
  absl::StatusOr<opencl::ClDevice> opened =
      opencl::OpenDevice(platform, device);
  if (!opened.ok()) return opened.status();
  const tunefleet::v1::DeviceInfo info =
      opencl::QueryDeviceInfo(opened->platform, opened->device);
  RunnerDevice d;
  d.device_key = opencl::DefaultDeviceKey(info);
  d.device_name = info.device_name();
  d.device_vendor = info.vendor();
  library_backends::LibraryRegistry registry =
      library_backends::LibraryRegistry::Load(info);
  for (const std::string& lib : registry.Describe()) {
    d.libraries.push_back(lib.substr(0, lib.find(' ')));
  }
  return std::unique_ptr<ModelRunner>(
      new LocalRunner(*std::move(opened), std::move(d), std::move(registry)));
}

}  // namespace tunefleet::model_run
