#include "opencl/opencl.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "library_backends/registry.h"

namespace tunefleet::opencl {
namespace {

// A string property from clGetDeviceInfo or clGetPlatformInfo, without
// its terminating NUL and trailing blanks; "" when the query fails.
template <typename Id, typename Param>
std::string InfoString(cl_int (*query)(Id, Param, size_t, void*, size_t*),
                       Id id, Param param) {
  size_t size = 0;
  if (query(id, param, 0, nullptr, &size) != CL_SUCCESS) return "";
  std::string value(size, '\0');
  query(id, param, size, value.data(), nullptr);
  while (!value.empty() && (value.back() == '\0' || value.back() == ' ')) {
    value.pop_back();
  }
  return value;
}

}  // namespace

std::string DeviceString(cl_device_id device, cl_device_info param) {
  return InfoString(&clGetDeviceInfo, device, param);
}

std::string PlatformString(cl_platform_id platform, cl_platform_info param) {
  return InfoString(&clGetPlatformInfo, platform, param);
}

std::string BuildLog(cl_program program, cl_device_id device,
                     size_t max_bytes) {
  size_t size = 0;
  clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, 0, nullptr,
                        &size);
  std::string log(size, '\0');
  clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, size, log.data(),
                        nullptr);
  while (!log.empty() && (log.back() == '\0' || log.back() == '\n')) {
    log.pop_back();
  }
  if (log.size() > max_bytes) {
    log.resize(max_bytes);
    log += "\n[build log truncated]";
  }
  return log;
}

absl::StatusOr<std::string> ProgramBinary(cl_program program,
                                          uint64_t max_bytes) {
  size_t size = 0;
  cl_int err = clGetProgramInfo(program, CL_PROGRAM_BINARY_SIZES, sizeof(size),
                                &size, nullptr);
  if (err != CL_SUCCESS) return ClError("CL_PROGRAM_BINARY_SIZES", err);
  if (size == 0 || size > max_bytes) {
    return absl::FailedPreconditionError(
        absl::StrCat("program binary of ", size, " bytes"));
  }
  std::string binary(size, '\0');
  unsigned char* data = reinterpret_cast<unsigned char*>(binary.data());
  err = clGetProgramInfo(program, CL_PROGRAM_BINARIES, sizeof(data), &data,
                         nullptr);
  if (err != CL_SUCCESS) return ClError("CL_PROGRAM_BINARIES", err);
  return binary;
}

namespace {

template <typename T>
T DeviceValue(cl_device_id device, cl_device_info param) {
  T value{};
  clGetDeviceInfo(device, param, sizeof(T), &value, nullptr);
  return value;
}

// A numeric query of any width (cl_uint, size_t, cl_ulong) as a uint64_t,
// in one call: the driver says how many bytes it wrote. 0 where the driver
// refuses it.
uint64_t DeviceNumber(cl_device_id device, cl_device_info param) {
  unsigned char bytes[sizeof(cl_ulong)] = {};
  size_t size = 0;
  if (clGetDeviceInfo(device, param, sizeof(bytes), bytes, &size) !=
      CL_SUCCESS) {
    return 0;
  }
  if (size == sizeof(cl_uint)) {
    cl_uint value = 0;
    std::memcpy(&value, bytes, sizeof(value));
    return value;
  }
  if (size == sizeof(cl_ulong)) {
    cl_ulong value = 0;
    std::memcpy(&value, bytes, sizeof(value));
    return value;
  }
  return 0;
}

std::string DeviceTypeName(cl_device_type type) {
  if (type & CL_DEVICE_TYPE_GPU) return "GPU";
  if (type & CL_DEVICE_TYPE_CPU) return "CPU";
  if (type & CL_DEVICE_TYPE_ACCELERATOR) return "ACCELERATOR";
  return "OTHER";
}

}  // namespace

