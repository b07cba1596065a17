#include "opencl/opencl_loader.h"

#include <CL/cl.h>
#include <dlfcn.h>

#include <algorithm>
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
// (the release functions of ClHandle), one entry each:
//   X(KIND, return type, name, (parameters), (arguments))
// with the parameters as CL/cl.h declares them (a definition that differs
// from the header's declaration fails to compile) and KIND what a call
// returns when the library lacks the function:
//   STATUS   CL_INVALID_OPERATION;
//   OBJECT   nullptr, with CL_INVALID_OPERATION in *errcode_ret (may be
//            null);
//   ADDRESS  nullptr.
// The cl_khr_command_buffer functions are not here: opencl.cc looks them
// up through clGetExtensionFunctionAddressForPlatform. A few that the agent
// does not use yet (clEnqueueWriteBuffer, clEnqueueRead/WriteImage, the
// Retain and Get*Info ones) are here so that a change using them needs no
// edit of this file. In the order of CL/cl.h.
//
// Shorthands for the entries of one form: clGet<What>Info, for handles of
// `type` (and a device) and parameter names of `info_type`; clEnqueue<What>,
// whose parameters are a queue, `params` and an event wait list;
// clRetain<Object> and clRelease<Object>, for handles of `type`.
// clang-format off
#define TUNEFLEET_CL_GET_INFO(X, What, type, info_type)                       \
  X(STATUS, cl_int, clGet##What##Info,                                        \
    (type object, info_type param_name, size_t param_value_size,              \
     void* param_value, size_t* param_value_size_ret),                        \
    (object, param_name, param_value_size, param_value,                       \
     param_value_size_ret))
#define TUNEFLEET_CL_GET_DEVICE_INFO(X, What, type, info_type)                \
  X(STATUS, cl_int, clGet##What##Info,                                        \
    (type object, cl_device_id device, info_type param_name,                  \
     size_t param_value_size, void* param_value,                              \
     size_t* param_value_size_ret),                                           \
    (object, device, param_name, param_value_size, param_value,               \
     param_value_size_ret))
#define TUNEFLEET_CL_UNPAREN(...) __VA_ARGS__
#define TUNEFLEET_CL_ENQUEUE(X, What, params, args)                           \
  X(STATUS, cl_int, clEnqueue##What,                                          \
    (cl_command_queue command_queue, TUNEFLEET_CL_UNPAREN params,             \
     cl_uint num_events_in_wait_list, const cl_event* event_wait_list,        \
     cl_event* event),                                                        \
    (command_queue, TUNEFLEET_CL_UNPAREN args, num_events_in_wait_list,       \
     event_wait_list, event))
