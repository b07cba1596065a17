#include "opencl/opencl_loader.h"

#include <CL/cl.h>
#include <dlfcn.h>

#include <array>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/synchronization/mutex.h"

// Every cl* function that the agent's code calls or takes the address of
// (the release functions of ClHandle). The cl_khr_command_buffer functions
// are not here: opencl.cc looks them up through
// clGetExtensionFunctionAddressForPlatform. A few that the agent does not
// use yet (clEnqueueWriteBuffer, clEnqueueRead/WriteImage, the Retain and
// Get*Info ones) are here so that a change using them needs no edit of this
// file.
#define TUNEFLEET_OPENCL_FUNCTIONS(X)         \
  X(clBuildProgram)                           \
  X(clCreateBuffer)                           \
  X(clCreateCommandQueue)                     \
  X(clCreateContext)                          \
  X(clCreateImage)                            \
  X(clCreateKernel)                           \
  X(clCreateProgramWithBinary)                \
  X(clCreateProgramWithSource)                \
  X(clCreateSubBuffer)                        \
  X(clEnqueueCopyBuffer)                      \
  X(clEnqueueCopyBufferToImage)               \
  X(clEnqueueFillBuffer)                      \
  X(clEnqueueMarkerWithWaitList)              \
  X(clEnqueueNDRangeKernel)                   \
  X(clEnqueueReadBuffer)                      \
  X(clEnqueueReadImage)                       \
  X(clEnqueueWriteBuffer)                     \
  X(clEnqueueWriteImage)                      \
  X(clFinish)                                 \
  X(clFlush)                                  \
  X(clGetCommandQueueInfo)                    \
  X(clGetContextInfo)                         \
  X(clGetDeviceIDs)                           \
  X(clGetDeviceInfo)                          \
  X(clGetEventInfo)                           \
  X(clGetEventProfilingInfo)                  \
  X(clGetExtensionFunctionAddressForPlatform) \
  X(clGetKernelInfo)                          \
  X(clGetKernelWorkGroupInfo)                 \
  X(clGetMemObjectInfo)                       \
  X(clGetPlatformIDs)                         \
  X(clGetPlatformInfo)                        \
  X(clGetProgramBuildInfo)                    \
  X(clGetProgramInfo)                         \
  X(clGetSupportedImageFormats)               \
  X(clReleaseCommandQueue)                    \
  X(clReleaseContext)                         \
  X(clReleaseEvent)                           \
  X(clReleaseKernel)                          \
  X(clReleaseMemObject)                       \
  X(clReleaseProgram)                         \
  X(clRetainCommandQueue)                     \
  X(clRetainContext)                          \
  X(clRetainEvent)                            \
  X(clRetainKernel)                           \
  X(clRetainMemObject)                        \
  X(clRetainProgram)                          \
  X(clSetKernelArg)                           \
  X(clWaitForEvents)