std::string ClErrorName(cl_int code) {
  switch (code) {
#define TF_CL_ERROR(name) \
  case name:              \
    return #name;
    TF_CL_ERROR(CL_SUCCESS)
    TF_CL_ERROR(CL_DEVICE_NOT_FOUND)
    TF_CL_ERROR(CL_DEVICE_NOT_AVAILABLE)
    TF_CL_ERROR(CL_COMPILER_NOT_AVAILABLE)
    TF_CL_ERROR(CL_MEM_OBJECT_ALLOCATION_FAILURE)
    TF_CL_ERROR(CL_OUT_OF_RESOURCES)
    TF_CL_ERROR(CL_OUT_OF_HOST_MEMORY)
    TF_CL_ERROR(CL_PROFILING_INFO_NOT_AVAILABLE)
    TF_CL_ERROR(CL_MEM_COPY_OVERLAP)
    TF_CL_ERROR(CL_IMAGE_FORMAT_MISMATCH)
    TF_CL_ERROR(CL_IMAGE_FORMAT_NOT_SUPPORTED)
    TF_CL_ERROR(CL_BUILD_PROGRAM_FAILURE)
    TF_CL_ERROR(CL_MAP_FAILURE)
    TF_CL_ERROR(CL_MISALIGNED_SUB_BUFFER_OFFSET)
    TF_CL_ERROR(CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST)
    TF_CL_ERROR(CL_COMPILE_PROGRAM_FAILURE)
    TF_CL_ERROR(CL_LINKER_NOT_AVAILABLE)
    TF_CL_ERROR(CL_LINK_PROGRAM_FAILURE)
    TF_CL_ERROR(CL_DEVICE_PARTITION_FAILED)
    TF_CL_ERROR(CL_KERNEL_ARG_INFO_NOT_AVAILABLE)
    TF_CL_ERROR(CL_INVALID_VALUE)
    TF_CL_ERROR(CL_INVALID_DEVICE_TYPE)
    TF_CL_ERROR(CL_INVALID_PLATFORM)
    TF_CL_ERROR(CL_INVALID_DEVICE)
    TF_CL_ERROR(CL_INVALID_CONTEXT)
    TF_CL_ERROR(CL_INVALID_QUEUE_PROPERTIES)
    TF_CL_ERROR(CL_INVALID_COMMAND_QUEUE)
    TF_CL_ERROR(CL_INVALID_HOST_PTR)
    TF_CL_ERROR(CL_INVALID_MEM_OBJECT)
    TF_CL_ERROR(CL_INVALID_IMAGE_FORMAT_DESCRIPTOR)
    TF_CL_ERROR(CL_INVALID_IMAGE_SIZE)
    TF_CL_ERROR(CL_INVALID_SAMPLER)
    TF_CL_ERROR(CL_INVALID_BINARY)
    TF_CL_ERROR(CL_INVALID_BUILD_OPTIONS)
    TF_CL_ERROR(CL_INVALID_PROGRAM)
    TF_CL_ERROR(CL_INVALID_PROGRAM_EXECUTABLE)
    TF_CL_ERROR(CL_INVALID_KERNEL_NAME)
    TF_CL_ERROR(CL_INVALID_KERNEL_DEFINITION)
    TF_CL_ERROR(CL_INVALID_KERNEL)
    TF_CL_ERROR(CL_INVALID_ARG_INDEX)
    TF_CL_ERROR(CL_INVALID_ARG_VALUE)
    TF_CL_ERROR(CL_INVALID_ARG_SIZE)
    TF_CL_ERROR(CL_INVALID_KERNEL_ARGS)
    TF_CL_ERROR(CL_INVALID_WORK_DIMENSION)
    TF_CL_ERROR(CL_INVALID_WORK_GROUP_SIZE)
    TF_CL_ERROR(CL_INVALID_WORK_ITEM_SIZE)
    TF_CL_ERROR(CL_INVALID_GLOBAL_OFFSET)
    TF_CL_ERROR(CL_INVALID_EVENT_WAIT_LIST)
    TF_CL_ERROR(CL_INVALID_EVENT)
    TF_CL_ERROR(CL_INVALID_OPERATION)
    TF_CL_ERROR(CL_INVALID_GL_OBJECT)
    TF_CL_ERROR(CL_INVALID_BUFFER_SIZE)
    TF_CL_ERROR(CL_INVALID_MIP_LEVEL)
    TF_CL_ERROR(CL_INVALID_GLOBAL_WORK_SIZE)
    TF_CL_ERROR(CL_INVALID_PROPERTY)
    TF_CL_ERROR(CL_INVALID_IMAGE_DESCRIPTOR)
    TF_CL_ERROR(CL_INVALID_COMPILER_OPTIONS)
    TF_CL_ERROR(CL_INVALID_LINKER_OPTIONS)
    TF_CL_ERROR(CL_INVALID_DEVICE_PARTITION_COUNT)
    TF_CL_ERROR(CL_INVALID_COMMAND_BUFFER_KHR)
    TF_CL_ERROR(CL_INVALID_SYNC_POINT_WAIT_LIST_KHR)
    TF_CL_ERROR(CL_INCOMPATIBLE_COMMAND_QUEUE_KHR)
#undef TF_CL_ERROR
    default:
      return absl::StrCat("CL_ERROR(", code, ")");
  }
}

