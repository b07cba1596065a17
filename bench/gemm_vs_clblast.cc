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
#include "base/status_macros.h"
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

// Device buffers for one size: A and B filled with the same pseudo-random
// values in [-1, 1], C written by the kernels.
struct Buffers {
  agent::ClMem a, b, c;
};

Buffers MakeBuffers(cl_context ctx, int size) {
  const size_t elems = static_cast<size_t>(size) * size;
  std::vector<float> host(elems);
  for (size_t i = 0; i < elems; ++i) {
    host[i] = static_cast<float>((i * 7919) % 2001) / 1000 - 1;
  }
  cl_int err = CL_SUCCESS;
  Buffers buf;
  buf.a = agent::ClMem(
      clCreateBuffer(ctx, CL_MEM_COPY_HOST_PTR, elems * 4, host.data(), &err));
  buf.b = agent::ClMem(
      clCreateBuffer(ctx, CL_MEM_COPY_HOST_PTR, elems * 4, host.data(), &err));
  buf.c = agent::ClMem(
      clCreateBuffer(ctx, CL_MEM_READ_WRITE, elems * 4, nullptr, &err));
  return buf;
}

// The launch's kernel built for `dev`; null when it does not build.
agent::ClKernel BuildKernel(cl_context ctx, cl_device_id dev,
                            const templates::LaunchDesc& l) {
  const std::string source(l.source);
  const char* text = source.c_str();
  cl_int err = CL_SUCCESS;
  agent::ClProgram p(clCreateProgramWithSource(ctx, 1, &text, nullptr, &err));
  if (err != CL_SUCCESS) return agent::ClKernel();
  clBuildProgram(p.get(), 1, &dev, l.build_options.c_str(), nullptr, nullptr);
  agent::ClKernel k(clCreateKernel(p.get(), l.kernel_name.c_str(), &err));
  return err == CL_SUCCESS ? std::move(k) : agent::ClKernel();
}

// Times one of the template's launches (tuned or reference) on the
// buffers, ms per call; 0 when the kernel does not build.
double TimeTemplateLaunch(const agent::ClDevice& device,
                          const templates::LaunchDesc& l, const Buffers& buf,
                          int m, int n, int k) {
  agent::ClKernel kernel = BuildKernel(device.context.get(), device.device, l);
  if (kernel.get() == nullptr) return 0;
  clSetKernelArg(kernel.get(), 0, sizeof(int), &m);
  clSetKernelArg(kernel.get(), 1, sizeof(int), &n);
  clSetKernelArg(kernel.get(), 2, sizeof(int), &k);
  for (cl_uint i = 0; const agent::ClMem* mem : {&buf.a, &buf.b, &buf.c}) {
    const cl_mem handle = mem->get();
    clSetKernelArg(kernel.get(), 3 + i++, sizeof(cl_mem), &handle);
  }
  const size_t global[2] = {l.global[0], l.global[1]};
  size_t local[2] = {0, 0};
  if (!l.local.empty()) local[0] = l.local[0], local[1] = l.local[1];
  cl_command_queue queue = device.queue.get();
  return TimePerCallMs(
      queue,
      [&] {
        clEnqueueNDRangeKernel(queue, kernel.get(), 2, nullptr, global,
                               l.local.empty() ? nullptr : local, 0, nullptr,
                               nullptr);
      },
      300);
}

// CLBlast's SGEMM on the same buffers, ms per call; 0 when CLBlast fails.
double TimeClblast(cl_command_queue queue, const Buffers& buf, int size) {
  clblast::StatusCode status = clblast::StatusCode::kSuccess;
  const double ms = TimePerCallMs(
      queue,
      [&] {
        status = clblast::Gemm<float>(
            clblast::Layout::kRowMajor, clblast::Transpose::kNo,
            clblast::Transpose::kNo, size, size, size, 1.0f, buf.a.get(), 0,
            size, buf.b.get(), 0, size, 0.0f, buf.c.get(), 0, size, &queue,
            nullptr);
      },
      300);
  return status == clblast::StatusCode::kSuccess ? ms : 0.0;
}

// FP32 peak in TFLOP/s: CUs x clock x FP32 lanes per CU x 2 (an FMA is two
// FLOPs). Lanes per CU are not an OpenCL query; NVIDIA SMs since Ampere
// (GA10x) and Hopper (GH100 whitepaper) have 128. 0 when unknown.
double PeakTflops(const tunefleet::v1::DeviceInfo& d) {
  if (d.vendor().find("NVIDIA") == std::string::npos) return 0;
  return d.compute_units() * (d.max_clock_mhz() * 1e6) * 128 * 2 / 1e12;
}

#ifdef GPU_GEMM_DEFAULTS
constexpr bool kGpu = true;  // bench/gpu_gemm
#else
constexpr bool kGpu = false;
#endif

