// Benchmark (not a test): the memory-bound templates against the device's
// copy bandwidth, in one run on one OpenCL device. Tunes each task through
// the embedded fleet (the job's best record: median of the agent's
// per-round profiling-event times), and times clEnqueueCopyBuffer of a
// 1 GiB buffer on the same device with profiling events (median of 20
// copies). GB/s counts the bytes a run must move at least: every input,
// weight and output once (KernelTemplate::Bytes); the copy's, the bytes
// read plus the bytes written (2 GiB), as PyTorch's device-copy figures do.
// Prints template, shape, trials, time, GB/s and % of the copy bandwidth.
//
//   gpu_membound [--trials 40] [--only TEMPLATE] [--copy-mib 1024]
//                [--platform I --device J] [--db FILE] [--json]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/strings/str_format.h"
#include "base/status_macros.h"
#include "bench/bench_fleet.h"
#include "cli/common.h"
#include "kernels_templates/registry.h"
#include "nlohmann/json.hpp"
#include "opencl/opencl.h"
#include "trial/trial_request.h"

namespace tunefleet::bench {
namespace {

// One memory-bound task: template, op and shape (attributes included).
struct Task {
  std::string template_name, op, shape;
};

// Inputs of 64 MiB to 512 MiB, several times a Hopper GPU's 50-60 MB L2,
// and the 3x3 depthwise convolution (64 MiB in, 64 MiB out) with
// a 4x batch beside it.
std::vector<Task> Tasks() {
  return {
      {"global_pool_reduce", "global_pool", "N=32,C=512,H=64,W=64,mode=avg"},
      {"softmax_rows", "softmax", "N=65536,D=1024"},
      {"pool2d_direct", "pool2d",
       "N=16,C=256,H=128,W=128,R=2,S=2,SH=2,SW=2,mode=max"},
      {"depthwise_direct", "depthwise_conv2d",
       "N=1,C=256,H=256,W=256,R=3,S=3,PH=1,PW=1"},
      {"depthwise_direct", "depthwise_conv2d",
       "N=4,C=256,H=256,W=256,R=3,S=3,PH=1,PW=1"},
  };
}

struct Flags {
  uint32_t trials = 40;
  std::string only;
  int copy_mib = 1024;
  std::string db;
  bool json = false;
  int platform = 0;
  int device = 0;
};

// Device-to-device copy bandwidth, GB/s (1e9 bytes/s) of bytes read plus
// written: the median event time of 20 clEnqueueCopyBuffer calls of
// `mib` MiB after 3 warm-ups. Errors: UNAVAILABLE from OpenCL.
absl::StatusOr<double> CopyGbPerS(const opencl::ClDevice& device, int mib) {
  const size_t bytes = static_cast<size_t>(mib) << 20;
  cl_int err = CL_SUCCESS;
  opencl::ClMem src(clCreateBuffer(device.context.get(), CL_MEM_READ_WRITE,
                                   bytes, nullptr, &err));
  if (err != CL_SUCCESS) return absl::UnavailableError("clCreateBuffer");
  opencl::ClMem dst(clCreateBuffer(device.context.get(), CL_MEM_READ_WRITE,
                                   bytes, nullptr, &err));
  if (err != CL_SUCCESS) return absl::UnavailableError("clCreateBuffer");
  cl_command_queue q = device.queue.get();
  const cl_uint zero = 0;
  clEnqueueFillBuffer(q, src.get(), &zero, sizeof(zero), 0, bytes, 0, nullptr,
                      nullptr);
  std::vector<double> ns;
  for (int i = 0; i < 23; ++i) {
    cl_event raw = nullptr;
    err = clEnqueueCopyBuffer(q, src.get(), dst.get(), 0, 0, bytes, 0, nullptr,
                              &raw);
    if (err != CL_SUCCESS) {
      return absl::UnavailableError(
          absl::StrFormat("clEnqueueCopyBuffer: error %d", err));
    }
    opencl::ClEvent event(raw);
    clWaitForEvents(1, &raw);
    cl_ulong start = 0, end = 0;
    clGetEventProfilingInfo(raw, CL_PROFILING_COMMAND_START, sizeof(start),
                            &start, nullptr);
    clGetEventProfilingInfo(raw, CL_PROFILING_COMMAND_END, sizeof(end), &end,
                            nullptr);
    if (i >= 3) ns.push_back(static_cast<double>(end - start));
  }
  std::sort(ns.begin(), ns.end());
  const double median = ns[ns.size() / 2];
  return median > 0 ? 2.0 * bytes / median : 0.0;
}

// Tunes one task; its JSON row (null when no config was valid).
absl::StatusOr<nlohmann::json> BenchTask(const Flags& f,
                                         const cli::EmbeddedFleet& fleet,
                                         const Task& task, double copy_gbs) {
  TUNEFLEET_ASSIGN_OR_RETURN(templates::Workload workload,
                             templates::Workload::Parse(task.op, task.shape));
  TUNEFLEET_ASSIGN_OR_RETURN(
      const templates::KernelTemplate* tmpl,
      templates::FindTemplateFor(workload, task.template_name));
  tunefleet::v1::SubmitJobRequest request;
  *request.mutable_workload() = trial::WorkloadToProto(workload);
  request.set_template_name(task.template_name);
  request.set_trials(f.trials);
  request.set_strategy(tunefleet::v1::STRATEGY_XGB);
  const auto start = std::chrono::steady_clock::now();
  TUNEFLEET_ASSIGN_OR_RETURN(
      cli::JobOutcome outcome,
      cli::RunJob(fleet.connection(), request, nullptr, nullptr));
  const double tune_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  if (!outcome.last.has_best() || outcome.last.best().time_ns() <= 0) {
    return nlohmann::json();
  }
  const double bytes = tmpl->Bytes(workload);
  const double ns = outcome.last.best().time_ns();
  const double gbs = bytes / ns;
  return nlohmann::json{
      {"template", task.template_name},
      {"shape", task.shape},
      {"trials", outcome.last.trials_done()},
      {"tune_s", tune_s},
      {"mib", bytes / (1 << 20)},
      {"time_ms", ns / 1e6},
      {"gbs", gbs},
      {"fraction_of_copy", copy_gbs > 0 ? gbs / copy_gbs : 0.0},
      {"config", cli::ConfigText(outcome.last.best().config())},
  };
}

void PrintTable(const nlohmann::json& out) {
  std::cout << "Memory-bound templates on " << out["device"].get<std::string>()
            << " (best of " << out["trials"].get<int>()
            << " trials each, median event time; bytes = inputs + weights + "
               "outputs once)\n";
  std::cout << absl::StrFormat(
      "device copy (clEnqueueCopyBuffer, %d MiB, read + written): %.0f GB/s\n",
      out["copy_mib"].get<int>(), out["copy_gbs"].get<double>());
  std::cout << absl::StrFormat("%-19s %-48s %6s %7s %8s %8s %7s\n", "template",
                               "shape", "trials", "MiB", "ms", "GB/s",
                               "of copy");
  for (const auto& r : out["rows"]) {
    std::cout << absl::StrFormat(
        "%-19s %-48s %6d %7.0f %8.4f %8.0f %6.1f%%\n",
        r["template"].get<std::string>(), r["shape"].get<std::string>(),
        r["trials"].get<int>(), r["mib"].get<double>(),
        r["time_ms"].get<double>(), r["gbs"].get<double>(),
        100 * r["fraction_of_copy"].get<double>());
  }
  for (const auto& r : out["rows"]) {
    std::cout << "  " << r["template"].get<std::string>() << " "
              << r["shape"].get<std::string>() << ": "
              << r["config"].get<std::string>() << "\n";
  }
}

int Main(int argc, char** argv) {
  CLI::App app{
      "gpu_membound: memory-bound templates against the device's copy "
      "bandwidth"};
  Flags f;
  app.add_option("--trials", f.trials, "tuning trials per task")
      ->capture_default_str();
  app.add_option("--only", f.only, "run the tasks of this template only");
  app.add_option("--copy-mib", f.copy_mib, "size of the copy, MiB")
      ->capture_default_str();
  bench::AddBenchFleetFlags(app, f.platform, f.device, f.db);
  app.add_flag("--json", f.json, "print JSON instead of a table");
  CLI11_PARSE(app, argc, argv);
  auto fleet =
      bench::StartBenchFleet("gpu_membound", f.db, f.platform, f.device);
  if (!fleet.ok()) return cli::ReportError("bench", fleet.status());
  double copy_gbs = 0;
  {
    auto device = opencl::OpenDevice(f.platform, f.device);
    if (!device.ok()) return cli::ReportError("bench", device.status());
    absl::StatusOr<double> copy = CopyGbPerS(*device, f.copy_mib);
    if (!copy.ok()) return cli::ReportError("bench", copy.status());
    copy_gbs = *copy;
  }
  nlohmann::json rows = nlohmann::json::array();
  for (const Task& task : Tasks()) {
    if (!f.only.empty() && task.template_name != f.only) continue;
    absl::StatusOr<nlohmann::json> row = BenchTask(f, **fleet, task, copy_gbs);
    if (!row.ok()) return cli::ReportError("bench", row.status());
    if (row->is_null()) {
      std::fprintf(stderr, "bench: no valid config for %s %s\n",
                   task.template_name.c_str(), task.shape.c_str());
      continue;
    }
    std::fprintf(stderr, "%s %s: %.0f GB/s\n", task.template_name.c_str(),
                 task.shape.c_str(), (*row)["gbs"].get<double>());
    rows.push_back(*std::move(row));
  }
  const nlohmann::json out = {
      {"device", (*fleet)->device_key()},
      {"trials", f.trials},
      {"copy_mib", f.copy_mib},
      {"copy_gbs", copy_gbs},
      {"rows", rows},
  };
  if (f.json) {
    std::cout << out.dump(2) << "\n";
  } else {
    PrintTable(out);
  }
  return 0;
}

}  // namespace
}  // namespace tunefleet::bench

int main(int argc, char** argv) { return tunefleet::bench::Main(argc, argv); }
