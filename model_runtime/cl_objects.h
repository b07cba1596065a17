// OpenCL helpers that the model runtime (model.cc, recording.cc) and the
// emitted library's kernel runtime (emitter/runtime/tuned_runtime.h) share:
// owners of one reference to an OpenCL object, and a device's text
// queries. Plain C++17 and the OpenCL 1.2 host API, header only: the
// emitter copies it into every emitted library as src/cl_objects.h (not
// installed), and tunefleet-agent and the tunefleet CLI compile it with
// the model runtime.
#ifndef TUNEFLEET_MODEL_RUNTIME_CL_OBJECTS_H_
#define TUNEFLEET_MODEL_RUNTIME_CL_OBJECTS_H_

#ifndef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 120
#endif
#include <CL/cl.h>

#include <memory>
#include <string>
#include <type_traits>

namespace tunefleet_tuned::internal {

// Owners of one reference to an OpenCL object (RAII for buffers and images,
// events, kernels and programs): the deleter releases it.
struct ReleaseMem {
  void operator()(cl_mem m) const { clReleaseMemObject(m); }
};
struct ReleaseEvent {
  void operator()(cl_event e) const { clReleaseEvent(e); }
};
struct ReleaseKernel {
  void operator()(cl_kernel k) const { clReleaseKernel(k); }
};
struct ReleaseProgram {
  void operator()(cl_program p) const { clReleaseProgram(p); }
};
using Mem = std::unique_ptr<std::remove_pointer_t<cl_mem>, ReleaseMem>;
using Event = std::unique_ptr<std::remove_pointer_t<cl_event>, ReleaseEvent>;
using Kernel = std::unique_ptr<std::remove_pointer_t<cl_kernel>, ReleaseKernel>;
using Program =
    std::unique_ptr<std::remove_pointer_t<cl_program>, ReleaseProgram>;

// The string value of `param` (CL_DEVICE_NAME, CL_DEVICE_EXTENSIONS, ...)
// of `device`, trailing NULs and spaces removed; "" when either query
// fails.
inline std::string DeviceText(cl_device_id device, cl_device_info param) {
  size_t size = 0;
  if (clGetDeviceInfo(device, param, 0, nullptr, &size) != CL_SUCCESS) {
    return "";
  }
  std::string s(size, '\0');
  if (size > 0 &&
      clGetDeviceInfo(device, param, size, &s[0], nullptr) != CL_SUCCESS) {
    return "";
  }
  while (!s.empty() && (s.back() == '\0' || s.back() == ' ')) s.pop_back();
  return s;
}

}  // namespace tunefleet_tuned::internal

#endif  // TUNEFLEET_MODEL_RUNTIME_CL_OBJECTS_H_