// The command line, with the defaults of the CPU or the GPU benchmark.
struct Flags {
  std::vector<int> sizes = kGpu ? std::vector<int>{1024, 2048, 4096}
                                : std::vector<int>{256, 512, 1024};
  uint32_t trials = kGpu ? 300 : 100;
  std::string template_name = kGpu ? "gemm_gpu" : "gemm_tiled";
  double unit = kGpu ? 1e12 : 1e9;  // TFLOP/s or GFLOP/s
  std::string unit_name = kGpu ? "TF/s" : "GF/s";
  std::string db;
  bool json = false;
  int platform = 0;
  int device = 0;
  double peak_tflops = 0;
  std::string strategy = "xgb";
};

void AddFlags(CLI::App& app, Flags& f) {
  app.add_option("--sizes", f.sizes, "square sizes")->delimiter(',');
  app.add_option("--trials", f.trials, "tuning trials per size")
      ->capture_default_str();
  app.add_option("--template", f.template_name, "gemm template to tune")
      ->capture_default_str();
  app.add_option("--strategy", f.strategy, "search strategy")
      ->capture_default_str();
  app.add_option("--platform", f.platform, "OpenCL platform index");
  app.add_option("--device", f.device, "OpenCL device index");
  app.add_option("--peak-tflops", f.peak_tflops,
                 "the device's FP32 peak (default: computed for NVIDIA GPUs)");
  app.add_option("--db", f.db, "database (default: a temporary file)");
  app.add_flag("--json", f.json, "print JSON instead of a table");
}

// Tunes one size through the embedded fleet and returns the best config
// and the job's last progress; nullopt when no config was valid.
absl::StatusOr<std::optional<std::pair<templates::KnobValues, cli::JobOutcome>>>
Tune(const Flags& f, const cli::EmbeddedFleet& fleet,
     const templates::Workload& workload,
     const templates::KernelTemplate& gemm) {
  tunefleet::v1::SubmitJobRequest request;
  *request.mutable_workload() = trial::WorkloadToProto(workload);
  request.set_template_name(f.template_name);
  request.set_trials(f.trials);
  TUNEFLEET_ASSIGN_OR_RETURN(const tunefleet::v1::Strategy strategy,
                             proto::ParseStrategy(f.strategy));
  request.set_strategy(strategy);
  request.set_skip_reference(true);
  TUNEFLEET_ASSIGN_OR_RETURN(
      cli::JobOutcome outcome,
      cli::RunJob(fleet.connection(), request, nullptr, nullptr));
  if (!outcome.last.has_best()) return std::nullopt;
  std::vector<std::pair<std::string, int64_t>> pairs;
  for (const auto& kv : outcome.last.best().config().knobs()) {
    pairs.emplace_back(kv.name(), kv.value());
  }
  TUNEFLEET_ASSIGN_OR_RETURN(templates::KnobValues config,
                             gemm.ConfigFromPairs(pairs));
  return std::make_pair(std::move(config), std::move(outcome));
}

// One size: tuned, then the tuned kernel, CLBlast and the naive kernel
// timed on the same buffers. A JSON row; null when nothing was valid.
absl::StatusOr<nlohmann::json> BenchSize(const Flags& f,
                                         const cli::EmbeddedFleet& fleet,
                                         const agent::ClDevice& device,
                                         int size) {
  TUNEFLEET_ASSIGN_OR_RETURN(
      templates::Workload workload,
      templates::Workload::Parse(
          "gemm", absl::StrFormat("M=%d,N=%d,K=%d", size, size, size)));
  TUNEFLEET_ASSIGN_OR_RETURN(
      const templates::KernelTemplate* gemm,
      templates::FindTemplateFor(workload, f.template_name));
  const auto tune_start = Clock::now();
  TUNEFLEET_ASSIGN_OR_RETURN(auto tuned_config,
                             Tune(f, fleet, workload, *gemm));
  const double tune_s =
      std::chrono::duration<double>(Clock::now() - tune_start).count();
  if (!tuned_config) return nlohmann::json();
  const auto& [config, outcome] = *tuned_config;
  const Buffers buf = MakeBuffers(device.context.get(), size);
  const double tuned_ms = TimeTemplateLaunch(
      device, gemm->Launch(config, workload), buf, size, size, size);
  const double naive_ms = TimeTemplateLaunch(
      device, gemm->ReferenceLaunch(workload), buf, size, size, size);
  const double clblast_ms = TimeClblast(device.queue.get(), buf, size);
  // FLOPs per call over ms per call, in the unit of the run.
  const double flop = 2.0 * size * size * size;
  auto rate = [&](double ms) {
    return ms > 0 ? flop / (ms / 1e3) / f.unit : 0;
  };
  const double tuned = rate(tuned_ms), peer = rate(clblast_ms);
  return nlohmann::json{
      {"size", size},
      {"trials", outcome.last.trials_done()},
      {"tune_s", tune_s},
      {"config", cli::ConfigText(outcome.last.best().config())},
      {"unit", f.unit_name},
      {"tuned", tuned},
      {"tuned_event", outcome.last.best().gflops() * 1e9 / f.unit},
      {"clblast", peer},
      {"naive", rate(naive_ms)},
      {"ratio_vs_clblast", peer > 0 ? tuned / peer : 0.0},
      {"ratio_vs_naive", rate(naive_ms) > 0 ? tuned / rate(naive_ms) : 0.0},
      {"fraction_of_peak",
       f.peak_tflops > 0 ? tuned * f.unit / 1e12 / f.peak_tflops : 0.0},
  };
}