namespace tunefleet::opencl {
namespace {

// The index of each forwarded function in Library::functions.
enum class ClFn : int {
#define TUNEFLEET_CL_ENUM(name) name,
  TUNEFLEET_OPENCL_FUNCTIONS(TUNEFLEET_CL_ENUM)
#undef TUNEFLEET_CL_ENUM
      kCount
};
constexpr int kClFnCount = static_cast<int>(ClFn::kCount);

constexpr std::array<const char*, kClFnCount> kClFnNames = {
#define TUNEFLEET_CL_NAME(name) #name,
    TUNEFLEET_OPENCL_FUNCTIONS(TUNEFLEET_CL_NAME)
#undef TUNEFLEET_CL_NAME
};

// The outcome of the one load of this process.
struct Library {
  absl::Status status;
  std::string name;        // as passed to dlopen; empty when none loaded
  void* handle = nullptr;  // dlopen handle, never closed
  std::array<void*, kClFnCount> functions{};  // nullptr: the library lacks it
};

absl::Mutex load_mutex;
// Set once, under load_mutex, and never changed or freed afterwards (the
// forwarded functions may be called until the process exits, from any
// thread, including from atexit handlers and static destructors).
std::atomic<const Library*> loaded{nullptr};
// One flag per function: its absence was printed.
std::array<std::atomic<bool>, kClFnCount> absence_reported{};

// Tries `names` in order; the first that dlopen()s and has clGetPlatformIDs
// is kept. `source` says where the names came from, for the error.
Library* TryLoad(const std::vector<std::string>& names,
                 const std::string& source) {
  auto* library = new Library;  // process lifetime, see `loaded`
  std::vector<std::string> tried;
  for (const std::string& name : names) {
    dlerror();  // clears an earlier error
    void* handle = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) {
      const char* error = dlerror();
      tried.push_back(
          absl::StrCat(name, " (", error ? error : "dlopen failed", ")"));
      continue;
    }
    if (dlsym(handle, "clGetPlatformIDs") == nullptr) {
      tried.push_back(
          absl::StrCat(name, " (loaded, but has no clGetPlatformIDs)"));
      dlclose(handle);
      continue;
    }
    library->name = name;
    library->handle = handle;
    for (int i = 0; i < kClFnCount; ++i) {
      library->functions[i] = dlsym(handle, kClFnNames[i]);
    }
    return library;
  }
  library->status = absl::NotFoundError(absl::StrCat(
      "cannot load the OpenCL library (", source,
      "); tried: ", absl::StrJoin(tried, "; "),
      ". Name the library with --opencl-library PATH or the environment "
      "variable ",
      kOpenClLibraryEnv));
  return library;
}

// The library of this process, loaded on the first call (`explicit_path`
// as LoadOpenCL() takes it).
const Library& Load(const std::string& explicit_path) {
  if (const Library* done = loaded.load(std::memory_order_acquire)) {
    return *done;
  }
  absl::MutexLock lock(&load_mutex);
  if (const Library* done = loaded.load(std::memory_order_acquire)) {
    return *done;
  }
  Library* library = nullptr;
  const char* env = std::getenv(kOpenClLibraryEnv);
  if (!explicit_path.empty()) {
    library = TryLoad({explicit_path}, "--opencl-library");
  } else if (env != nullptr && env[0] != '\0') {
    library = TryLoad({env}, kOpenClLibraryEnv);
  } else {
    library = TryLoad(DefaultOpenClLibraries(),
                      absl::StrCat("neither --opencl-library nor ",
                                   kOpenClLibraryEnv, " is set"));
  }
  loaded.store(library, std::memory_order_release);
  return *library;
}

// The loaded library's `id`, cast to the type of its declaration in CL/cl.h;
// nullptr when no library loads or it lacks the function (printed once).
template <typename Fn>
Fn Function(ClFn id) {
  const Library& library = Load("");
  const int i = static_cast<int>(id);
  void* fn = library.functions[i];
  if (fn == nullptr && !absence_reported[i].exchange(true)) {
    const std::string why = library.status.ok()
                                ? absl::StrCat("not in ", library.name)
                                : std::string(library.status.message());
    std::fprintf(stderr,
                 "tunefleet-agent: OpenCL function %s is not available (%s); "
                 "its calls fail with CL_INVALID_OPERATION\n",
                 kClFnNames[i], why.c_str());
  }
  return reinterpret_cast<Fn>(fn);
}

}  // namespace

std::vector<std::string> DefaultOpenClLibraries() {
  return {"libOpenCL.so.1", "libOpenCL.so", "/vendor/lib64/libOpenCL.so",
          "/system/vendor/lib64/libOpenCL.so", "/system/lib64/libOpenCL.so"};
}

absl::Status LoadOpenCL(const std::string& explicit_path) {
  const Library& library = Load(explicit_path);
  if (library.status.ok() && !explicit_path.empty() &&
      library.name != explicit_path) {
    return absl::FailedPreconditionError(
        absl::StrCat("OpenCL is already loaded from ", library.name,
                     "; cannot load ", explicit_path, " as well"));
  }
  return library.status;
}

