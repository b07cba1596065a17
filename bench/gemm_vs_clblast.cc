// Benchmark (not a test): tunes SGEMM with tunefleet (the embedded server
// and agent on this machine's OpenCL device) at several sizes, then times
// the best tuned kernel, CLBlast's SGEMM with its built-in database
// (libclblast-dev) and the naive reference kernel on the same device, the
// same way: host wall-clock over back-to-back calls ending in clFinish (so
// CLBlast's helper kernels count, as they do for its users). Prints the
// throughput, the ratio tuned / CLBlast per size and, given the device's
// FP32 peak, the fraction of it reached.
//
// Built twice from this file: gemm_vs_clblast (defaults: sizes 256, 512,
// 1024, 100 trials, template gemm_tiled) and gpu_gemm (GPU_GEMM_DEFAULTS:
// sizes 1024, 2048, 4096, 300 trials, template gemm_gpu, TFLOP/s).
//
//   gemm_vs_clblast [--sizes 256,512,1024] [--trials 100] [--template T]
//                   [--platform I --device J] [--peak-tflops P] [--json]
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
#include "device_agent/opencl.h"
#include "kernels_templates/registry.h"
#include "nlohmann/json.hpp"
#include "proto/names.h"
#include "trial/trial_request.h"

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

// FP32 peak in TFLOP/s: CUs x clock x FP32 lanes per CU x 2 (an FMA is two
// FLOPs). Lanes per CU are not an OpenCL query; NVIDIA SMs since Ampere
// (GA10x) and Hopper (GH100 whitepaper) have 128. 0 when unknown.
double PeakTflops(const tunefleet::v1::DeviceInfo& d) {
  if (d.vendor().find("NVIDIA") == std::string::npos) return 0;
  return d.compute_units() * (d.max_clock_mhz() * 1e6) * 128 * 2 / 1e12;
}

