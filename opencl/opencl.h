// Thin RAII layer over the OpenCL 1.2 C API for the device agent: owning
// handles, error names, device selection and the device properties that the
// agent reports in Hello (proto/tunefleet/v1/common.proto, DeviceInfo).
#ifndef TUNEFLEET_OPENCL_OPENCL_H_
#define TUNEFLEET_OPENCL_OPENCL_H_

#include <CL/cl.h>
#include <CL/cl_ext.h>

#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "tunefleet/v1/common.pb.h"

namespace tunefleet::opencl {

// Owns one OpenCL object and releases it on destruction. Move-only.
template <typename T, cl_int (*Release)(T)>
class ClHandle {
 public:
  ClHandle() = default;
  explicit ClHandle(T handle) : handle_(handle) {}
  ClHandle(ClHandle&& other) noexcept : handle_(other.handle_) {
    other.handle_ = nullptr;
  }
  ClHandle& operator=(ClHandle&& other) noexcept {
    if (this != &other) {
      Reset();
      handle_ = std::exchange(other.handle_, nullptr);
    }
    return *this;
  }
  ClHandle(const ClHandle&) = delete;
  ClHandle& operator=(const ClHandle&) = delete;
  ~ClHandle() { Reset(); }

  T get() const { return handle_; }
  explicit operator bool() const { return handle_ != nullptr; }
  void Reset() {
    if (handle_ != nullptr) Release(handle_);
    handle_ = nullptr;
  }

 private:
  T handle_ = nullptr;
};

using ClContext = ClHandle<cl_context, clReleaseContext>;
using ClQueue = ClHandle<cl_command_queue, clReleaseCommandQueue>;
using ClProgram = ClHandle<cl_program, clReleaseProgram>;
using ClKernel = ClHandle<cl_kernel, clReleaseKernel>;
using ClMem = ClHandle<cl_mem, clReleaseMemObject>;
using ClEvent = ClHandle<cl_event, clReleaseEvent>;

// The entry points of cl_khr_command_buffer (record a sequence of commands
// once, replay it with one enqueue), read with
// clGetExtensionFunctionAddressForPlatform. Only the calls whose signatures
// are the same in every provisional revision of the extension are used.
struct CommandBufferApi {
  clCreateCommandBufferKHR_fn create = nullptr;
  clCommandNDRangeKernelKHR_fn ndrange_kernel = nullptr;
  clFinalizeCommandBufferKHR_fn finalize = nullptr;
  clEnqueueCommandBufferKHR_fn enqueue = nullptr;
  clReleaseCommandBufferKHR_fn release = nullptr;
};

// The API when `device` lists cl_khr_command_buffer, the platform exports
// every entry point and a queue with `queue_properties` meets the device's
// CL_DEVICE_COMMAND_BUFFER_REQUIRED_QUEUE_PROPERTIES_KHR. Errors:
// UNIMPLEMENTED saying which of these is missing. (cl_qcom_recordable_queues,
// Qualcomm's counterpart on Adreno, is not implemented.)
absl::StatusOr<CommandBufferApi> LoadCommandBufferApi(
    cl_platform_id platform, cl_device_id device,
    cl_command_queue_properties queue_properties);

// Owns one cl_command_buffer_khr; released through the extension's entry
// point. Move-only.
class ClCommandBuffer {
 public:
  ClCommandBuffer() = default;
  ClCommandBuffer(cl_command_buffer_khr handle,
                  clReleaseCommandBufferKHR_fn release)
      : handle_(handle), release_(release) {}
  ClCommandBuffer(ClCommandBuffer&& other) noexcept
      : handle_(std::exchange(other.handle_, nullptr)),
        release_(other.release_) {}
  ClCommandBuffer& operator=(ClCommandBuffer&& other) noexcept {
    if (this != &other) {
      Reset();
      handle_ = std::exchange(other.handle_, nullptr);
      release_ = other.release_;
    }
    return *this;
  }
  ClCommandBuffer(const ClCommandBuffer&) = delete;
  ClCommandBuffer& operator=(const ClCommandBuffer&) = delete;
  ~ClCommandBuffer() { Reset(); }

