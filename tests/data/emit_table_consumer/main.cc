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
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "first_device.h"
#include "first_queue.h"
#include "softmax_run.h"
#include "tunefleet_model.h"
#include "tunefleet_tuned.h"

namespace {

bool RunOnce(cl_context context, cl_command_queue queue, cl_device_id device,
             const std::string& workload, int n, int d) {
  const tunefleet_tuned::RunEntry e =
      tunefleet_tuned::DescribeRunEntry(device, workload.c_str());
  std::printf("entry %s %s\n", e.found ? e.config.c_str() : "none",
              e.table.empty() ? "built-in" : e.table.c_str());
  return consumer_support::RunSoftmax(context, queue, workload, n, d);
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
  const std::string workload = consumer_support::SoftmaxWorkload(n, d);
  cl_device_id device = consumer_support::FirstDevice();
  if (device == nullptr) return 1;
  cl_int err = CL_SUCCESS;
  cl_context context =
      clCreateContext(nullptr, 1, &device, nullptr, nullptr, &err);
  cl_command_queue queue = clCreateCommandQueue(context, device, 0, &err);
  if (std::string(argv[1]) == "plan") {
    const bool loaded = LoadPlans(context, queue, device, argc, argv);
    consumer_support::CloseQueue(context, queue);
    return loaded ? 0 : 1;
  }
  bool ok = RunOnce(context, queue, device, workload, n, d);
  for (int i = 3; i < argc; ++i) {
    std::string message;
    const cl_int code = tunefleet_tuned::LoadTable(device, argv[i], &message);
    std::printf("load %d %s\n", code, message.c_str());
    ok = RunOnce(context, queue, device, workload, n, d) && ok;
  }
  consumer_support::CloseQueue(context, queue);
  return ok ? 0 : 1;
}
