// The measurer's side of library trials (KernelLaunch.library): resolving
// a LibraryCall's arguments against the workload's buffers. The trial
// itself is measured by Measurer::MeasureLibraryTrial (library_trial.cc),
// with the same verification and timing policy as a kernel trial:
// - the call (then the epilogue kernel, when the launch has a source) runs
//   once on poisoned outputs and is checked against the reference;
// - it runs once more to size the rounds (the first call per process
//   includes CLBlast's kernel builds), then policy.warmup times;
// - each round enqueues `number` calls (each followed by its epilogue)
//   after a marker, and its time is from the marker's end to the end of
//   the round's last event, divided by `number`: the library's commands
//   and the gaps between them, as the library is called (a kernel trial
//   sums its kernels' event times instead). A library call is never
//   replayed from a command buffer.
// Errors become the measurement's: a library the agent lacks, a routine it
// lacks, or arguments it refuses are INVALID_CONFIG; a failing call is
// RUNTIME_ERROR with the library's status name.
#ifndef TUNEFLEET_MEASURE_LIBRARY_TRIAL_H_
#define TUNEFLEET_MEASURE_LIBRARY_TRIAL_H_

#include <vector>

#include "absl/status/statusor.h"
#include "library_backends/library.h"
#include "measure/workload_buffers.h"
#include "tunefleet/v1/common.pb.h"

namespace tunefleet::measure {

// Whether `launch` is a library call with no kernel after it: nothing to
// build, no NDRange to check.
bool IsLibraryOnly(const tunefleet::v1::KernelLaunch& launch);

// The call's arguments: buffers by name from `state` (with their dtype and
// element count), i32/u32 as integers, f32 as floats. Errors:
// INVALID_ARGUMENT naming an unknown buffer or an argument of another kind
// (local_bytes, image).
absl::StatusOr<std::vector<library_backends::LibraryArg>> ResolveLibraryArgs(
    const tunefleet::v1::LibraryCall& call, const WorkloadState& state);

}  // namespace tunefleet::measure

#endif  // TUNEFLEET_MEASURE_LIBRARY_TRIAL_H_
