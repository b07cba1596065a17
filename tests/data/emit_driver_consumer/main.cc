// emit_driver_consumer N D: runs "softmax N=<N> D=<D>" with the emitted
// library's built-in table on the first OpenCL device and prints
//   entry <config> revision <r> <exact|nearest> <driver version>
//                                what DescribeRunEntry says runs
//   run OK|FAIL <max abs error>  the output against a host softmax
// Exit code 0 when the run matches (max abs error <= 1e-5). Run it with
// TUNEFLEET_TUNED_DRIVER_VERSION set to act as on another driver
// (docs/TABLES.md).
#include <cstdio>
#include <cstdlib>
#include <string>

#include "first_device.h"
#include "first_queue.h"
#include "softmax_run.h"
#include "tunefleet_tuned.h"

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s N D\n", argv[0]);
    return 2;
  }
  const int n = std::atoi(argv[1]), d = std::atoi(argv[2]);
  const std::string workload = consumer_support::SoftmaxWorkload(n, d);
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
  const bool ok = consumer_support::RunSoftmax(context, queue, workload, n, d);
  consumer_support::CloseQueue(context, queue);
  return ok ? 0 : 1;
}
