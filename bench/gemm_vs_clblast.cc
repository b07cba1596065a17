// Benchmark (not a test): tunes SGEMM with tunefleet (the embedded server
// and agent on this machine's first OpenCL device) at several sizes, then
// times the best tuned kernel, CLBlast's SGEMM with its built-in database
// (libclblast-dev) and the naive reference kernel on the same device, the
// same way: host wall-clock over back-to-back calls ending in clFinish (so
// CLBlast's helper kernels count, as they do for its users). Prints GFLOP/s
// and the ratio tuned / CLBlast per size.
//
//   gemm_vs_clblast [--sizes 256,512,1024] [--trials 100] [--json]
#include <clblast.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/strings/str_format.h"
#include "cli/common.h"
#include "cli/embedded.h"
#include "device_agent/worker.h"
#include "kernels_templates/gemm/gemm_template.h"
#include "nlohmann/json.hpp"
#include "server/trial_request.h"

namespace tunefleet::bench {
namespace {

using Clock = std::chrono::steady_clock;

// Host time per call of `launch` (ms): warm-up calls, then enough calls to
// last at least `min_ms`, all followed by one clFinish.
template <typename Launch>
double TimePerCallMs(cl_command_queue queue, Launch launch, double min_ms) {
  for (int i = 0; i < 2; ++i) launch();
  clFinish(queue);
  int calls = 1;
  while (true) {
    const auto start = Clock::now();
    for (int i = 0; i < calls; ++i) launch();
    clFinish(queue);
    const double ms =
        std::chrono::duration<double, std::milli>(Clock::now() - start).count();
    if (ms >= min_ms || calls >= 1 << 14) return ms / calls;
    calls *= 2;
  }
}

// Device buffers for one size, filled with the host's random values.
struct Buffers {
  cl_mem a = nullptr, b = nullptr, c = nullptr;
  ~Buffers() {
    for (cl_mem m : {a, b, c}) {
      if (m) clReleaseMemObject(m);
    }
  }
};

cl_kernel BuildKernel(cl_context ctx, cl_device_id dev,
                      const templates::LaunchDesc& l) {
  const std::string source(l.source);
  const char* text = source.c_str();
  cl_int err = CL_SUCCESS;
  cl_program p = clCreateProgramWithSource(ctx, 1, &text, nullptr, &err);
  clBuildProgram(p, 1, &dev, l.build_options.c_str(), nullptr, nullptr);
  cl_kernel k = clCreateKernel(p, l.kernel_name.c_str(), &err);
  clReleaseProgram(p);
  return err == CL_SUCCESS ? k : nullptr;
}

// Times one of the template's launches (tuned or reference) on the buffers.
double TimeTemplateLaunch(cl_context ctx, cl_device_id dev,
                          cl_command_queue queue,
                          const templates::LaunchDesc& l, const Buffers& buf,
                          int m, int n, int k) {
  cl_kernel kernel = BuildKernel(ctx, dev, l);
  if (kernel == nullptr) return 0;
  clSetKernelArg(kernel, 0, sizeof(int), &m);
  clSetKernelArg(kernel, 1, sizeof(int), &n);
  clSetKernelArg(kernel, 2, sizeof(int), &k);
  clSetKernelArg(kernel, 3, sizeof(cl_mem), &buf.a);
  clSetKernelArg(kernel, 4, sizeof(cl_mem), &buf.b);
  clSetKernelArg(kernel, 5, sizeof(cl_mem), &buf.c);
  const size_t global[2] = {l.global[0], l.global[1]};
  size_t local[2] = {0, 0};
  if (!l.local.empty()) local[0] = l.local[0], local[1] = l.local[1];
  const double ms = TimePerCallMs(
      queue,
      [&] {
        clEnqueueNDRangeKernel(queue, kernel, 2, nullptr, global,
                               l.local.empty() ? nullptr : local, 0, nullptr,
                               nullptr);
      },
      300);
  clReleaseKernel(kernel);
  return ms;
}

int Main(int argc, char** argv) {
  CLI::App app{"tuned SGEMM vs CLBlast SGEMM on this machine's OpenCL device"};
  std::vector<int> sizes = {256, 512, 1024};
  uint32_t trials = 100;
  std::string db = "";
  bool json = false;
  app.add_option("--sizes", sizes, "square sizes")->delimiter(',');
  app.add_option("--trials", trials, "tuning trials per size")
      ->capture_default_str();
  app.add_option("--db", db, "database (default: a temporary file)");
  app.add_flag("--json", json, "print JSON instead of a table");
  CLI11_PARSE(app, argc, argv);
  if (db.empty()) {
    db = (std::filesystem::temp_directory_path() /
          ("gemm_vs_clblast_" + std::to_string(getpid()) + ".db"))
             .string();
  }

  cli::EmbeddedOptions options;
  options.db_path = db;
  auto fleet = cli::EmbeddedFleet::Start(options);
  if (!fleet.ok()) return cli::ReportError("bench", fleet.status());
  auto device = agent::OpenDevice(0, 0);
  if (!device.ok()) return cli::ReportError("bench", device.status());
  cl_context ctx = device->context.get();
  cl_device_id dev = device->device;
  cl_command_queue queue = device->queue.get();
  templates::GemmTemplate gemm;

  nlohmann::json rows = nlohmann::json::array();
  for (int size : sizes) {
    const std::string shape =
        absl::StrFormat("M=%d,N=%d,K=%d", size, size, size);
    auto workload = *templates::Workload::Parse("gemm", shape);
    tunefleet::v1::SubmitJobRequest request;
    *request.mutable_workload() = server::WorkloadToProto(workload);
    request.set_trials(trials);
    request.set_strategy("xgb");
    request.set_skip_reference(true);
    const auto tune_start = Clock::now();
    auto outcome = cli::RunJob((*fleet)->address(), request, nullptr, nullptr);
    if (!outcome.ok()) return cli::ReportError("bench", outcome.status());
    const double tune_s =
        std::chrono::duration<double>(Clock::now() - tune_start).count();
    if (!outcome->last.has_best()) {
      std::fprintf(stderr, "bench: no valid config at %d\n", size);
      continue;
    }
    std::vector<std::pair<std::string, int64_t>> pairs;
    for (const auto& kv : outcome->last.best().config().knobs()) {
      pairs.emplace_back(kv.name(), kv.value());
    }
    auto config = *gemm.ConfigFromPairs(pairs);

    const size_t elems = static_cast<size_t>(size) * size;
    std::vector<float> host(elems);
    for (size_t i = 0; i < elems; ++i) {
      host[i] = static_cast<float>((i * 7919) % 2001) / 1000 - 1;
    }
    Buffers buf;
    cl_int err = CL_SUCCESS;
    buf.a =
        clCreateBuffer(ctx, CL_MEM_COPY_HOST_PTR, elems * 4, host.data(), &err);
    buf.b =
        clCreateBuffer(ctx, CL_MEM_COPY_HOST_PTR, elems * 4, host.data(), &err);
    buf.c = clCreateBuffer(ctx, CL_MEM_READ_WRITE, elems * 4, nullptr, &err);

    const double tuned_ms = TimeTemplateLaunch(
        ctx, dev, queue, gemm.Launch(config, workload), buf, size, size, size);
    const double naive_ms = TimeTemplateLaunch(
        ctx, dev, queue, gemm.ReferenceLaunch(workload), buf, size, size, size);
    clblast::StatusCode clblast_status = clblast::StatusCode::kSuccess;
    const double clblast_ms = TimePerCallMs(
        queue,
        [&] {
          clblast_status = clblast::Gemm<float>(
              clblast::Layout::kRowMajor, clblast::Transpose::kNo,
              clblast::Transpose::kNo, size, size, size, 1.0f, buf.a, 0, size,
              buf.b, 0, size, 0.0f, buf.c, 0, size, &queue, nullptr);
        },
        300);
    const double gflop = 2.0 * size * size * size / 1e9;
    nlohmann::json row = {
        {"size", size},
        {"trials", outcome->last.trials_done()},
        {"tune_s", tune_s},
        {"config", cli::ConfigText(outcome->last.best().config())},
        {"tuned_gflops", gflop / (tuned_ms / 1e3)},
        {"tuned_event_gflops", outcome->last.best().gflops()},
        {"clblast_gflops", clblast_status == clblast::StatusCode::kSuccess
                               ? gflop / (clblast_ms / 1e3)
                               : 0.0},
        {"naive_gflops", gflop / (naive_ms / 1e3)},
    };
    row["ratio_vs_clblast"] = row["clblast_gflops"] > 0
                                  ? row["tuned_gflops"].get<double>() /
                                        row["clblast_gflops"].get<double>()
                                  : 0.0;
    row["ratio_vs_naive"] =
        row["tuned_gflops"].get<double>() / row["naive_gflops"].get<double>();
    rows.push_back(row);
    std::fprintf(stderr, "size %d done (%.0f s of tuning)\n", size, tune_s);
  }
  nlohmann::json out = {
      {"device", (*fleet)->device_key()},
      {"rows", rows},
  };
  if (json) {
    std::cout << out.dump(2) << "\n";
    return 0;
  }
  std::cout << "SGEMM on " << (*fleet)->device_key()
            << " (host wall time per call, same buffers)\n";
  std::cout << absl::StrFormat("%6s %7s %8s %12s %13s %12s %10s %10s\n", "size",
                               "trials", "tune s", "tuned GF/s", "CLBlast GF/s",
                               "naive GF/s", "vs CLBlast", "vs naive");
  for (const auto& r : rows) {
    std::cout << absl::StrFormat(
        "%6d %7d %8.0f %12.2f %13.2f %12.2f %9.2fx %9.1fx\n",
        r["size"].get<int>(), r["trials"].get<int>(), r["tune_s"].get<double>(),
        r["tuned_gflops"].get<double>(), r["clblast_gflops"].get<double>(),
        r["naive_gflops"].get<double>(), r["ratio_vs_clblast"].get<double>(),
        r["ratio_vs_naive"].get<double>());
  }
  for (const auto& r : rows) {
    std::cout << "  " << r["size"].get<int>() << ": "
              << r["config"].get<std::string>() << "\n";
  }
  return 0;
}

}  // namespace
}  // namespace tunefleet::bench

int main(int argc, char** argv) {
  // The embedded agent's measurement worker is this executable.
  if (tunefleet::agent::IsWorkerInvocation(argc, argv)) {
    return tunefleet::agent::RunWorkerMain(argc, argv);
  }
  return tunefleet::bench::Main(argc, argv);
}