#define TUNEFLEET_CL_RETAIN_RELEASE(X, type, Object)                          \
  X(STATUS, cl_int, clRetain##Object, (type object), (object))                \
  X(STATUS, cl_int, clRelease##Object, (type object), (object))
#define TUNEFLEET_OPENCL_FUNCTIONS(X)                                         \
  X(STATUS, cl_int, clGetPlatformIDs,                                         \
    (cl_uint num_entries, cl_platform_id* platforms, cl_uint* num_platforms), \
    (num_entries, platforms, num_platforms))                                  \
  TUNEFLEET_CL_GET_INFO(X, Platform, cl_platform_id, cl_platform_info)        \
  X(STATUS, cl_int, clGetDeviceIDs,                                           \
    (cl_platform_id platform, cl_device_type device_type,                     \
     cl_uint num_entries, cl_device_id* devices, cl_uint* num_devices),       \
    (platform, device_type, num_entries, devices, num_devices))               \
  TUNEFLEET_CL_GET_INFO(X, Device, cl_device_id, cl_device_info)              \
  X(ADDRESS, void*, clGetExtensionFunctionAddressForPlatform,                 \
    (cl_platform_id platform, const char* func_name),                         \
    (platform, func_name))                                                    \
  X(OBJECT, cl_context, clCreateContext,                                      \
    (const cl_context_properties* properties, cl_uint num_devices,            \
     const cl_device_id* devices,                                             \
     void(CL_CALLBACK* pfn_notify)(const char* errinfo,                       \
                                   const void* private_info, size_t cb,       \
                                   void* user_data),                          \
     void* user_data, cl_int* errcode_ret),                                   \
    (properties, num_devices, devices, pfn_notify, user_data, errcode_ret))   \
  TUNEFLEET_CL_GET_INFO(X, Context, cl_context, cl_context_info)              \
  TUNEFLEET_CL_RETAIN_RELEASE(X, cl_context, Context)                         \
  X(OBJECT, cl_command_queue, clCreateCommandQueue,                           \
    (cl_context context, cl_device_id device,                                 \
     cl_command_queue_properties properties, cl_int* errcode_ret),            \
    (context, device, properties, errcode_ret))                               \
  TUNEFLEET_CL_GET_INFO(X, CommandQueue, cl_command_queue,                    \
                        cl_command_queue_info)                                \
  TUNEFLEET_CL_RETAIN_RELEASE(X, cl_command_queue, CommandQueue)              \
  X(OBJECT, cl_mem, clCreateBuffer,                                           \
    (cl_context context, cl_mem_flags flags, size_t size, void* host_ptr,     \
     cl_int* errcode_ret),                                                    \
    (context, flags, size, host_ptr, errcode_ret))                            \
  X(OBJECT, cl_mem, clCreateImage,                                            \
    (cl_context context, cl_mem_flags flags,                                  \
     const cl_image_format* image_format, const cl_image_desc* image_desc,    \
     void* host_ptr, cl_int* errcode_ret),                                    \
    (context, flags, image_format, image_desc, host_ptr, errcode_ret))        \
  X(OBJECT, cl_mem, clCreateSubBuffer,                                        \
    (cl_mem buffer, cl_mem_flags flags,                                       \
     cl_buffer_create_type buffer_create_type,                                \
     const void* buffer_create_info, cl_int* errcode_ret),                    \
    (buffer, flags, buffer_create_type, buffer_create_info, errcode_ret))     \
  TUNEFLEET_CL_GET_INFO(X, MemObject, cl_mem, cl_mem_info)                    \
  X(STATUS, cl_int, clGetSupportedImageFormats,                               \
    (cl_context context, cl_mem_flags flags, cl_mem_object_type image_type,   \
     cl_uint num_entries, cl_image_format* image_formats,                     \
     cl_uint* num_image_formats),                                             \
    (context, flags, image_type, num_entries, image_formats,                  \
     num_image_formats))                                                      \
  TUNEFLEET_CL_RETAIN_RELEASE(X, cl_mem, MemObject)                           \
  X(OBJECT, cl_program, clCreateProgramWithSource,                            \
    (cl_context context, cl_uint count, const char** strings,                 \
     const size_t* lengths, cl_int* errcode_ret),                             \
    (context, count, strings, lengths, errcode_ret))                          \
  X(OBJECT, cl_program, clCreateProgramWithBinary,                            \
    (cl_context context, cl_uint num_devices,                                 \
     const cl_device_id* device_list, const size_t* lengths,                  \
     const unsigned char** binaries, cl_int* binary_status,                   \
     cl_int* errcode_ret),                                                    \
    (context, num_devices, device_list, lengths, binaries, binary_status,     \
     errcode_ret))                                                            \
  TUNEFLEET_CL_RETAIN_RELEASE(X, cl_program, Program)                         \
  X(STATUS, cl_int, clBuildProgram,                                           \
    (cl_program program, cl_uint num_devices,                                 \
     const cl_device_id* device_list, const char* options,                    \
     void(CL_CALLBACK* pfn_notify)(cl_program program, void* user_data),      \
     void* user_data),                                                        \
    (program, num_devices, device_list, options, pfn_notify, user_data))      \
  TUNEFLEET_CL_GET_INFO(X, Program, cl_program, cl_program_info)              \
  TUNEFLEET_CL_GET_DEVICE_INFO(X, ProgramBuild, cl_program,                   \
                               cl_program_build_info)                         \
  X(OBJECT, cl_kernel, clCreateKernel,                                        \
    (cl_program program, const char* kernel_name, cl_int* errcode_ret),       \
    (program, kernel_name, errcode_ret))                                      \
  TUNEFLEET_CL_RETAIN_RELEASE(X, cl_kernel, Kernel)                           \
  X(STATUS, cl_int, clSetKernelArg,                                           \
    (cl_kernel kernel, cl_uint arg_index, size_t arg_size,                    \
     const void* arg_value),                                                  \
    (kernel, arg_index, arg_size, arg_value))                                 \
  TUNEFLEET_CL_GET_INFO(X, Kernel, cl_kernel, cl_kernel_info)                 \
  TUNEFLEET_CL_GET_DEVICE_INFO(X, KernelWorkGroup, cl_kernel,                 \
                               cl_kernel_work_group_info)                     \
  X(STATUS, cl_int, clWaitForEvents,                                          \
    (cl_uint num_events, const cl_event* event_list),                         \
    (num_events, event_list))                                                 \
  TUNEFLEET_CL_GET_INFO(X, Event, cl_event, cl_event_info)                    \
  TUNEFLEET_CL_GET_INFO(X, EventProfiling, cl_event, cl_profiling_info)       \
  TUNEFLEET_CL_RETAIN_RELEASE(X, cl_event, Event)                             \
  X(STATUS, cl_int, clFlush, (cl_command_queue queue), (queue))               \
  X(STATUS, cl_int, clFinish, (cl_command_queue queue), (queue))              \
  TUNEFLEET_CL_ENQUEUE(X, CopyBuffer,                                         \
    (cl_mem src_buffer, cl_mem dst_buffer, size_t src_offset,                 \
     size_t dst_offset, size_t size),                                         \
    (src_buffer, dst_buffer, src_offset, dst_offset, size))                   \
  TUNEFLEET_CL_ENQUEUE(X, ReadBuffer,                                         \
    (cl_mem buffer, cl_bool blocking_read, size_t offset, size_t size,        \
     void* ptr),                                                              \
    (buffer, blocking_read, offset, size, ptr))                               \
  TUNEFLEET_CL_ENQUEUE(X, WriteBuffer,                                        \
    (cl_mem buffer, cl_bool blocking_write, size_t offset, size_t size,       \
     const void* ptr),                                                        \
    (buffer, blocking_write, offset, size, ptr))                              \
  TUNEFLEET_CL_ENQUEUE(X, FillBuffer,                                         \
    (cl_mem buffer, const void* pattern, size_t pattern_size, size_t offset,  \
     size_t size),                                                            \
    (buffer, pattern, pattern_size, offset, size))                            \
  TUNEFLEET_CL_ENQUEUE(X, CopyBufferToImage,                                  \
    (cl_mem src_buffer, cl_mem dst_image, size_t src_offset,                  \
     const size_t* dst_origin, const size_t* region),                         \
    (src_buffer, dst_image, src_offset, dst_origin, region))                  \
  TUNEFLEET_CL_ENQUEUE(X, ReadImage,                                          \
    (cl_mem image, cl_bool blocking_read, const size_t* origin,               \
     const size_t* region, size_t row_pitch, size_t slice_pitch, void* ptr),  \
    (image, blocking_read, origin, region, row_pitch, slice_pitch, ptr))      \
  TUNEFLEET_CL_ENQUEUE(X, WriteImage,                                         \
    (cl_mem image, cl_bool blocking_write, const size_t* origin,              \
     const size_t* region, size_t input_row_pitch, size_t input_slice_pitch,  \
     const void* ptr),                                                        \
    (image, blocking_write, origin, region, input_row_pitch,                  \
     input_slice_pitch, ptr))                                                 \
  TUNEFLEET_CL_ENQUEUE(X, NDRangeKernel,                                      \
    (cl_kernel kernel, cl_uint work_dim, const size_t* global_work_offset,    \
     const size_t* global_work_size, const size_t* local_work_size),          \
    (kernel, work_dim, global_work_offset, global_work_size,                  \
     local_work_size))                                                        \
  X(STATUS, cl_int, clEnqueueMarkerWithWaitList,                              \
    (cl_command_queue command_queue, cl_uint num_events_in_wait_list,         \
     const cl_event* event_wait_list, cl_event* event),                       \
    (command_queue, num_events_in_wait_list, event_wait_list, event))
// clang-format on

namespace tunefleet::opencl {
namespace {

// The index of each forwarded function in Library::functions.
enum class ClFn : int {
#define TUNEFLEET_CL_ENUM(kind, ret, name, params, args) name,
  TUNEFLEET_OPENCL_FUNCTIONS(TUNEFLEET_CL_ENUM)
#undef TUNEFLEET_CL_ENUM
      kCount
};
constexpr int kClFnCount = static_cast<int>(ClFn::kCount);

constexpr std::array<const char*, kClFnCount> kClFnNames = {
#define TUNEFLEET_CL_NAME(kind, ret, name, params, args) #name,
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
  std::sort(missing.begin(), missing.end());  // in name order
  return missing;
}

}  // namespace tunefleet::opencl

// The forwarding definitions: each takes the loaded library's function
// (typed as CL/cl.h declares it) and calls it, or fails as its KIND says.
#define TUNEFLEET_CL_FN(name)                       \
  ::tunefleet::opencl::Function<decltype(&::name)>( \
      ::tunefleet::opencl::ClFn::name)

#define TUNEFLEET_CL_MISSING_STATUS return CL_INVALID_OPERATION
#define TUNEFLEET_CL_MISSING_OBJECT                                \
  if (errcode_ret != nullptr) *errcode_ret = CL_INVALID_OPERATION; \
  return nullptr
#define TUNEFLEET_CL_MISSING_ADDRESS return nullptr

#define TUNEFLEET_CL_DEFINE(kind, ret, name, params, args) \
  CL_API_ENTRY ret CL_API_CALL name params {               \
    auto* fn = TUNEFLEET_CL_FN(name);                      \
    if (fn != nullptr) return fn args;                     \
    TUNEFLEET_CL_MISSING_##kind;                           \
  }

extern "C" {
TUNEFLEET_OPENCL_FUNCTIONS(TUNEFLEET_CL_DEFINE)
}  // extern "C"
