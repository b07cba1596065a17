#include "opencl/build_inspect.h"

#include <chrono>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "kernel_policy/build_options.h"
#include "kernel_policy/source_check.h"

namespace tunefleet::opencl {
namespace {

template <typename T>
uint64_t KernelInfo(cl_kernel kernel, cl_device_id device,
                    cl_kernel_work_group_info what) {
  T value{};
  clGetKernelWorkGroupInfo(kernel, device, what, sizeof(value), &value,
                           nullptr);
  return static_cast<uint64_t>(value);
}

}  // namespace

absl::StatusOr<BuildReport> InspectBuild(const ClDevice& device,
                                         absl::string_view source,
                                         absl::string_view options,
                                         absl::string_view kernel_name) {
  // The same sources and options as a server's trials (docs/SECURITY.md);
  // the log stays whole: it is this machine's user's own.
  if (absl::Status s = kernel_policy::CheckKernelSource(source); !s.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("kernel source refused: ", s.message()));
  }
  if (absl::Status s = kernel_policy::CheckBuildOptions(options); !s.ok()) {
    return s;
  }
  BuildReport report;
  report.options = std::string(options);
  if (absl::StrContains(DeviceString(device.device, CL_DEVICE_EXTENSIONS),
                        "cl_nv_compiler_options")) {
    absl::StrAppend(&report.options, " -cl-nv-verbose");
  }
  cl_int err = CL_SUCCESS;
  const char* text = source.data();
  const size_t length = source.size();
  ClProgram program(
      clCreateProgramWithSource(device.context.get(), 1, &text, &length, &err));
  if (err != CL_SUCCESS) return ClError("clCreateProgramWithSource", err);
  const auto start = std::chrono::steady_clock::now();
  err = clBuildProgram(program.get(), 1, &device.device, report.options.c_str(),
                       nullptr, nullptr);
  report.compile_ms = std::chrono::duration<double, std::milli>(
                          std::chrono::steady_clock::now() - start)
                          .count();
  report.build_log = BuildLog(program.get(), device.device, size_t{1} << 20);
  if (err != CL_SUCCESS) {
    return absl::InvalidArgumentError(absl::StrCat(
        "build failed (", ClErrorName(err), "):\n", report.build_log));
  }
  absl::StatusOr<std::string> binary = ProgramBinary(program.get());
  if (!binary.ok()) return absl::InternalError(binary.status().message());
  report.binary = *std::move(binary);
  const std::string name(kernel_name);
  ClKernel kernel(clCreateKernel(program.get(), name.c_str(), &err));
  if (err != CL_SUCCESS) {
    return absl::InvalidArgumentError(
        absl::StrCat("clCreateKernel(", name, "): ", ClErrorName(err)));
  }
  cl_device_id d = device.device;
  report.work_group_size =
      KernelInfo<size_t>(kernel.get(), d, CL_KERNEL_WORK_GROUP_SIZE);
  report.private_mem_bytes =
      KernelInfo<cl_ulong>(kernel.get(), d, CL_KERNEL_PRIVATE_MEM_SIZE);
  report.local_mem_bytes =
      KernelInfo<cl_ulong>(kernel.get(), d, CL_KERNEL_LOCAL_MEM_SIZE);
  report.preferred_multiple = KernelInfo<size_t>(
      kernel.get(), d, CL_KERNEL_PREFERRED_WORK_GROUP_SIZE_MULTIPLE);
  return report;
}

PtxCounts CountPtx(absl::string_view binary) {
  PtxCounts c;
  if (!absl::StrContains(binary, ".target sm_")) return c;
  for (absl::string_view line : absl::StrSplit(binary, '\n')) {
    line = absl::StripLeadingAsciiWhitespace(line);
    if (absl::ConsumePrefix(&line, "ld.shared.")) {
      if (absl::StartsWith(line, "v4.")) {
        ++c.shared_loads_v4;
      } else if (absl::StartsWith(line, "v2.")) {
        ++c.shared_loads_v2;
      } else {
        ++c.shared_loads;
      }
    } else if (absl::StartsWith(line, "ld.global.")) {
      ++(absl::StrContains(line.substr(0, 24), ".v4.") ? c.global_loads_v4
                                                       : c.global_loads);
    } else if (absl::StartsWith(line, "ld.local.") ||
               absl::StartsWith(line, "st.local.")) {
      ++c.local_accesses;
    } else if (absl::StartsWith(line, "fma.rn.f32")) {
      ++c.fmas;
    } else if (absl::StartsWith(line, "bar.sync") ||
               absl::StartsWith(line, "barrier.sync")) {
      ++c.barriers;
    }
  }
  return c;
}

}  // namespace tunefleet::opencl
