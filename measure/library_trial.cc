#include "measure/library_trial.h"

#include <chrono>
#include <cmath>
#include <functional>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/time.h"
#include "measure/measurer.h"
#include "opencl/opencl.h"

namespace tunefleet::measure {

namespace {

using library_backends::LibraryArg;
using library_backends::LibraryBackend;
using tunefleet::v1::KernelLaunch;
using tunefleet::v1::Measurement;
using tunefleet::v1::MeasureRequest;

// A backend's refusal (unknown routine, bad arguments) is the config's
// fault; anything else failed while running.
Measurement::Error ErrorOf(const absl::Status& status) {
  return absl::IsInvalidArgument(status) || absl::IsUnimplemented(status)
             ? Measurement::INVALID_CONFIG
             : Measurement::RUNTIME_ERROR;
}

absl::StatusOr<cl_ulong> EndNs(cl_event event) {
  cl_ulong end = 0;
  const cl_int err = clGetEventProfilingInfo(event, CL_PROFILING_COMMAND_END,
                                             sizeof(end), &end, nullptr);
  if (err != CL_SUCCESS) return opencl::ClError("clGetEventProfilingInfo", err);
  return end;
}

// Enqueues the trial's calls on one in-order profiling queue.
class LibraryLauncher {
 public:
  // `epilogue` enqueues the kernel that follows each call; empty: none.
  LibraryLauncher(LibraryBackend& backend, std::string routine,
                  std::vector<LibraryArg> args, cl_command_queue queue,
                  std::function<absl::StatusOr<opencl::ClEvent>()> epilogue)
      : backend_(backend),
        routine_(std::move(routine)),
        args_(std::move(args)),
        queue_(queue),
        epilogue_(std::move(epilogue)) {}

  // Enqueues a marker, then `n` calls (each followed by the epilogue),
  // adds the host ms from `round_start` until they were submitted to
  // *submit_ms, waits for the queue and returns the device ns from the
  // marker's end to the end of the last event. Errors: the backend's
  // (INVALID_ARGUMENT, UNIMPLEMENTED, INTERNAL), INTERNAL for CL failures.
  absl::StatusOr<double> Round(
      uint32_t n, std::chrono::steady_clock::time_point round_start,
      double* submit_ms) {
    cl_event raw_before = nullptr;
    cl_int err = clEnqueueMarkerWithWaitList(queue_, 0, nullptr, &raw_before);
    opencl::ClEvent before(raw_before);
    if (err != CL_SUCCESS)
      return opencl::ClError("clEnqueueMarkerWithWaitList", err);
    library_backends::LibraryEvent last_call;
    opencl::ClEvent last_epilogue;
    absl::Status failed;
    for (uint32_t i = 0; i < n && failed.ok(); ++i) {
      const auto call_start = std::chrono::steady_clock::now();
      absl::StatusOr<std::vector<library_backends::LibraryEvent>> events =
          backend_.Enqueue(routine_, args_, queue_);
      call_host_ms_ += base::MsSince(call_start);
      if (!events.ok()) {
        failed = events.status();
        break;
      }
      if (!events->empty()) last_call = std::move(events->back());
      if (epilogue_) {
        absl::StatusOr<opencl::ClEvent> event = epilogue_();
        if (!event.ok()) {
          failed = event.status();
          break;
        }
        last_epilogue = *std::move(event);
      }
    }
    cl_event end = last_epilogue ? last_epilogue.get() : last_call.get();
    opencl::ClEvent after;
    if (end == nullptr && failed.ok()) {
      // The library returned no event: a marker ends the round.
      cl_event raw_after = nullptr;
      err = clEnqueueMarkerWithWaitList(queue_, 0, nullptr, &raw_after);
      after = opencl::ClEvent(raw_after);
      if (err != CL_SUCCESS)
        return opencl::ClError("clEnqueueMarkerWithWaitList", err);
      end = after.get();
    }
    err = clFlush(queue_);
    *submit_ms += base::MsSince(round_start);
    // Whatever happened, nothing of this round stays in flight.
    err |= clFinish(queue_);
    if (!failed.ok()) return failed;
    if (err != CL_SUCCESS)
      return opencl::ClError("running the library call", err);
    absl::StatusOr<cl_ulong> start_ns = EndNs(before.get());
    if (!start_ns.ok()) return start_ns.status();
    absl::StatusOr<cl_ulong> end_ns = EndNs(end);
    if (!end_ns.ok()) return end_ns.status();
    if (*end_ns <= *start_ns) {
      return absl::InternalError(
          "the library call's profiling times are empty");
    }
    return static_cast<double>(*end_ns - *start_ns);
  }

  absl::StatusOr<double> Once() {
    double submit_ms = 0;
    return Round(1, std::chrono::steady_clock::now(), &submit_ms);
  }

  // Host ms spent inside the library's calls so far.
  double call_host_ms() const { return call_host_ms_; }