absl::Status ClError(absl::string_view what, cl_int code) {
  return absl::InternalError(absl::StrCat(what, ": ", ClErrorName(code)));
}

absl::StatusOr<ClDevice> OpenDevice(int platform_index, int device_index) {
  cl_uint num_platforms = 0;
  clGetPlatformIDs(0, nullptr, &num_platforms);
  if (platform_index < 0 ||
      static_cast<cl_uint>(platform_index) >= num_platforms) {
    return absl::NotFoundError(absl::StrCat("OpenCL platform ", platform_index,
                                            " not found (", num_platforms,
                                            " platform(s); see clinfo)"));
  }
  std::vector<cl_platform_id> platforms(num_platforms);
  clGetPlatformIDs(num_platforms, platforms.data(), nullptr);
  cl_platform_id platform = platforms[platform_index];

  cl_uint num_devices = 0;
  clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 0, nullptr, &num_devices);
  if (device_index < 0 || static_cast<cl_uint>(device_index) >= num_devices) {
    return absl::NotFoundError(
        absl::StrCat("OpenCL device ", device_index, " not found on platform ",
                     platform_index, " (", num_devices, " device(s))"));
  }
  std::vector<cl_device_id> devices(num_devices);
  clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, num_devices, devices.data(),
                 nullptr);

  ClDevice out;
  out.platform = platform;
  out.device = devices[device_index];
  cl_int err = CL_SUCCESS;
  out.context = ClContext(
      clCreateContext(nullptr, 1, &out.device, nullptr, nullptr, &err));
  if (err != CL_SUCCESS) {
    return absl::UnavailableError(
        absl::StrCat("clCreateContext: ", ClErrorName(err)));
  }
  out.queue = ClQueue(clCreateCommandQueue(out.context.get(), out.device,
                                           CL_QUEUE_PROFILING_ENABLE, &err));
  if (err != CL_SUCCESS) {
    return absl::UnavailableError(
        absl::StrCat("clCreateCommandQueue: ", ClErrorName(err)));
  }
  return out;
}

