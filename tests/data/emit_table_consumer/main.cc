// emit_table_consumer N D [TABLE...]: runs "softmax N=<N> D=<D>" with the
// library's built-in table, then for each TABLE loads it with
// tunefleet_tuned::LoadTable and runs the workload again. Prints, per run,
//   entry <config> <origin>    what DescribeRunEntry says will run
//                              (origin: "built-in" or the table's path)
//   run OK|FAIL <max abs error>  the output against a host softmax
// and per table
//   load <status code> <message>
// Exit code 0 when every run matches (max abs error <= 1e-5).
//
// emit_table_consumer plan PLAN WEIGHTS [PLAN WEIGHTS...]: loads each
// model plan with tunefleet_tuned::LoadModelPlan and prints
//   plan <status code> <message>
// and, when it loaded, runs it once on inputs of 0.5s and prints
//   ran <status code> <first output value>
// Exit code 0 when every plan that loaded ran.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "first_device.h"
#include "softmax_check.h"
#include "tunefleet_model.h"
#include "tunefleet_tuned.h"

namespace {

bool RunOnce(cl_context context, cl_command_queue queue, cl_device_id device,
             const std::string& workload, int n, int d) {
  const tunefleet_tuned::RunEntry e =
      tunefleet_tuned::DescribeRunEntry(device, workload.c_str());
  std::printf("entry %s %s\n", e.found ? e.config.c_str() : "none",
              e.table.empty() ? "built-in" : e.table.c_str());
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
  return consumer_support::CheckSoftmax(in, out, n, d);
}

// The plan mode above.
bool LoadPlans(cl_context context, cl_command_queue queue, cl_device_id device,
               int argc, char** argv) {
  bool ok = true;
  for (int i = 2; i + 1 < argc; i += 2) {
    tunefleet_tuned::ModelLoadOptions options;
    options.library = tunefleet_tuned::LinkedLibraries();
    std::unique_ptr<tunefleet_tuned::Model> model;
    std::string message;
    const cl_int code = tunefleet_tuned::LoadModelPlan(
        context, device, argv[i], argv[i + 1], options, &model, &message);
    std::printf("plan %d %s\n", code, message.c_str());
    if (code != CL_SUCCESS) continue;
    std::vector<std::vector<float>> in, out;
    std::vector<const float*> in_ptrs;
    std::vector<float*> out_ptrs;
    for (const auto& t : model->inputs()) in.emplace_back(t.elements, 0.5f);
    for (const auto& t : model->outputs()) out.emplace_back(t.elements, 0.0f);
    for (auto& v : in) in_ptrs.push_back(v.data());
    for (auto& v : out) out_ptrs.push_back(v.data());
    std::string error;
    const cl_int ran = model->Run(queue, in_ptrs.data(), in_ptrs.size(),
                                  out_ptrs.data(), out_ptrs.size(), &error);
    std::printf("ran %d %g %s\n", ran, out.empty() ? 0.0 : out[0][0],
                error.c_str());
    ok = ok && ran == CL_SUCCESS;
  }
  return ok;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr,
                 "usage: %s N D [TABLE...] | plan PLAN WEIGHTS [PLAN "
                 "WEIGHTS...]\n",
                 argv[0]);
    return 2;
  }
  const int n = std::atoi(argv[1]), d = std::atoi(argv[2]);
  const std::string workload =
      "softmax N=" + std::to_string(n) + " D=" + std::to_string(d);
  cl_device_id device = consumer_support::FirstDevice();
  if (device == nullptr) return 1;
  cl_int err = CL_SUCCESS;
  cl_context context =
      clCreateContext(nullptr, 1, &device, nullptr, nullptr, &err);
  cl_command_queue queue = clCreateCommandQueue(context, device, 0, &err);
  if (std::string(argv[1]) == "plan") {
    const bool loaded = LoadPlans(context, queue, device, argc, argv);
    tunefleet_tuned::ReleaseCachedPrograms();
    clReleaseCommandQueue(queue);
    clReleaseContext(context);
    return loaded ? 0 : 1;
  }
  bool ok = RunOnce(context, queue, device, workload, n, d);
  for (int i = 3; i < argc; ++i) {
    std::string message;
    const cl_int code = tunefleet_tuned::LoadTable(device, argv[i], &message);
    std::printf("load %d %s\n", code, message.c_str());
    ok = RunOnce(context, queue, device, workload, n, d) && ok;
  }
  tunefleet_tuned::ReleaseCachedPrograms();
  clReleaseCommandQueue(queue);
  clReleaseContext(context);
  return ok ? 0 : 1;
}
