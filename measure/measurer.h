// Runs trials on one OpenCL device: builds the kernel (with a program cache),
// checks its output against the naive reference (run once per workload, output
// cached) and times it with OpenCL profiling events under the request's timing
// policy (contract/timing_policy.h).
//
// Agent efficiency (each can be turned off, so its saving can be measured;
// bench/agent_efficiency prints them):
// - programs are built once per (source, options) and kept in memory;
//   optionally their binaries persist on disk across processes
//   (MeasurerOptions::binary_cache_dir, ProgramCache);
// - device buffers and the reference output are reused by every trial of a
//   workload (WorkloadBuffers);
// - Prefetch() builds the next trial's programs on a background thread while
//   the current trial is measured;
// - where the device has cl_khr_command_buffer, the `number` launches of a
//   timing round are recorded once and the round is replayed with one
//   enqueue (Measurement.replayed).
//
// Kernel arguments read through images (v1::ImageArg, image_args.h) get
// their images once per workload; where an image is a copy or a pack of its
// buffer, that runs before each launch, its device time is added to the
// launch's and reported as Measurement.pack_ns, and rounds are not
// replayed.
#ifndef TUNEFLEET_MEASURE_MEASURER_H_
#define TUNEFLEET_MEASURE_MEASURER_H_

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "absl/functional/function_ref.h"
#include "absl/status/statusor.h"
#include "library_backends/registry.h"
#include "measure/image_args.h"
#include "measure/workload_buffers.h"
#include "opencl/opencl.h"
#include "opencl/program_cache.h"
#include "tunefleet/v1/common.pb.h"

namespace tunefleet::measure {

struct MeasurerOptions {
  // Directory of persistent program binaries (ProgramCache); empty: programs
  // are cached in memory only.
  std::string binary_cache_dir;
  enum class Prefetch { kAuto, kOn, kOff };
  // Whether Prefetch() builds in the background. kAuto: on, except on CPU
  // devices, where a build competes for the cores the timed kernel runs on
  // and would inflate its times.
  // On an H200 a build takes 150-550 ms against ~30 ms of timing, so one
  // trial of look-ahead hides little; the agent hints every queued trial
  // and several threads build them side by side: 150 trials of a job went
  // from 90.5 s to 72.5 s (1 thread, 1 queued) and 60.5 s (8 threads, 7
  // queued) (bench/results/h200_prefetch_fleet.txt).
  Prefetch prefetch = Prefetch::kAuto;
  // Background build threads when prefetching; up to the agent's queued
  // trials (--max-in-flight - 1) build side by side.
  int prefetch_threads = 4;
  // Record-and-replay of timing rounds where the device has
  // cl_khr_command_buffer; false: always one enqueue per launch. Off by
  // default: a replayed round's device time includes the gaps between its
  // launches, and on PoCL 3.1 (the one device with the extension we have
  // measured) it saves no host time (bench/results/pocl_agent_efficiency.txt).
  bool replay = false;
};

// "auto", "on", "off": the agent's --prefetch values.
const char* PrefetchName(MeasurerOptions::Prefetch mode);
// The mode named `name`; kAuto for any other text.
MeasurerOptions::Prefetch ParsePrefetch(absl::string_view name);
// Whether `mode` builds in the background on this device (kAuto: unless it
// is a CPU).
bool PrefetchEnabled(MeasurerOptions::Prefetch mode,
                     const tunefleet::v1::DeviceInfo& device);

// How a trial is timed under `policy` (fields left 0 read as
// contract::DefaultTimingPolicy()), given its first launch's time in ns:
// `warmup` launches, then up to `repeat` rounds of `number` launches each,
// `number` at least policy.number, raised until a round lasts
// min_repeat_ms, then capped so that all rounds stay within max_launches
// and max_total_ms; rounds stop early once they pass max_total_ns.
struct RoundPlan {
  uint32_t warmup = 0;
  uint32_t repeat = 1;
  uint32_t number = 1;
  double max_total_ns = 0;
};
RoundPlan PlanRounds(const tunefleet::v1::TimingPolicy& policy,
                     double first_launch_ns);

// A measurement of `code` with `message` and nothing else: a trial that
// failed before it was timed.
tunefleet::v1::Measurement FailedMeasurement(
    tunefleet::v1::Measurement::Error code, absl::string_view message);

// OK when the agent compiles the request's kernel and reference: sources
// and build options as kernel_policy/ allows. Errors: INVALID_ARGUMENT
// "kernel source refused: line <n>: #include is not allowed: ...",
// "reference kernel: build option '-I/x' is not allowed: ...".
absl::Status CheckCompilable(const tunefleet::v1::MeasureRequest& request);

// The error of a trial whose kernel could not be made (Measurer's
// MakeKernel): INVALID_CONFIG for arguments the kernel refused
// (FAILED_PRECONDITION), else COMPILE_ERROR.
tunefleet::v1::Measurement::Error MakeKernelError(const absl::Status& status);

// The phases of a trial, as a supervisor times them (device_agent/
// worker.h): building programs (and a new workload's buffers) has its own
// limit; only running kernels counts against the trial's timeout_ms.
enum class MeasurePhase {
  kBuild,  // program builds, buffers, a new workload's fill (the start)
  kRun,    // kernel launches: the reference, verification, timing
};

// Owns the device and everything built on it. Measure() is called by one
// thread at a time; Prefetch() may be called from any thread, also while
// Measure() runs.
class Measurer {
 public:
  // Errors: the agent's own fill kernel does not build on the device.
  static absl::StatusOr<std::unique_ptr<Measurer>> Create(
      opencl::ClDevice device, MeasurerOptions options = {});

