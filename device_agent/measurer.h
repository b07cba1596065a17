// Runs trials on one OpenCL device: builds the kernel (with a program cache),
// checks its output against the naive reference (run once per workload,
// output cached) and times it with OpenCL profiling events under the
// request's timing policy (DESIGN.md, Process model and protocol).
#ifndef TUNEFLEET_DEVICE_AGENT_MEASURER_H_
#define TUNEFLEET_DEVICE_AGENT_MEASURER_H_

#include <memory>

#include "absl/status/statusor.h"
#include "device_agent/opencl.h"
#include "device_agent/program_cache.h"
#include "device_agent/workload_buffers.h"
#include "proto/common.pb.h"

namespace tunefleet::agent {

// Defaults applied where a TimingPolicy field is 0.
inline constexpr uint32_t kDefaultRepeat = 3;
inline constexpr uint32_t kDefaultMaxLaunches = 1000;
inline constexpr double kDefaultMaxTotalMs = 5000.0;

// Owns the device and everything built on it. Not thread-safe: one thread
// calls Measure() at a time.
class Measurer {
 public:
  // Errors: the agent's own fill kernel does not build on the device.
  static absl::StatusOr<std::unique_ptr<Measurer>> Create(ClDevice device);

  const tunefleet::v1::DeviceInfo& device_info() const { return info_; }

  // Runs one trial. Never fails as a call: every problem becomes the
  // measurement's error code and message (INVALID_CONFIG, COMPILE_ERROR,
  // RUNTIME_ERROR, WRONG_ANSWER); times_ns holds per-repeat mean kernel
  // times in ns when the error is OK.
  tunefleet::v1::Measurement Measure(
      const tunefleet::v1::MeasureRequest& request);

  const ProgramCache& program_cache() const { return programs_; }

 private:
  struct PrivateTag {
    explicit PrivateTag() = default;
  };

 public:
  // Use Create().
  Measurer(PrivateTag, ClDevice device, ClProgram fill_program,
           ClKernel fill_float, ClKernel fill_half);

 private:
  // Enqueues one launch with a profiling event.
  absl::StatusOr<ClEvent> Enqueue(cl_kernel kernel,
                                  const tunefleet::v1::KernelLaunch& launch);
  // Runs a kernel once and waits: its kernel time in ns from profiling.
  absl::StatusOr<double> LaunchOnce(cl_kernel kernel,
                                    const tunefleet::v1::KernelLaunch& launch);
  absl::Status EnsureReference(WorkloadState& state,
                               const tunefleet::v1::MeasureRequest& request);
  tunefleet::v1::Measurement MeasureInState(
      WorkloadState& state, const tunefleet::v1::MeasureRequest& request);
  absl::StatusOr<ClKernel> MakeKernel(const tunefleet::v1::KernelLaunch& launch,
                                      WorkloadState& state, double* compile_ms);
  absl::Status Time(cl_kernel kernel, const tunefleet::v1::KernelLaunch& launch,
                    const tunefleet::v1::TimingPolicy& policy,
                    double first_launch_ns, tunefleet::v1::Measurement* result);

  ClDevice device_;
  tunefleet::v1::DeviceInfo info_;
  ClProgram fill_program_;
  ClKernel fill_float_;
  ClKernel fill_half_;
  ProgramCache programs_;
  WorkloadBuffers workloads_;
};

}  // namespace tunefleet::agent

#endif  // TUNEFLEET_DEVICE_AGENT_MEASURER_H_