void PrintTable(const Flags& f, const nlohmann::json& out) {
  std::cout << "SGEMM on " << out["device"].get<std::string>() << ", template "
            << f.template_name
            << " (host wall time per call, same buffers; FP32 peak "
            << absl::StrFormat("%.1f", f.peak_tflops) << " TFLOP/s; "
            << absl::StrFormat("%.0f", out["wall_s"].get<double>())
            << " s in all)\n";
  std::cout << absl::StrFormat("%6s %7s %8s %8s %10s %10s %10s %8s %10s\n",
                               "size", "trials", "tune s",
                               absl::StrCat("tuned ", f.unit_name), "CLBlast",
                               "naive", "vs CLBlast", "of peak", "vs naive");
  for (const auto& r : out["rows"]) {
    std::cout << absl::StrFormat(
        "%6d %7d %8.0f %10.3f %10.3f %10.3f %9.2fx %7.1f%% %9.1fx\n",
        r["size"].get<int>(), r["trials"].get<int>(), r["tune_s"].get<double>(),
        r["tuned"].get<double>(), r["clblast"].get<double>(),
        r["naive"].get<double>(), r["ratio_vs_clblast"].get<double>(),
        100 * r["fraction_of_peak"].get<double>(),
        r["ratio_vs_naive"].get<double>());
  }
  for (const auto& r : out["rows"]) {
    std::cout << "  " << r["size"].get<int>() << ": "
              << r["config"].get<std::string>() << "\n";
  }
}

int Main(int argc, char** argv) {
  CLI::App app{kGpu ? "gpu_gemm: tuned SGEMM (template gemm_gpu) vs CLBlast "
                      "SGEMM on a GPU, in TFLOP/s and as a fraction of FP32 "
                      "peak"
                    : "tuned SGEMM vs CLBlast SGEMM on this machine's OpenCL "
                      "device"};
  Flags f;
  AddFlags(app, f);
  CLI11_PARSE(app, argc, argv);
  if (f.db.empty()) {
    f.db = (std::filesystem::temp_directory_path() /
            ("gemm_vs_clblast_" + std::to_string(getpid()) + ".db"))
               .string();
  }
  cli::EmbeddedOptions options;
  options.db_path = f.db;
  options.platform = f.platform;
  options.device = f.device;
  auto fleet = cli::EmbeddedFleet::Start(options);
  if (!fleet.ok()) return cli::ReportError("bench", fleet.status());
  auto device = agent::OpenDevice(f.platform, f.device);
  if (!device.ok()) return cli::ReportError("bench", device.status());
  if (f.peak_tflops <= 0) {
    f.peak_tflops =
        PeakTflops(agent::QueryDeviceInfo(device->platform, device->device));
  }
  const auto bench_start = Clock::now();
  nlohmann::json rows = nlohmann::json::array();
  for (int size : f.sizes) {
    absl::StatusOr<nlohmann::json> row = BenchSize(f, **fleet, *device, size);
    if (!row.ok()) return cli::ReportError("bench", row.status());
    if (row->is_null()) {
      std::fprintf(stderr, "bench: no valid config at %d\n", size);
      continue;
    }
    std::fprintf(stderr, "size %d done (%.0f s of tuning)\n", size,
                 (*row)["tune_s"].get<double>());
    rows.push_back(*std::move(row));
  }
  const nlohmann::json out = {
      {"device", (*fleet)->device_key()},
      {"template", f.template_name},
      {"peak_tflops", f.peak_tflops},
      {"wall_s",
       std::chrono::duration<double>(Clock::now() - bench_start).count()},
      {"rows", rows},
  };
  if (f.json) {
    std::cout << out.dump(2) << "\n";
  } else {
    PrintTable(f, out);
  }
  return 0;
}

}  // namespace
}  // namespace tunefleet::bench

int main(int argc, char** argv) { return tunefleet::bench::Main(argc, argv); }