  const tunefleet::v1::DeviceInfo& device_info() const { return info_; }

  // Runs one trial. Never fails as a call: every problem becomes the
  // measurement's error code and message (INVALID_CONFIG, COMPILE_ERROR,
  // RUNTIME_ERROR, WRONG_ANSWER); times_ns holds per-repeat mean kernel
  // times in ns when the error is OK.
  tunefleet::v1::Measurement Measure(
      const tunefleet::v1::MeasureRequest& request);

  // A hint that `launch` will be measured soon: when prefetching is on,
  // starts building its program in the background (the Measure() that
  // needs it then finds it built, or waits for the rest of the build).
  // Returns at once.
  void Prefetch(const tunefleet::v1::KernelLaunch& launch);
  // Prefetches the request's kernel and its reference kernel.
  void Prefetch(const tunefleet::v1::MeasureRequest& request);
  bool prefetch_enabled() const { return prefetch_; }
  // Blocks until background builds are done (tests and benchmarks).
  void WaitForPrefetches() { programs_.WaitForPrefetches(); }

  // Whether timing rounds are replayed from a command buffer; when not,
  // why (no extension, turned off, ...).
  bool replay_enabled() const { return replay_api_.has_value(); }
  const std::string& replay_unavailable_reason() const {
    return replay_unavailable_;
  }

  // Host-side figures of the last Time() (benchmarks): whether it was
  // replayed, ms to record and finalize the command buffer, mean host ms per
  // round to submit it and until it finished, and why a replay was
  // abandoned for plain enqueues ("" if not). replay_clock: what a replayed
  // round's device time was read from: "command-buffer event", or "markers
  // around the replay" where the event does not span the replayed commands
  // (PoCL 3.1).
  struct TimingStats {
    bool replayed = false;
    std::string replay_clock;
    double record_ms = 0;
    double submit_ms_per_round = 0;
    double wall_ms_per_round = 0;
    std::string replay_error;
  };
  const TimingStats& last_timing() const { return last_timing_; }
  // Trials whose replay failed and were timed with plain enqueues instead.
  int replay_fallbacks() const { return replay_fallbacks_; }