tunefleet::v1::DeviceInfo QueryDeviceInfo(cl_platform_id platform,
                                          cl_device_id device) {
  tunefleet::v1::DeviceInfo info;
  info.set_platform_name(PlatformString(platform, CL_PLATFORM_NAME));
  info.set_platform_version(PlatformString(platform, CL_PLATFORM_VERSION));
  info.set_device_name(DeviceString(device, CL_DEVICE_NAME));
  info.set_vendor(DeviceString(device, CL_DEVICE_VENDOR));
  info.set_driver_version(DeviceString(device, CL_DRIVER_VERSION));
  // For tests and for labs that pin a driver name: the version reported in
  // place of the driver's own (docs/DRIVER_DRIFT.md).
  if (const char* pinned = std::getenv(kDriverVersionEnv);
      pinned != nullptr && *pinned != '\0') {
    info.set_driver_version(pinned);
  }
  info.set_device_version(DeviceString(device, CL_DEVICE_VERSION));
  info.set_opencl_c_version(DeviceString(device, CL_DEVICE_OPENCL_C_VERSION));
  info.set_device_type(
      DeviceTypeName(DeviceValue<cl_device_type>(device, CL_DEVICE_TYPE)));
  auto number = [device](cl_device_info param) {
    return DeviceNumber(device, param);
  };
  info.set_vendor_id(number(CL_DEVICE_VENDOR_ID));
  info.set_compute_units(number(CL_DEVICE_MAX_COMPUTE_UNITS));
  info.set_max_clock_mhz(number(CL_DEVICE_MAX_CLOCK_FREQUENCY));
  info.set_max_work_group_size(number(CL_DEVICE_MAX_WORK_GROUP_SIZE));
  info.set_local_mem_bytes(number(CL_DEVICE_LOCAL_MEM_SIZE));
  info.set_global_mem_bytes(number(CL_DEVICE_GLOBAL_MEM_SIZE));
  info.set_max_mem_alloc_bytes(number(CL_DEVICE_MAX_MEM_ALLOC_SIZE));
  info.set_preferred_vector_width_float(
      number(CL_DEVICE_PREFERRED_VECTOR_WIDTH_FLOAT));
  info.set_native_vector_width_float(
      number(CL_DEVICE_NATIVE_VECTOR_WIDTH_FLOAT));
  info.set_address_bits(number(CL_DEVICE_ADDRESS_BITS));
  info.set_local_mem_is_global(
      DeviceValue<cl_device_local_mem_type>(device, CL_DEVICE_LOCAL_MEM_TYPE) ==
      CL_GLOBAL);
  const cl_uint dims =
      DeviceValue<cl_uint>(device, CL_DEVICE_MAX_WORK_ITEM_DIMENSIONS);
  std::vector<size_t> sizes(dims);
  clGetDeviceInfo(device, CL_DEVICE_MAX_WORK_ITEM_SIZES,
                  sizes.size() * sizeof(size_t), sizes.data(), nullptr);
  for (size_t s : sizes) info.add_max_work_item_sizes(s);
  for (absl::string_view ext :
       absl::StrSplit(DeviceString(device, CL_DEVICE_EXTENSIONS), ' ',
                      absl::SkipEmpty())) {
    info.add_extensions(std::string(ext));
  }
  // The image limits: zero sizes on a device without image support, and
  // the pitch alignment only where cl_khr_image2d_from_buffer or OpenCL
  // 2.0 defines it (a query the driver refuses leaves it 0).
  info.set_image_support(
      DeviceValue<cl_bool>(device, CL_DEVICE_IMAGE_SUPPORT) == CL_TRUE);
  if (info.image_support()) {
    info.set_image2d_max_width(number(CL_DEVICE_IMAGE2D_MAX_WIDTH));
    info.set_image2d_max_height(number(CL_DEVICE_IMAGE2D_MAX_HEIGHT));
    info.set_image_max_buffer_size(number(CL_DEVICE_IMAGE_MAX_BUFFER_SIZE));
    info.set_image_pitch_alignment(number(CL_DEVICE_IMAGE_PITCH_ALIGNMENT_KHR));
  }
  // The vendor libraries this agent can call (library/registry.h).
  for (std::string& name :
       library_backends::LibraryRegistry::Load(info).Describe()) {
    info.add_libraries(std::move(name));
  }
  return info;
}