std::string LoadedOpenClLibrary() {
  const Library* library = loaded.load(std::memory_order_acquire);
  return library != nullptr ? library->name : "";
}

std::vector<std::string> MissingOpenClFunctions() {
  std::vector<std::string> missing;
  const Library* library = loaded.load(std::memory_order_acquire);
  if (library == nullptr || !library->status.ok()) return missing;
  for (int i = 0; i < kClFnCount; ++i) {
    if (library->functions[i] == nullptr) missing.push_back(kClFnNames[i]);
  }
  return missing;
}

}  // namespace tunefleet::opencl

// The forwarding definitions. Each takes the loaded library's function
// (typed as CL/cl.h declares it, so a signature here that differs from the
// header fails to compile) and calls it, or returns CL_INVALID_OPERATION.
#define TUNEFLEET_CL_FN(name)                       \
  ::tunefleet::opencl::Function<decltype(&::name)>( \
      ::tunefleet::opencl::ClFn::name)

// For a function returning cl_int.
#define TUNEFLEET_CL_FORWARD(name, ...)                            \
  do {                                                             \
    auto* fn = TUNEFLEET_CL_FN(name);                              \
    return fn != nullptr ? fn(__VA_ARGS__) : CL_INVALID_OPERATION; \
  } while (false)

// For a function returning an object (nullptr on failure) and its error
// through `errcode_ret` (may be null).
#define TUNEFLEET_CL_FORWARD_CREATE(name, errcode_ret, ...)          \
  do {                                                               \
    auto* fn = TUNEFLEET_CL_FN(name);                                \
    if (fn != nullptr) return fn(__VA_ARGS__);                       \
    if (errcode_ret != nullptr) *errcode_ret = CL_INVALID_OPERATION; \
    return nullptr;                                                  \
  } while (false)