 private:
  LibraryBackend& backend_;
  std::string routine_;
  std::vector<LibraryArg> args_;
  cl_command_queue queue_;
  std::function<absl::StatusOr<opencl::ClEvent>()> epilogue_;
  double call_host_ms_ = 0;
};

}  // namespace

bool IsLibraryOnly(const KernelLaunch& launch) {
  return launch.has_library() && launch.source().empty();
}

absl::StatusOr<std::vector<LibraryArg>> ResolveLibraryArgs(
    const tunefleet::v1::LibraryCall& call, const WorkloadState& state) {
  std::vector<LibraryArg> args;
  args.reserve(call.args_size());
  for (int i = 0; i < call.args_size(); ++i) {
    const tunefleet::v1::KernelArg& arg = call.args(i);
    switch (arg.value_case()) {
      case tunefleet::v1::KernelArg::kBuffer: {
        auto it = state.buffers.find(arg.buffer());
        const tunefleet::v1::BufferSpec* spec =
            WorkloadBuffers::FindSpec(state, arg.buffer());
        if (it == state.buffers.end() || spec == nullptr) {
          return absl::InvalidArgumentError(
              absl::StrCat("library argument ", i, " names unknown buffer '",
                           arg.buffer(), "'"));
        }
        args.push_back(LibraryArg::Buffer(it->second.get(), arg.buffer(),
                                          spec->dtype(), spec->elements()));
        break;
      }
      case tunefleet::v1::KernelArg::kI32:
        args.push_back(LibraryArg::Integer(arg.i32()));
        break;
      case tunefleet::v1::KernelArg::kU32:
        args.push_back(LibraryArg::Integer(arg.u32()));
        break;
      case tunefleet::v1::KernelArg::kF32:
        args.push_back(LibraryArg::Float(arg.f32()));
        break;
      default:
        return absl::InvalidArgumentError(
            absl::StrCat("library argument ", i,
                         " must be a buffer, an integer or a float"));
    }
  }
  return args;
}

Measurement Measurer::MeasureLibraryTrial(WorkloadState& state,
                                          const MeasureRequest& request) {
  const KernelLaunch& launch = request.kernel();
  const tunefleet::v1::LibraryCall& call = launch.library();
  if (!libraries_.has_value()) {
    libraries_ = library_backends::LibraryRegistry::Load(info_);
  }
  LibraryBackend* backend = libraries_->Find(call.library());
  if (backend == nullptr) {
    return FailedMeasurement(Measurement::INVALID_CONFIG,
                             absl::StrCat("library ", call.library(),
                                          " is not available on this agent"));
  }
  if (!backend->HasRoutine(call.routine())) {
    return FailedMeasurement(
        Measurement::INVALID_CONFIG,
        absl::StrCat("library ", call.library(), " has no routine '",
                     call.routine(), "'"));
  }
  absl::StatusOr<std::vector<LibraryArg>> args =
      ResolveLibraryArgs(call, state);
  if (!args.ok()) {
    return FailedMeasurement(Measurement::INVALID_CONFIG,
                             args.status().message());
  }

  // The epilogue kernel, built like a trial's kernel.
  KernelInfo kernel_info;
  opencl::ClKernel epilogue;
  if (!launch.source().empty()) {
    absl::StatusOr<opencl::ClKernel> kernel =
        MakeKernel(launch, state, &kernel_info);
    if (!kernel.ok()) {
      return FailedMeasurement(
          MakeKernelError(kernel.status()),
          absl::StrCat("epilogue kernel: ", kernel.status().message()));
    }
    epilogue = *std::move(kernel);
  }
  std::function<absl::StatusOr<opencl::ClEvent>()> enqueue_epilogue;
  if (epilogue) {
    // Its images (PrepareImages ran for the launch) are refreshed before
    // it, inside the round's span.
    enqueue_epilogue = [this, &epilogue, &launch] {
      std::vector<opencl::ClEvent> image_events;
      return Enqueue(epilogue.get(), launch, &image_events);
    };
  }
  LibraryLauncher launcher(*backend, call.routine(), *std::move(args),
                           device_.queue.get(), std::move(enqueue_epilogue));

  // Verification run.
  EnterPhase(MeasurePhase::kRun);
  if (absl::Status s = workloads_.PoisonOutputs(state); !s.ok()) {
    return FailedMeasurement(Measurement::RUNTIME_ERROR, s.message());
  }
  if (absl::StatusOr<double> t = launcher.Once(); !t.ok()) {
    return FailedMeasurement(ErrorOf(t.status()), t.status().message());
  }
  // The library builds its kernels inside its first calls: their host time
  // counts as compilation, with the epilogue's build.
  double rtol = 0;
  Measurement m = VerifiedOutput(
      state, request, kernel_info.compile_ms + launcher.call_host_ms(),
      kernel_info.source, &rtol);
  if (m.error() != Measurement::ERROR_UNSPECIFIED) return m;

  // A second call, past the library's first-call builds, sizes the rounds.
  absl::StatusOr<double> first_ns = launcher.Once();
  if (!first_ns.ok()) {
    return FailedMeasurement(ErrorOf(first_ns.status()),
                             first_ns.status().message());
  }
  const RoundPlan plan = PlanRounds(request.timing(), *first_ns);
  m.set_number(plan.number);
  for (uint32_t w = 0; w < plan.warmup; ++w) {
    if (absl::StatusOr<double> t = launcher.Once(); !t.ok()) {
      return FailedMeasurement(ErrorOf(t.status()), t.status().message());
    }
  }
  last_timing_ = TimingStats{};
  absl::Status timed =
      TimeRounds(plan.repeat, plan.number, plan.max_total_ns, &m,
                 [&](std::chrono::steady_clock::time_point round_start,
                     double* submit_ms) {
                   return launcher.Round(plan.number, round_start, submit_ms);
                 });
  if (!timed.ok()) return FailedMeasurement(ErrorOf(timed), timed.message());
  m.set_error(Measurement::OK);
  return m;
}

}  // namespace tunefleet::measure
