// What the OpenCL compiler made of one kernel: its build log, the program
// binary the driver returns (PTX text on NVIDIA, an ELF on PoCL) and the
// kernel's resource use, for people who write or tune templates
// (`tunefleet measure --inspect`).
#ifndef TUNEFLEET_OPENCL_BUILD_INSPECT_H_
#define TUNEFLEET_OPENCL_BUILD_INSPECT_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "opencl/opencl.h"

namespace tunefleet::opencl {

// One built kernel as the driver reports it (clGetProgramBuildInfo,
// clGetProgramInfo(CL_PROGRAM_BINARIES), clGetKernelWorkGroupInfo).
struct BuildReport {
  std::string options;              // build options used, extra ones included
  std::string build_log;            // compiler output; ptxas figures on NVIDIA
  std::string binary;               // CL_PROGRAM_BINARIES of the device
  uint64_t work_group_size = 0;     // CL_KERNEL_WORK_GROUP_SIZE
  uint64_t private_mem_bytes = 0;   // CL_KERNEL_PRIVATE_MEM_SIZE
  uint64_t local_mem_bytes = 0;     // CL_KERNEL_LOCAL_MEM_SIZE
  uint64_t preferred_multiple = 0;  // ..._PREFERRED_WORK_GROUP_SIZE_MULTIPLE
  double compile_ms = 0;            // host wall time of clBuildProgram
};

// Builds `source` with `options` on `device` and reports on kernel
// `kernel_name`. Where the device has cl_nv_compiler_options, adds
// -cl-nv-verbose so that the log lists registers and spill bytes per kernel.
// Errors: INVALID_ARGUMENT with the build log when the source does not
// compile or has no such kernel; INTERNAL for other OpenCL failures.
absl::StatusOr<BuildReport> InspectBuild(const ClDevice& device,
                                         absl::string_view source,
                                         absl::string_view options,
                                         absl::string_view kernel_name);

// Counts of the instructions that matter for a GEMM-like kernel in PTX text
// (NVIDIA's binary): vector and scalar shared-memory loads, local-memory
// (spill) accesses, FMAs, barriers. All 0 for non-PTX binaries.
struct PtxCounts {
  int shared_loads_v4 = 0;  // ld.shared.v4.*
  int shared_loads_v2 = 0;  // ld.shared.v2.*
  int shared_loads = 0;     // scalar ld.shared.*
  int global_loads_v4 = 0;  // ld.global*.v4.*
  int global_loads = 0;     // other ld.global*
  int local_accesses = 0;   // ld.local / st.local: register spills
  int fmas = 0;             // fma.rn.f32
  int barriers = 0;         // bar.sync / barrier.sync
};
PtxCounts CountPtx(absl::string_view binary);

}  // namespace tunefleet::opencl

#endif  // TUNEFLEET_OPENCL_BUILD_INSPECT_H_