extern "C" {

CL_API_ENTRY cl_int CL_API_CALL clGetPlatformIDs(cl_uint num_entries,
                                                 cl_platform_id* platforms,
                                                 cl_uint* num_platforms) {
  TUNEFLEET_CL_FORWARD(clGetPlatformIDs, num_entries, platforms, num_platforms);
}

CL_API_ENTRY cl_int CL_API_CALL clGetPlatformInfo(
    cl_platform_id platform, cl_platform_info param_name,
    size_t param_value_size, void* param_value, size_t* param_value_size_ret) {
  TUNEFLEET_CL_FORWARD(clGetPlatformInfo, platform, param_name,
                       param_value_size, param_value, param_value_size_ret);
}

CL_API_ENTRY cl_int CL_API_CALL clGetDeviceIDs(cl_platform_id platform,
                                               cl_device_type device_type,
                                               cl_uint num_entries,
                                               cl_device_id* devices,
                                               cl_uint* num_devices) {
  TUNEFLEET_CL_FORWARD(clGetDeviceIDs, platform, device_type, num_entries,
                       devices, num_devices);
}

CL_API_ENTRY cl_int CL_API_CALL clGetDeviceInfo(cl_device_id device,
                                                cl_device_info param_name,
                                                size_t param_value_size,
                                                void* param_value,
                                                size_t* param_value_size_ret) {
  TUNEFLEET_CL_FORWARD(clGetDeviceInfo, device, param_name, param_value_size,
                       param_value, param_value_size_ret);
}

CL_API_ENTRY void* CL_API_CALL clGetExtensionFunctionAddressForPlatform(
    cl_platform_id platform, const char* func_name) {
  auto* fn = TUNEFLEET_CL_FN(clGetExtensionFunctionAddressForPlatform);
  return fn != nullptr ? fn(platform, func_name) : nullptr;
}

CL_API_ENTRY cl_context CL_API_CALL clCreateContext(
    const cl_context_properties* properties, cl_uint num_devices,
    const cl_device_id* devices,
    void(CL_CALLBACK* pfn_notify)(const char* errinfo, const void* private_info,
                                  size_t cb, void* user_data),
    void* user_data, cl_int* errcode_ret) {
  TUNEFLEET_CL_FORWARD_CREATE(clCreateContext, errcode_ret, properties,
                              num_devices, devices, pfn_notify, user_data,
                              errcode_ret);
}

CL_API_ENTRY cl_int CL_API_CALL clGetContextInfo(cl_context context,
                                                 cl_context_info param_name,
                                                 size_t param_value_size,
                                                 void* param_value,
                                                 size_t* param_value_size_ret) {
  TUNEFLEET_CL_FORWARD(clGetContextInfo, context, param_name, param_value_size,
                       param_value, param_value_size_ret);
}

CL_API_ENTRY cl_int CL_API_CALL clRetainContext(cl_context context) {
  TUNEFLEET_CL_FORWARD(clRetainContext, context);
}

CL_API_ENTRY cl_int CL_API_CALL clReleaseContext(cl_context context) {
  TUNEFLEET_CL_FORWARD(clReleaseContext, context);
}

CL_API_ENTRY cl_command_queue CL_API_CALL clCreateCommandQueue(
    cl_context context, cl_device_id device,
    cl_command_queue_properties properties, cl_int* errcode_ret) {
  TUNEFLEET_CL_FORWARD_CREATE(clCreateCommandQueue, errcode_ret, context,
                              device, properties, errcode_ret);
}

CL_API_ENTRY cl_int CL_API_CALL clGetCommandQueueInfo(
    cl_command_queue command_queue, cl_command_queue_info param_name,
    size_t param_value_size, void* param_value, size_t* param_value_size_ret) {
  TUNEFLEET_CL_FORWARD(clGetCommandQueueInfo, command_queue, param_name,
                       param_value_size, param_value, param_value_size_ret);
}

CL_API_ENTRY cl_int CL_API_CALL
clRetainCommandQueue(cl_command_queue command_queue) {
  TUNEFLEET_CL_FORWARD(clRetainCommandQueue, command_queue);
}

CL_API_ENTRY cl_int CL_API_CALL
clReleaseCommandQueue(cl_command_queue command_queue) {
  TUNEFLEET_CL_FORWARD(clReleaseCommandQueue, command_queue);
}

CL_API_ENTRY cl_mem CL_API_CALL clCreateBuffer(cl_context context,
                                               cl_mem_flags flags, size_t size,
                                               void* host_ptr,
                                               cl_int* errcode_ret) {
  TUNEFLEET_CL_FORWARD_CREATE(clCreateBuffer, errcode_ret, context, flags, size,
                              host_ptr, errcode_ret);
}

CL_API_ENTRY cl_mem CL_API_CALL clCreateImage(
    cl_context context, cl_mem_flags flags, const cl_image_format* image_format,
    const cl_image_desc* image_desc, void* host_ptr, cl_int* errcode_ret) {
  TUNEFLEET_CL_FORWARD_CREATE(clCreateImage, errcode_ret, context, flags,
                              image_format, image_desc, host_ptr, errcode_ret);
}

CL_API_ENTRY cl_mem CL_API_CALL clCreateSubBuffer(
    cl_mem buffer, cl_mem_flags flags, cl_buffer_create_type buffer_create_type,
    const void* buffer_create_info, cl_int* errcode_ret) {
  TUNEFLEET_CL_FORWARD_CREATE(clCreateSubBuffer, errcode_ret, buffer, flags,
                              buffer_create_type, buffer_create_info,
                              errcode_ret);
}

CL_API_ENTRY cl_int CL_API_CALL clGetMemObjectInfo(
    cl_mem memobj, cl_mem_info param_name, size_t param_value_size,
    void* param_value, size_t* param_value_size_ret) {
  TUNEFLEET_CL_FORWARD(clGetMemObjectInfo, memobj, param_name, param_value_size,
                       param_value, param_value_size_ret);
}

CL_API_ENTRY cl_int CL_API_CALL clGetSupportedImageFormats(
    cl_context context, cl_mem_flags flags, cl_mem_object_type image_type,
    cl_uint num_entries, cl_image_format* image_formats,
    cl_uint* num_image_formats) {
  TUNEFLEET_CL_FORWARD(clGetSupportedImageFormats, context, flags, image_type,
                       num_entries, image_formats, num_image_formats);
}

CL_API_ENTRY cl_int CL_API_CALL clRetainMemObject(cl_mem memobj) {
  TUNEFLEET_CL_FORWARD(clRetainMemObject, memobj);
}

CL_API_ENTRY cl_int CL_API_CALL clReleaseMemObject(cl_mem memobj) {
  TUNEFLEET_CL_FORWARD(clReleaseMemObject, memobj);
}

CL_API_ENTRY cl_program CL_API_CALL clCreateProgramWithSource(
    cl_context context, cl_uint count, const char** strings,
    const size_t* lengths, cl_int* errcode_ret) {
  TUNEFLEET_CL_FORWARD_CREATE(clCreateProgramWithSource, errcode_ret, context,
                              count, strings, lengths, errcode_ret);
}

CL_API_ENTRY cl_program CL_API_CALL clCreateProgramWithBinary(
    cl_context context, cl_uint num_devices, const cl_device_id* device_list,
    const size_t* lengths, const unsigned char** binaries,
    cl_int* binary_status, cl_int* errcode_ret) {
  TUNEFLEET_CL_FORWARD_CREATE(clCreateProgramWithBinary, errcode_ret, context,
                              num_devices, device_list, lengths, binaries,
                              binary_status, errcode_ret);
}

CL_API_ENTRY cl_int CL_API_CALL clRetainProgram(cl_program program) {
  TUNEFLEET_CL_FORWARD(clRetainProgram, program);
}

CL_API_ENTRY cl_int CL_API_CALL clReleaseProgram(cl_program program) {
  TUNEFLEET_CL_FORWARD(clReleaseProgram, program);
}

CL_API_ENTRY cl_int CL_API_CALL clBuildProgram(
    cl_program program, cl_uint num_devices, const cl_device_id* device_list,
    const char* options,
    void(CL_CALLBACK* pfn_notify)(cl_program program, void* user_data),
    void* user_data) {
  TUNEFLEET_CL_FORWARD(clBuildProgram, program, num_devices, device_list,
                       options, pfn_notify, user_data);
}

CL_API_ENTRY cl_int CL_API_CALL clGetProgramInfo(cl_program program,
                                                 cl_program_info param_name,
                                                 size_t param_value_size,
                                                 void* param_value,
                                                 size_t* param_value_size_ret) {
  TUNEFLEET_CL_FORWARD(clGetProgramInfo, program, param_name, param_value_size,
                       param_value, param_value_size_ret);
}

CL_API_ENTRY cl_int CL_API_CALL clGetProgramBuildInfo(
    cl_program program, cl_device_id device, cl_program_build_info param_name,
    size_t param_value_size, void* param_value, size_t* param_value_size_ret) {
  TUNEFLEET_CL_FORWARD(clGetProgramBuildInfo, program, device, param_name,
                       param_value_size, param_value, param_value_size_ret);
}

CL_API_ENTRY cl_kernel CL_API_CALL clCreateKernel(cl_program program,
                                                  const char* kernel_name,
                                                  cl_int* errcode_ret) {
  TUNEFLEET_CL_FORWARD_CREATE(clCreateKernel, errcode_ret, program, kernel_name,
                              errcode_ret);
}

CL_API_ENTRY cl_int CL_API_CALL clRetainKernel(cl_kernel kernel) {
  TUNEFLEET_CL_FORWARD(clRetainKernel, kernel);
}

CL_API_ENTRY cl_int CL_API_CALL clReleaseKernel(cl_kernel kernel) {
  TUNEFLEET_CL_FORWARD(clReleaseKernel, kernel);
}

CL_API_ENTRY cl_int CL_API_CALL clSetKernelArg(cl_kernel kernel,
                                               cl_uint arg_index,
                                               size_t arg_size,
                                               const void* arg_value) {
  TUNEFLEET_CL_FORWARD(clSetKernelArg, kernel, arg_index, arg_size, arg_value);
}

CL_API_ENTRY cl_int CL_API_CALL clGetKernelInfo(cl_kernel kernel,
                                                cl_kernel_info param_name,
                                                size_t param_value_size,
                                                void* param_value,
                                                size_t* param_value_size_ret) {
  TUNEFLEET_CL_FORWARD(clGetKernelInfo, kernel, param_name, param_value_size,
                       param_value, param_value_size_ret);
}

CL_API_ENTRY cl_int CL_API_CALL clGetKernelWorkGroupInfo(
    cl_kernel kernel, cl_device_id device, cl_kernel_work_group_info param_name,
    size_t param_value_size, void* param_value, size_t* param_value_size_ret) {
  TUNEFLEET_CL_FORWARD(clGetKernelWorkGroupInfo, kernel, device, param_name,
                       param_value_size, param_value, param_value_size_ret);
}

CL_API_ENTRY cl_int CL_API_CALL clWaitForEvents(cl_uint num_events,
                                                const cl_event* event_list) {
  TUNEFLEET_CL_FORWARD(clWaitForEvents, num_events, event_list);
}

CL_API_ENTRY cl_int CL_API_CALL clGetEventInfo(cl_event event,
                                               cl_event_info param_name,
                                               size_t param_value_size,
                                               void* param_value,
                                               size_t* param_value_size_ret) {
  TUNEFLEET_CL_FORWARD(clGetEventInfo, event, param_name, param_value_size,
                       param_value, param_value_size_ret);
}

CL_API_ENTRY cl_int CL_API_CALL clGetEventProfilingInfo(
    cl_event event, cl_profiling_info param_name, size_t param_value_size,
    void* param_value, size_t* param_value_size_ret) {
  TUNEFLEET_CL_FORWARD(clGetEventProfilingInfo, event, param_name,
                       param_value_size, param_value, param_value_size_ret);
}

CL_API_ENTRY cl_int CL_API_CALL clRetainEvent(cl_event event) {
  TUNEFLEET_CL_FORWARD(clRetainEvent, event);
}

CL_API_ENTRY cl_int CL_API_CALL clReleaseEvent(cl_event event) {
  TUNEFLEET_CL_FORWARD(clReleaseEvent, event);
}

CL_API_ENTRY cl_int CL_API_CALL clFlush(cl_command_queue command_queue) {
  TUNEFLEET_CL_FORWARD(clFlush, command_queue);
}

CL_API_ENTRY cl_int CL_API_CALL clFinish(cl_command_queue command_queue) {
  TUNEFLEET_CL_FORWARD(clFinish, command_queue);
}

CL_API_ENTRY cl_int CL_API_CALL
clEnqueueCopyBuffer(cl_command_queue command_queue, cl_mem src_buffer,
                    cl_mem dst_buffer, size_t src_offset, size_t dst_offset,
                    size_t size, cl_uint num_events_in_wait_list,
                    const cl_event* event_wait_list, cl_event* event) {
  TUNEFLEET_CL_FORWARD(clEnqueueCopyBuffer, command_queue, src_buffer,
                       dst_buffer, src_offset, dst_offset, size,
                       num_events_in_wait_list, event_wait_list, event);
}

CL_API_ENTRY cl_int CL_API_CALL clEnqueueReadBuffer(
    cl_command_queue command_queue, cl_mem buffer, cl_bool blocking_read,
    size_t offset, size_t size, void* ptr, cl_uint num_events_in_wait_list,
    const cl_event* event_wait_list, cl_event* event) {
  TUNEFLEET_CL_FORWARD(clEnqueueReadBuffer, command_queue, buffer,
                       blocking_read, offset, size, ptr,
                       num_events_in_wait_list, event_wait_list, event);
}

CL_API_ENTRY cl_int CL_API_CALL
clEnqueueWriteBuffer(cl_command_queue command_queue, cl_mem buffer,
                     cl_bool blocking_write, size_t offset, size_t size,
                     const void* ptr, cl_uint num_events_in_wait_list,
                     const cl_event* event_wait_list, cl_event* event) {
  TUNEFLEET_CL_FORWARD(clEnqueueWriteBuffer, command_queue, buffer,
                       blocking_write, offset, size, ptr,
                       num_events_in_wait_list, event_wait_list, event);
}

CL_API_ENTRY cl_int CL_API_CALL
clEnqueueFillBuffer(cl_command_queue command_queue, cl_mem buffer,
                    const void* pattern, size_t pattern_size, size_t offset,
                    size_t size, cl_uint num_events_in_wait_list,
                    const cl_event* event_wait_list, cl_event* event) {
  TUNEFLEET_CL_FORWARD(clEnqueueFillBuffer, command_queue, buffer, pattern,
                       pattern_size, offset, size, num_events_in_wait_list,
                       event_wait_list, event);
}

CL_API_ENTRY cl_int CL_API_CALL clEnqueueCopyBufferToImage(
    cl_command_queue command_queue, cl_mem src_buffer, cl_mem dst_image,
    size_t src_offset, const size_t* dst_origin, const size_t* region,
    cl_uint num_events_in_wait_list, const cl_event* event_wait_list,
    cl_event* event) {
  TUNEFLEET_CL_FORWARD(clEnqueueCopyBufferToImage, command_queue, src_buffer,
                       dst_image, src_offset, dst_origin, region,
                       num_events_in_wait_list, event_wait_list, event);
}

CL_API_ENTRY cl_int CL_API_CALL clEnqueueReadImage(
    cl_command_queue command_queue, cl_mem image, cl_bool blocking_read,
    const size_t* origin, const size_t* region, size_t row_pitch,
    size_t slice_pitch, void* ptr, cl_uint num_events_in_wait_list,
    const cl_event* event_wait_list, cl_event* event) {
  TUNEFLEET_CL_FORWARD(clEnqueueReadImage, command_queue, image, blocking_read,
                       origin, region, row_pitch, slice_pitch, ptr,
                       num_events_in_wait_list, event_wait_list, event);
}

CL_API_ENTRY cl_int CL_API_CALL clEnqueueWriteImage(
    cl_command_queue command_queue, cl_mem image, cl_bool blocking_write,
    const size_t* origin, const size_t* region, size_t input_row_pitch,
    size_t input_slice_pitch, const void* ptr, cl_uint num_events_in_wait_list,
    const cl_event* event_wait_list, cl_event* event) {
  TUNEFLEET_CL_FORWARD(clEnqueueWriteImage, command_queue, image,
                       blocking_write, origin, region, input_row_pitch,
                       input_slice_pitch, ptr, num_events_in_wait_list,
                       event_wait_list, event);
}

CL_API_ENTRY cl_int CL_API_CALL clEnqueueNDRangeKernel(
    cl_command_queue command_queue, cl_kernel kernel, cl_uint work_dim,
    const size_t* global_work_offset, const size_t* global_work_size,
    const size_t* local_work_size, cl_uint num_events_in_wait_list,
    const cl_event* event_wait_list, cl_event* event) {
  TUNEFLEET_CL_FORWARD(clEnqueueNDRangeKernel, command_queue, kernel, work_dim,
                       global_work_offset, global_work_size, local_work_size,
                       num_events_in_wait_list, event_wait_list, event);
}

CL_API_ENTRY cl_int CL_API_CALL clEnqueueMarkerWithWaitList(
    cl_command_queue command_queue, cl_uint num_events_in_wait_list,
    const cl_event* event_wait_list, cl_event* event) {
  TUNEFLEET_CL_FORWARD(clEnqueueMarkerWithWaitList, command_queue,
                       num_events_in_wait_list, event_wait_list, event);
}

}  // extern "C"