  const opencl::ProgramCache& program_cache() const { return programs_; }

  // Called, on the measuring thread, each time a Measure() enters another
  // phase (a trial starts in kBuild, unannounced): before building a
  // program (kBuild) and before the first launch after it (kRun).
  void SetPhaseListener(std::function<void(MeasurePhase)> listener) {
    phase_listener_ = std::move(listener);
  }

 private:
  // Tells the listener when `phase` differs from the current one.
  void EnterPhase(MeasurePhase phase) {
    if (phase == phase_) return;
    phase_ = phase;
    if (phase_listener_) phase_listener_(phase);
  }
  std::function<void(MeasurePhase)> phase_listener_;
  MeasurePhase phase_ = MeasurePhase::kBuild;

  struct PrivateTag {
    explicit PrivateTag() = default;
  };

 public:
  // Use Create().
  Measurer(PrivateTag, opencl::ClDevice device, opencl::ClProgram fill_program,
           opencl::ClKernel fill_float, opencl::ClKernel fill_half,
           MeasurerOptions options);

 private:
  struct KernelInfo {
    double compile_ms = 0;
    tunefleet::v1::Measurement::ProgramSource source =
        tunefleet::v1::Measurement::PROGRAM_SOURCE_UNSPECIFIED;
  };
  // Enqueues one launch with a profiling event, after the copies or packs
  // of its images (launch_images_), whose events go to `image_events`
  // (null: dropped).
  absl::StatusOr<opencl::ClEvent> Enqueue(
      cl_kernel kernel, const tunefleet::v1::KernelLaunch& launch,
      std::vector<opencl::ClEvent>* image_events = nullptr);
  // Runs a kernel once and waits: its kernel time in ns from profiling,
  // its images' copies or packs included.
  absl::StatusOr<double> LaunchOnce(cl_kernel kernel,
                                    const tunefleet::v1::KernelLaunch& launch);
  // Makes the images that `launch`'s arguments read (once per workload,
  // counted in its memory budget) and sets launch_images_ to those that
  // need a copy or pack before each launch. Errors: INVALID_ARGUMENT for an
  // image the request or device cannot have (INVALID_CONFIG), else the
  // failed OpenCL call.
  absl::Status PrepareImages(const tunefleet::v1::KernelLaunch& launch,
                             WorkloadState& state);
  // Enqueues the copies and packs of launch_images_, appending their events.
  absl::Status EnqueueImageRefresh(std::vector<opencl::ClEvent>* events);
  absl::Status EnsureReference(WorkloadState& state,
                               const tunefleet::v1::MeasureRequest& request);
  tunefleet::v1::Measurement MeasureInState(
      WorkloadState& state, const tunefleet::v1::MeasureRequest& request);
  // MeasureInState's work once the trial's kernel is built: the launch
  // checked against the kernel's limits (`kernel_wg`:
  // CL_KERNEL_WORK_GROUP_SIZE) and the device's local memory
  // (INVALID_CONFIG), then verified and timed.
  tunefleet::v1::Measurement MeasureBuiltKernel(
      cl_kernel kernel, size_t kernel_wg, const KernelInfo& kernel_info,
      WorkloadState& state, const tunefleet::v1::MeasureRequest& request);
  // A trial whose kernel is a library call (KernelLaunch.library), with its
  // epilogue kernel when the launch has a source: verified and timed as
  // library/library_trial.h says. Defined in library/library_trial.cc.
  tunefleet::v1::Measurement MeasureLibraryTrial(
      WorkloadState& state, const tunefleet::v1::MeasureRequest& request);
  absl::StatusOr<opencl::ClKernel> MakeKernel(
      const tunefleet::v1::KernelLaunch& launch, WorkloadState& state,
      KernelInfo* info);
  absl::Status Time(cl_kernel kernel, const tunefleet::v1::KernelLaunch& launch,
                    const tunefleet::v1::TimingPolicy& policy,
                    double first_launch_ns, double rtol, WorkloadState& state,
                    tunefleet::v1::Measurement* result);
  // The largest relative error of the workload's outputs against the
  // reference's (what verification compares).
  absl::StatusOr<double> WorstOutputError(WorkloadState& state);
  // The measurement of a trial whose output was just computed, before
  // timing: the compile time and program source given, the output's error
  // against the reference, and WRONG_ANSWER past the request's rtol
  // (RUNTIME_ERROR when the output cannot be read); error unset when it
  // verified. `rtol` receives the tolerance used.
  tunefleet::v1::Measurement VerifiedOutput(
      WorkloadState& state, const tunefleet::v1::MeasureRequest& request,
      double compile_ms, tunefleet::v1::Measurement::ProgramSource source,
      double* rtol);
  // One timing round of `number` launches: enqueues them, adds the host ms
  // from `round_start` until they were submitted to *submit_ms, waits, and
  // returns the round's device time in ns.
  using Round = absl::FunctionRef<absl::StatusOr<double>(
      std::chrono::steady_clock::time_point round_start, double* submit_ms)>;
  // Runs up to `repeat` rounds (stopping early past max_total_ns), appends
  // each round's time / n to `result` and the host figures to last_timing_.
  absl::Status TimeRounds(uint32_t repeat, uint32_t n, double max_total_ns,
                          tunefleet::v1::Measurement* result, Round round);
  // Times `repeat` rounds of `n` launches (stopping early past
  // max_total_ns), appending one time per round to `result`.
  absl::Status TimePlain(cl_kernel kernel,
                         const tunefleet::v1::KernelLaunch& launch,
                         uint32_t repeat, uint32_t n, double max_total_ns,
                         tunefleet::v1::Measurement* result);
  // The same, each round one replay of a command buffer holding the n
  // launches. Checks the outputs after the last round against the
  // reference (poisoned before the first), so a replay that did not run
  // the kernel cannot pass. Errors: any CL failure or a mismatch; the
  // caller then times with TimePlain().
  absl::Status TimeReplayed(cl_kernel kernel,
                            const tunefleet::v1::KernelLaunch& launch,
                            uint32_t repeat, uint32_t n, double max_total_ns,
                            double rtol, WorkloadState& state,
                            tunefleet::v1::Measurement* result);
  // A finalized command buffer of `n` launches of `kernel` (its arguments
  // as set now). Errors: the failing cl_khr_command_buffer call.
  absl::StatusOr<opencl::ClCommandBuffer> RecordLaunches(
      cl_kernel kernel, const tunefleet::v1::KernelLaunch& launch, uint32_t n);
  // One timing round: replays `buffer` between two markers and returns its
  // device time in ns (see TimeReplayed); adds the host submit time since
  // `round_start` to *submit_ms.
  absl::StatusOr<double> ReplayRound(
      const opencl::ClCommandBuffer& buffer,
      std::chrono::steady_clock::time_point round_start, double* submit_ms);

  opencl::ClDevice device_;
  tunefleet::v1::DeviceInfo info_;
  opencl::ClProgram fill_program_;
  opencl::ClKernel fill_float_;
  opencl::ClKernel fill_half_;
  opencl::ProgramCache programs_;
  WorkloadBuffers workloads_;
  ImageMaker images_;
  // The images that the launch being measured copies or packs before each
  // of its launches (PrepareImages); they live in a WorkloadState.
  std::vector<const WorkloadImage*> launch_images_;
  bool prefetch_ = false;
  std::optional<opencl::CommandBufferApi> replay_api_;
  std::string replay_unavailable_;
  TimingStats last_timing_;
  int replay_fallbacks_ = 0;
  // The vendor libraries, loaded at the first library trial.
  std::optional<library_backends::LibraryRegistry> libraries_;
};

}  // namespace tunefleet::measure

#endif  // TUNEFLEET_MEASURE_MEASURER_H_