  cl_command_buffer_khr get() const { return handle_; }
  void Reset() {
    if (handle_ != nullptr && release_ != nullptr) release_(handle_);
    handle_ = nullptr;
  }

 private:
  cl_command_buffer_khr handle_ = nullptr;
  clReleaseCommandBufferKHR_fn release_ = nullptr;
};

// "CL_OUT_OF_RESOURCES" for -5, and so on; "CL_ERROR(<n>)" when unknown.
std::string ClErrorName(cl_int code);

// An error status "<what>: <CL error name>" for a failed OpenCL call.
absl::Status ClError(absl::string_view what, cl_int code);

// A string property of a device or platform, without its terminating NUL
// and trailing blanks; "" when the query fails.
std::string DeviceString(cl_device_id device, cl_device_info param);
std::string PlatformString(cl_platform_id platform, cl_platform_info param);

// The build log of `program` for `device`, cut to `max_bytes` (a note says
// so when cut).
std::string BuildLog(cl_program program, cl_device_id device,
                     size_t max_bytes = 8192);

// CL_PROGRAM_BINARIES of a program built for one device (PTX text on
// NVIDIA, an ELF on PoCL). Errors: FAILED_PRECONDITION when the driver
// reports 0 bytes or more than `max_bytes`; the CL error otherwise.
absl::StatusOr<std::string> ProgramBinary(cl_program program,
                                          uint64_t max_bytes = uint64_t{256}
                                                               << 20);

// One opened device: its context and a profiling-enabled in-order queue.
struct ClDevice {
  cl_platform_id platform = nullptr;
  cl_device_id device = nullptr;
  ClContext context;
  ClQueue queue;
};

// Opens device `device_index` of platform `platform_index` (as clinfo lists
// them). Errors: NOT_FOUND when there is no such platform or device,
// UNAVAILABLE when the context or queue cannot be created.
absl::StatusOr<ClDevice> OpenDevice(int platform_index, int device_index);

// The environment variable whose value, when set and not empty, the agent
// reports as its driver_version instead of CL_DRIVER_VERSION: for tests of
// driver drift and for labs that pin a driver name (docs/DRIVER_DRIFT.md).
inline constexpr char kDriverVersionEnv[] = "TUNEFLEET_AGENT_DRIVER_VERSION";

// The device properties an agent reports (DeviceInfo), read with
// clGetDeviceInfo, and the vendor libraries this agent can call
// (DeviceInfo.libraries, library/registry.h); driver_version as
// kDriverVersionEnv pins it, if set.
tunefleet::v1::DeviceInfo QueryDeviceInfo(cl_platform_id platform,
                                          cl_device_id device);

// The default device key: the device name lowercased, runs of other
// characters than [a-z0-9] turned into one '-', e.g. "mali-g610-r0p0-mp4".
// What the name leaves out is added first:
// - a device of Arm's vendor id (0x13b5, Mali's) or vendor "ARM" that is not
//   a GPU is prefixed with "arm" and its type: PoCL on an Arm CPU
//   ("pthread") is "arm-cpu-pthread";
// - an Adreno whose name has no model number ("QUALCOMM Adreno(TM)") gets
//   the one after "Adreno(TM)" in CL_DEVICE_VERSION: "qualcomm-adreno-tm-540";
// - a Mali GPU whose name has no "MP" gets its core count (compute units) as
//   Arm writes it: "Mali-G610 r0p0" with 4 cores is "mali-g610-r0p0-mp4".
std::string DefaultDeviceKey(const tunefleet::v1::DeviceInfo& info);

}  // namespace tunefleet::opencl

#endif  // TUNEFLEET_OPENCL_OPENCL_H_
