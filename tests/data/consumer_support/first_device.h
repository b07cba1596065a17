// For the programs under tests/data/ built against an emitted library: the
// OpenCL device they run on. Header-only: each consumer is its own CMake
// project.
#ifndef TUNEFLEET_TESTS_DATA_CONSUMER_SUPPORT_FIRST_DEVICE_H_
#define TUNEFLEET_TESTS_DATA_CONSUMER_SUPPORT_FIRST_DEVICE_H_

#include <CL/cl.h>

#include <cstdio>

namespace consumer_support {

// The first device of the first OpenCL platform; nullptr, after printing
// "no OpenCL device" to stderr, when there is none.
inline cl_device_id FirstDevice() {
  cl_platform_id platform = nullptr;
  cl_device_id device = nullptr;
  if (clGetPlatformIDs(1, &platform, nullptr) != CL_SUCCESS ||
      clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &device, nullptr) !=
          CL_SUCCESS) {
    std::fprintf(stderr, "no OpenCL device\n");
    return nullptr;
  }
  return device;
}

}  // namespace consumer_support

#endif  // TUNEFLEET_TESTS_DATA_CONSUMER_SUPPORT_FIRST_DEVICE_H_
