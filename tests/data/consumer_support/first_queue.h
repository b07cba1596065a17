// For the programs under tests/data/ built against an emitted library: the
// OpenCL context and in-order queue they run the library on, opened on the
// first device of the first platform, and their release at exit.
// Header-only: each consumer is its own CMake project.
#ifndef TUNEFLEET_TESTS_DATA_CONSUMER_SUPPORT_FIRST_QUEUE_H_
#define TUNEFLEET_TESTS_DATA_CONSUMER_SUPPORT_FIRST_QUEUE_H_

#include <CL/cl.h>

#include "tunefleet_tuned.h"

namespace consumer_support {

// The first device of the first platform, a context on it and an in-order
// queue on that.
struct FirstQueue {
  cl_device_id device = nullptr;
  cl_context context = nullptr;
  cl_command_queue queue = nullptr;
};

// Opens them; all null when any of these OpenCL calls fails (the consumers
// then exit with code 3).
inline FirstQueue OpenFirstQueue() {
  FirstQueue q;
  cl_platform_id platform;
  cl_int err = clGetPlatformIDs(1, &platform, nullptr);
  err |= clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &q.device, nullptr);
  q.context = clCreateContext(nullptr, 1, &q.device, nullptr, nullptr, &err);
  q.queue = clCreateCommandQueue(q.context, q.device, 0, &err);
  return err == CL_SUCCESS ? q : FirstQueue{};
}

// Releases the library's cached programs, then `queue` and `context`.
inline void CloseQueue(cl_context context, cl_command_queue queue) {
  tunefleet_tuned::ReleaseCachedPrograms();
  clReleaseCommandQueue(queue);
  clReleaseContext(context);
}

}  // namespace consumer_support

#endif  // TUNEFLEET_TESTS_DATA_CONSUMER_SUPPORT_FIRST_QUEUE_H_