int Main(int argc, char** argv) {
#ifdef GPU_GEMM_DEFAULTS
  CLI::App app{
      "gpu_gemm: tuned SGEMM (template gemm_gpu) vs CLBlast SGEMM "
      "on a GPU, in TFLOP/s and as a fraction of FP32 peak"};
  std::vector<int> sizes = {1024, 2048, 4096};
  uint32_t trials = 300;
  std::string template_name = "gemm_gpu";
  const double unit = 1e12;  // TFLOP/s
  const char* unit_name = "TF/s";
#else
  CLI::App app{"tuned SGEMM vs CLBlast SGEMM on this machine's OpenCL device"};
  std::vector<int> sizes = {256, 512, 1024};
  uint32_t trials = 100;
  std::string template_name = "gemm_tiled";
  const double unit = 1e9;  // GFLOP/s
  const char* unit_name = "GF/s";
#endif
  std::string db = "";
  bool json = false;
  int platform = 0, device_index = 0;
  double peak_tflops = 0;
  std::string strategy = "xgb";
  app.add_option("--sizes", sizes, "square sizes")->delimiter(',');
  app.add_option("--trials", trials, "tuning trials per size")
      ->capture_default_str();
  app.add_option("--template", template_name, "gemm template to tune")
      ->capture_default_str();
  app.add_option("--strategy", strategy, "search strategy")
      ->capture_default_str();
  app.add_option("--platform", platform, "OpenCL platform index");
  app.add_option("--device", device_index, "OpenCL device index");
  app.add_option("--peak-tflops", peak_tflops,
                 "the device's FP32 peak (default: computed for NVIDIA GPUs)");
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
  options.platform = platform;
  options.device = device_index;
  auto fleet = cli::EmbeddedFleet::Start(options);
  if (!fleet.ok()) return cli::ReportError("bench", fleet.status());
  auto device = agent::OpenDevice(platform, device_index);
  if (!device.ok()) return cli::ReportError("bench", device.status());
  cl_context ctx = device->context.get();
  cl_device_id dev = device->device;
  cl_command_queue queue = device->queue.get();
  const tunefleet::v1::DeviceInfo info =
      agent::QueryDeviceInfo(device->platform, device->device);
  if (peak_tflops <= 0) peak_tflops = PeakTflops(info);
  const auto bench_start = Clock::now();

  nlohmann::json rows = nlohmann::json::array();
  for (int size : sizes) {
    const std::string shape =
        absl::StrFormat("M=%d,N=%d,K=%d", size, size, size);
    auto workload = *templates::Workload::Parse("gemm", shape);
    auto found = templates::FindTemplateFor(workload, template_name);
    if (!found.ok()) return cli::ReportError("bench", found.status());
    const templates::KernelTemplate& gemm = **found;
    tunefleet::v1::SubmitJobRequest request;
    *request.mutable_workload() = trial::WorkloadToProto(workload);
    request.set_template_name(template_name);
    request.set_trials(trials);
    request.set_strategy(
        proto::ParseStrategy(strategy).value_or(tunefleet::v1::STRATEGY_XGB));
    request.set_skip_reference(true);
    const auto tune_start = Clock::now();
    auto outcome =
        cli::RunJob((*fleet)->connection(), request, nullptr, nullptr);
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
    const double flop = 2.0 * size * size * size;
    const double tuned = flop / (tuned_ms / 1e3) / unit;
    const double peer = clblast_status == clblast::StatusCode::kSuccess
                            ? flop / (clblast_ms / 1e3) / unit
                            : 0.0;
    const double naive = flop / (naive_ms / 1e3) / unit;
    nlohmann::json row = {
        {"size", size},
        {"trials", outcome->last.trials_done()},
        {"tune_s", tune_s},
        {"config", cli::ConfigText(outcome->last.best().config())},
        {"unit", unit_name},
        {"tuned", tuned},
        {"tuned_event", outcome->last.best().gflops() * 1e9 / unit},
        {"clblast", peer},
        {"naive", naive},
        {"ratio_vs_clblast", peer > 0 ? tuned / peer : 0.0},
        {"ratio_vs_naive", tuned / naive},
        {"fraction_of_peak",
         peak_tflops > 0 ? tuned * unit / 1e12 / peak_tflops : 0.0},
    };
    rows.push_back(row);
    std::fprintf(stderr, "size %d done (%.0f s of tuning)\n", size, tune_s);
  }
  const double wall_s =
      std::chrono::duration<double>(Clock::now() - bench_start).count();
  nlohmann::json out = {
      {"device", (*fleet)->device_key()},
      {"template", template_name},
      {"peak_tflops", peak_tflops},
      {"wall_s", wall_s},
      {"rows", rows},
  };
  if (json) {
    std::cout << out.dump(2) << "\n";
    return 0;
  }
  std::cout << "SGEMM on " << (*fleet)->device_key() << ", template "
            << template_name
            << " (host wall time per call, same buffers; FP32 peak "
            << absl::StrFormat("%.1f", peak_tflops) << " TFLOP/s; "
            << absl::StrFormat("%.0f", wall_s) << " s in all)\n";
  std::cout << absl::StrFormat(
      "%6s %7s %8s %8s %10s %10s %10s %8s %10s\n", "size", "trials", "tune s",
      absl::StrCat("tuned ", unit_name), absl::StrCat("CLBlast"),
      absl::StrCat("naive"), "vs CLBlast", "of peak", "vs naive");
  for (const auto& r : rows) {
    std::cout << absl::StrFormat(
        "%6d %7d %8.0f %10.3f %10.3f %10.3f %9.2fx %7.1f%% %9.1fx\n",
        r["size"].get<int>(), r["trials"].get<int>(), r["tune_s"].get<double>(),
        r["tuned"].get<double>(), r["clblast"].get<double>(),
        r["naive"].get<double>(), r["ratio_vs_clblast"].get<double>(),
        100 * r["fraction_of_peak"].get<double>(),
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

int main(int argc, char** argv) { return tunefleet::bench::Main(argc, argv); }
