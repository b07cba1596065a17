// emit_driver_consumer N D: runs "softmax N=<N> D=<D>" with the emitted
// library's built-in table on the first OpenCL device and prints
//   entry <config> revision <r> <exact|nearest> <driver version>
//                                what DescribeRunEntry says runs
//   run OK|FAIL <max abs error>  the output against a host softmax
// Exit code 0 when the run matches (max abs error <= 1e-5). Run it with
// TUNEFLEET_TUNED_DRIVER_VERSION set to act as on another driver
// (docs/TABLES.md).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "first_device.h"
#include "softmax_check.h"
#include "tunefleet_tuned.h"

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s N D\n", argv[0]);
    return 2;
  }
  const int n = std::atoi(argv[1]), d = std::atoi(argv[2]);
  const std::string workload =
      "softmax N=" + std::to_string(n) + " D=" + std::to_string(d);
  cl_device_id device = consumer_support::FirstDevice();
  if (device == nullptr) return 1;
  const tunefleet_tuned::RunEntry e =
      tunefleet_tuned::DescribeRunEntry(device, workload.c_str());
  std::printf("entry %s revision %d %s %s\n",
              e.found ? e.config.c_str() : "none", e.driver_revision,
              e.driver_match.c_str(), e.driver_version.c_str());
  cl_int err = CL_SUCCESS;
  cl_context context =
      clCreateContext(nullptr, 1, &device, nullptr, nullptr, &err);
  cl_command_queue queue = clCreateCommandQueue(context, device, 0, &err);
  const size_t count = static_cast<size_t>(n) * d;
  std::vector<float> in(count), out(count, 0.0f);
  for (size_t i = 0; i < count; ++i) {
    in[i] = 0.03f * static_cast<float>((i * 37) % 101) - 1.5f;
  }
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
  tunefleet_tuned::ReleaseCachedPrograms();
  clReleaseCommandQueue(queue);
  clReleaseContext(context);
  if (err != CL_SUCCESS) {
    std::printf("run FAIL OpenCL error %d\n", err);
    return 1;
  }
  return consumer_support::CheckSoftmax(in, out, n, d) ? 0 : 1;
}
