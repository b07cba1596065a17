// For the programs under tests/data/ built against an emitted library: one
// softmax workload run through tunefleet_tuned::Run and checked against the
// host softmax (softmax_check.h). Header-only: each consumer is its own
// CMake project.
#ifndef TUNEFLEET_TESTS_DATA_CONSUMER_SUPPORT_SOFTMAX_RUN_H_
#define TUNEFLEET_TESTS_DATA_CONSUMER_SUPPORT_SOFTMAX_RUN_H_

#include <CL/cl.h>

#include <cstddef>
#include <cstdio>
#include <string>
#include <vector>

#include "softmax_check.h"
#include "tunefleet_tuned.h"

namespace consumer_support {

// The workload "softmax N=<n> D=<d>".
inline std::string SoftmaxWorkload(int n, int d) {
  return "softmax N=" + std::to_string(n) + " D=" + std::to_string(d);
}

// Runs `workload` (SoftmaxWorkload(n, d)) on `queue` over n x d fixed
// inputs (0.03 * ((i * 37) % 101) - 1.5) and prints "run FAIL OpenCL error
// <code>" when an OpenCL call fails, else the "run OK|FAIL <error>" line of
// CheckSoftmax; returns whether the run matched.
inline bool RunSoftmax(cl_context context, cl_command_queue queue,
                       const std::string& workload, int n, int d) {
  const size_t count = static_cast<size_t>(n) * d;
  std::vector<float> in(count), out(count, 0.0f);
  for (size_t i = 0; i < count; ++i) {
    in[i] = 0.03f * static_cast<float>((i * 37) % 101) - 1.5f;
  }
  cl_int err = CL_SUCCESS;
  cl_mem a = clCreateBuffer(context, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR,
                            count * sizeof(float), in.data(), &err);
  cl_mem b = clCreateBuffer(context, CL_MEM_READ_WRITE, count * sizeof(float),
                            nullptr, &err);
  const cl_mem buffers[] = {a, b};
  err = tunefleet_tuned::Run(queue, workload.c_str(), buffers, 2, nullptr, 0);
  if (err == CL_SUCCESS) {
    err = clEnqueueReadBuffer(queue, b, CL_TRUE, 0, count * sizeof(float),
                              out.data(), 0, nullptr, nullptr);
  }
  clReleaseMemObject(a);
  clReleaseMemObject(b);
  if (err != CL_SUCCESS) {
    std::printf("run FAIL OpenCL error %d\n", err);
    return false;
  }
  return CheckSoftmax(in, out, n, d);
}

}  // namespace consumer_support

#endif  // TUNEFLEET_TESTS_DATA_CONSUMER_SUPPORT_SOFTMAX_RUN_H_