absl::StatusOr<CommandBufferApi> LoadCommandBufferApi(
    cl_platform_id platform, cl_device_id device,
    cl_command_queue_properties queue_properties) {
  bool listed = false;
  for (absl::string_view ext :
       absl::StrSplit(DeviceString(device, CL_DEVICE_EXTENSIONS), ' ',
                      absl::SkipEmpty())) {
    listed = listed || ext == "cl_khr_command_buffer";
  }
  if (!listed) {
    return absl::UnimplementedError(
        "the device does not list cl_khr_command_buffer");
  }
  cl_command_queue_properties required = 0;
  if (clGetDeviceInfo(device,
                      CL_DEVICE_COMMAND_BUFFER_REQUIRED_QUEUE_PROPERTIES_KHR,
                      sizeof(required), &required, nullptr) != CL_SUCCESS) {
    required = 0;
  }
  if ((required & ~queue_properties) != 0) {
    return absl::UnimplementedError(absl::StrCat(
        "command buffers need queue properties 0x", absl::Hex(required),
        "; the measurement queue has 0x", absl::Hex(queue_properties)));
  }
  CommandBufferApi api;
  auto load = [platform](const char* name) {
    return clGetExtensionFunctionAddressForPlatform(platform, name);
  };
  api.create = reinterpret_cast<clCreateCommandBufferKHR_fn>(
      load("clCreateCommandBufferKHR"));
  api.ndrange_kernel = reinterpret_cast<clCommandNDRangeKernelKHR_fn>(
      load("clCommandNDRangeKernelKHR"));
  api.finalize = reinterpret_cast<clFinalizeCommandBufferKHR_fn>(
      load("clFinalizeCommandBufferKHR"));
  api.enqueue = reinterpret_cast<clEnqueueCommandBufferKHR_fn>(
      load("clEnqueueCommandBufferKHR"));
  api.release = reinterpret_cast<clReleaseCommandBufferKHR_fn>(
      load("clReleaseCommandBufferKHR"));
  if (api.create == nullptr || api.ndrange_kernel == nullptr ||
      api.finalize == nullptr || api.enqueue == nullptr ||
      api.release == nullptr) {
    return absl::UnimplementedError(
        "the platform does not export the cl_khr_command_buffer entry points");
  }
  return api;
}

namespace {

bool HasDigit(absl::string_view s) {
  return std::any_of(s.begin(), s.end(), [](char c) {
    return std::isdigit(static_cast<unsigned char>(c)) != 0;
  });
}

// The device name with what the key needs and the name leaves out.
std::string KeyName(const tunefleet::v1::DeviceInfo& info) {
  std::string name = info.device_name();
  const bool gpu = info.device_type() == "GPU";
  // Arm's vendor id is Mali's, and PoCL on an Arm CPU reports it too (vendor
  // "ARM", device "pthread"): an Arm device that is not a GPU gets "arm" and
  // its type in the key, so that its records never read as a Mali GPU's.
  constexpr uint32_t kArmVendorId = 0x13b5;
  const bool arm = info.vendor_id() == kArmVendorId ||
                   absl::AsciiStrToLower(info.vendor()) == "arm";
  if (arm && !info.device_type().empty() && !gpu) {
    return absl::StrCat("arm ", info.device_type(), " ", name);
  }
  // Many Adreno drivers name every GPU "QUALCOMM Adreno(TM)"; the model is
  // in CL_DEVICE_VERSION ("OpenCL 2.0 Adreno(TM) 540").
  constexpr absl::string_view kAdreno = "Adreno(TM)";
  const absl::string_view version = info.device_version();
  const size_t at = version.find(kAdreno);
  if (absl::StrContains(name, "Adreno") && !HasDigit(name) &&
      at != absl::string_view::npos) {
    absl::string_view model =
        absl::StripLeadingAsciiWhitespace(version.substr(at + kAdreno.size()));
    model = model.substr(0, model.find(' '));
    if (HasDigit(model)) absl::StrAppend(&name, " ", model);
  }
  // One Mali name covers several core counts (Mali-G78 MP14 and MP20) and
  // drivers leave the count out: it goes into the key (Arm's "MPn").
  if (arm && gpu && absl::StartsWithIgnoreCase(name, "Mali") &&
      !absl::StrContains(name, "MP") && info.compute_units() > 0) {
    absl::StrAppend(&name, " MP", info.compute_units());
  }
  return name;
}

}  // namespace

std::string DefaultDeviceKey(const tunefleet::v1::DeviceInfo& info) {
  const std::string name = KeyName(info);
  std::string key;
  bool dash = false;
  for (char c : name) {
    const unsigned char u = static_cast<unsigned char>(c);
    if (std::isalnum(u)) {
      if (dash && !key.empty()) key += '-';
      key += static_cast<char>(std::tolower(u));
      dash = false;
    } else {
      dash = true;
    }
  }
  return key.empty() ? "opencl-device" : key;
}

}  // namespace tunefleet::opencl
