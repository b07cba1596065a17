// What a task learns of its kernels' work-group limit from its results
// (issue 36: on NVIDIA's OpenCL a fifth of a model's trials went to
// work-groups its compiler refused). A compiled kernel allows at most
// CL_KERNEL_WORK_GROUP_SIZE work-items per work-group (OpenCL 3.0 spec,
// section 5.9.4, clGetKernelWorkGroupInfo), which falls below the device's
// CL_DEVICE_MAX_WORK_GROUP_SIZE where the kernel needs many registers
// (NVIDIA: 256 of 1024), so the space's constraints, which know only the
// device's limit, keep configs no kernel of the task can launch. The agent
// reports each kernel's limit (Measurement.kernel_work_group_limit) and
// refuses a larger work-group as INVALID_CONFIG without running it.
//
// The rule: once one of the task's configs was refused for its work-group,
// the task's limit is the largest limit any of its kernels reported
// (refused or not), and a config whose work-group is above it is skipped
// without a trial. Taking the largest keeps a config that a kernel with
// fewer registers might still launch whenever any kernel of the task
// showed such room; a task none of whose configs was refused skips
// nothing.
//
//   result (kernel_limit, refused_group) --Observe--> largest_reported_
//                                                      refused_ (once set)
//   proposal's work-group --Over()--> skip (no trial) / dispatch
#ifndef TUNEFLEET_SERVER_WORK_GROUP_LIMIT_H_
#define TUNEFLEET_SERVER_WORK_GROUP_LIMIT_H_

#include <cstdint>

namespace tunefleet::server {

// Not thread-safe: a job's steps own it (one step at a time).
class WorkGroupLimit {
 public:
  // One stored result of the task: `kernel_limit` its
  // Measurement.kernel_work_group_limit (work-items; 0: not reported), and
  // `refused_group` the work-group (work-items) of its config when it was
  // refused as INVALID_CONFIG, else 0. A refusal counts only when that
  // work-group is above the limit its kernel reported (a refusal for local
  // memory does not).
  void Observe(uint64_t kernel_limit, uint64_t refused_group);

  // The task's work-group limit in work-items; 0 while none was learned.
  uint64_t limit() const { return refused_ ? largest_reported_ : 0; }

  // Whether a config whose work-group holds `group` work-items is to be
  // skipped: a limit was learned and the group is above it.
  bool Over(uint64_t group) const { return limit() > 0 && group > limit(); }

 private:
  uint64_t largest_reported_ = 0;
  bool refused_ = false;
};

}  // namespace tunefleet::server

#endif  // TUNEFLEET_SERVER_WORK_GROUP_LIMIT_H_
