// Benchmark (not a test): tunes SGEMM with tunefleet (the embedded server
// and agent on this machine's OpenCL device) at several shapes, then times
// the best tuned kernel, CLBlast's SGEMM with its built-in database
// (libclblast-dev), cuBLAS's SGEMM where a CUDA runtime and cuBLAS load
// (bench/cublas_sgemm.h; its own CUDA buffers holding the same data) and
// the naive reference kernel on the same device, the same way: host
// wall-clock over back-to-back calls ending in clFinish or
// cudaDeviceSynchronize (so CLBlast's helper kernels count, as they do for
// its users). Prints the throughput, the ratios tuned / cuBLAS and tuned /
// CLBlast per shape, given the device's FP32 peak the fraction of it
// reached, and from the job's trial records the trials and seconds until
// the job first reached 95% and 99% of its final best.
//
// Built twice from this file: gemm_vs_clblast (defaults: sizes 256, 512,
// 1024, 100 trials, template gemm_tiled) and gpu_gemm (GPU_GEMM_DEFAULTS:
// sizes 1024, 2048, 4096 and the non-square shapes of real models
// 4096x4096x1024, 128x4096x4096 and 4096x128x4096, 300 trials, template
// gemm_gpu, TFLOP/s).
//
//   gemm_vs_clblast [--sizes 256,512,1024] [--shapes MxNxK,...]
//                   [--trials 100] [--template T] [--no-cublas]
//                   [--platform I --device J] [--peak-tflops P] [--json]
#include <clblast.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/status/statusor.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "base/status_macros.h"
#include "bench/bench_fleet.h"
#include "bench/cublas_sgemm.h"
#include "cli/common.h"
#include "client/channel.h"
#include "contract/names.h"
#include "kernels_templates/registry.h"
#include "nlohmann/json.hpp"
#include "opencl/opencl.h"
#include "trial/trial_request.h"
#include "tunefleet/v1/tuning.grpc.pb.h"

namespace tunefleet::bench {
namespace {

using Clock = std::chrono::steady_clock;

// Host time per call of `launch` (ms): warm-up calls, then enough calls to
// last at least `min_ms`, all followed by one clFinish.
template <typename Launch, typename Finish>
double TimePerCallMs(Launch launch, Finish finish, double min_ms) {
  for (int i = 0; i < 2; ++i) launch();
  finish();
  int calls = 1;
  while (true) {
    const auto start = Clock::now();
    for (int i = 0; i < calls; ++i) launch();
    finish();
    const double ms =
        std::chrono::duration<double, std::milli>(Clock::now() - start).count();
    if (ms >= min_ms || calls >= 1 << 14) return ms / calls;
    calls *= 2;
  }
}

// One GEMM shape: C (M x N) = A (M x K) * B (K x N), row-major.
struct Shape {
  int m = 0, n = 0, k = 0;
  std::string Text() const {
    return m == n && n == k ? absl::StrCat(m, "^3")
                            : absl::StrFormat("%dx%dx%d", m, n, k);
  }
};

// Pseudo-random values in [-1, 1].
std::vector<float> HostMatrix(size_t elems, size_t salt) {
  std::vector<float> host(elems);
  for (size_t i = 0; i < elems; ++i) {
    host[i] = static_cast<float>(((i + salt) * 7919) % 2001) / 1000 - 1;
  }
  return host;
}

// Device buffers for one shape: A and B filled from the host matrices
// (kept for cuBLAS's copies), C written by the kernels, and the template's
// zero-filled scratch (gemm_gpu's split-K W and S) by name.
struct Buffers {
  std::vector<float> host_a, host_b;
  opencl::ClMem a, b, c;
  std::map<std::string, opencl::ClMem> scratch;
};

// Errors: the OpenCL call that failed (a shape too large for the device,
// say), by name.
absl::StatusOr<Buffers> MakeBuffers(cl_context ctx, cl_command_queue queue,
                                    const templates::KernelTemplate& tmpl,
                                    const templates::Workload& workload,
                                    const Shape& s) {
  Buffers buf;
  // One buffer of `bytes`, copied from `host` when not null.
  auto create = [ctx](size_t bytes, const void* host,
                      absl::string_view name) -> absl::StatusOr<opencl::ClMem> {
    cl_int err = CL_SUCCESS;
    opencl::ClMem mem(clCreateBuffer(
        ctx, host != nullptr ? CL_MEM_COPY_HOST_PTR : CL_MEM_READ_WRITE, bytes,
        const_cast<void*>(host), &err));
    if (err != CL_SUCCESS) {
      return opencl::ClError(
          absl::StrCat("clCreateBuffer of ", bytes, " bytes for ", name), err);
    }
    return mem;
  };
  for (const templates::BufferDesc& d : tmpl.Buffers(workload)) {
    if (!d.zero_fill) continue;
    TUNEFLEET_ASSIGN_OR_RETURN(opencl::ClMem mem,
                               create(d.elements * 4, nullptr, d.name));
    const float zero = 0;
    if (cl_int err =
            clEnqueueFillBuffer(queue, mem.get(), &zero, sizeof(zero), 0,
                                d.elements * 4, 0, nullptr, nullptr);
        err != CL_SUCCESS) {
      return opencl::ClError(absl::StrCat("clEnqueueFillBuffer of ", d.name),
                             err);
    }
    buf.scratch.emplace(d.name, std::move(mem));
  }
  if (cl_int err = clFinish(queue); err != CL_SUCCESS) {
    return opencl::ClError("clFinish after the scratch fills", err);
  }
  buf.host_a = HostMatrix(static_cast<size_t>(s.m) * s.k, 0);
  buf.host_b = HostMatrix(static_cast<size_t>(s.k) * s.n, 1);
  TUNEFLEET_ASSIGN_OR_RETURN(
      buf.a, create(buf.host_a.size() * 4, buf.host_a.data(), "A"));
  TUNEFLEET_ASSIGN_OR_RETURN(
      buf.b, create(buf.host_b.size() * 4, buf.host_b.data(), "B"));
  TUNEFLEET_ASSIGN_OR_RETURN(
      buf.c, create(static_cast<size_t>(s.m) * s.n * 4, nullptr, "C"));
  return buf;
}

// The launch's kernel built for `dev`; null when it does not build.
opencl::ClKernel BuildKernel(cl_context ctx, cl_device_id dev,
                             const templates::LaunchDesc& l) {
  const std::string source(l.source);
  const char* text = source.c_str();
  cl_int err = CL_SUCCESS;
  opencl::ClProgram p(clCreateProgramWithSource(ctx, 1, &text, nullptr, &err));
  if (err != CL_SUCCESS) return opencl::ClKernel();
  clBuildProgram(p.get(), 1, &dev, l.build_options.c_str(), nullptr, nullptr);
  opencl::ClKernel k(clCreateKernel(p.get(), l.kernel_name.c_str(), &err));
  return err == CL_SUCCESS ? std::move(k) : opencl::ClKernel();
}

// Times one of the template's launches (tuned or reference) on the
// buffers, ms per call; 0 when the kernel does not build.
double TimeTemplateLaunch(const opencl::ClDevice& device,
                          const templates::LaunchDesc& l, const Buffers& buf) {
  opencl::ClKernel kernel = BuildKernel(device.context.get(), device.device, l);
  if (kernel.get() == nullptr) return 0;
  // The template's arguments: M, N, K and the buffers A, B, C and the
  // scratch by name.
  for (cl_uint i = 0; i < l.args.size(); ++i) {
    const templates::ArgDesc& arg = l.args[i];
    if (arg.kind == templates::ArgDesc::Kind::kInt) {
      clSetKernelArg(kernel.get(), i, sizeof(int), &arg.value);
      continue;
    }
    const auto scratch = buf.scratch.find(arg.buffer);
    const cl_mem handle = arg.buffer == "A"              ? buf.a.get()
                          : arg.buffer == "B"            ? buf.b.get()
                          : scratch != buf.scratch.end() ? scratch->second.get()
                                                         : buf.c.get();
    clSetKernelArg(kernel.get(), i, sizeof(cl_mem), &handle);
  }
  const size_t global[2] = {l.global[0], l.global[1]};
  size_t local[2] = {0, 0};
  if (!l.local.empty()) local[0] = l.local[0], local[1] = l.local[1];
  cl_command_queue queue = device.queue.get();
  return TimePerCallMs(
      [&] {
        clEnqueueNDRangeKernel(queue, kernel.get(), 2, nullptr, global,
                               l.local.empty() ? nullptr : local, 0, nullptr,
                               nullptr);
      },
      [&] { clFinish(queue); }, 300);
}

// CLBlast's SGEMM on the same buffers, ms per call; 0 when CLBlast fails.
double TimeClblast(cl_command_queue queue, const Buffers& buf, const Shape& s) {
  clblast::StatusCode status = clblast::StatusCode::kSuccess;
  const double ms = TimePerCallMs(
      [&] {
        status = clblast::Gemm<float>(
            clblast::Layout::kRowMajor, clblast::Transpose::kNo,
            clblast::Transpose::kNo, s.m, s.n, s.k, 1.0f, buf.a.get(), 0, s.k,
            buf.b.get(), 0, s.n, 0.0f, buf.c.get(), 0, s.n, &queue, nullptr);
      },
      [&] { clFinish(queue); }, 300);
  return status == clblast::StatusCode::kSuccess ? ms : 0.0;
}

// C as the last kernel left it.
std::vector<float> ReadC(cl_command_queue queue, const Buffers& buf,
                         const Shape& s) {
  std::vector<float> c(static_cast<size_t>(s.m) * s.n);
  clEnqueueReadBuffer(queue, buf.c.get(), CL_TRUE, 0, c.size() * 4, c.data(), 0,
                      nullptr, nullptr);
  return c;
}

// max|x - ref| / max|ref|, the verification's measure; 1 on a size
// mismatch.
double RelativeError(const std::vector<float>& x,
                     const std::vector<float>& ref) {
  if (x.size() != ref.size()) return 1;
  double diff = 0, scale = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    diff = std::max(diff, static_cast<double>(std::abs(x[i] - ref[i])));
    scale = std::max(scale, static_cast<double>(std::abs(ref[i])));
  }
  return scale > 0 ? diff / scale : diff;
}

// cuBLAS's SGEMM on its own buffers holding the same A and B, timed as the
// OpenCL calls are (host wall time, ending in cudaDeviceSynchronize): ms
// per call and max|C_cublas - C_tuned| / max|C_tuned|; nullopt (with the
// reason on stderr, once) where cuBLAS does not load or fails.
struct CublasResult {
  double ms = 0;
  double error_vs_tuned = 0;
  std::string library;
};
std::optional<CublasResult> TimeCublas(const Buffers& buf, const Shape& s,
                                       const std::vector<float>& tuned_c) {
  static bool reported = false;
  auto fail = [&](const absl::Status& status) -> std::optional<CublasResult> {
    if (!reported)
      std::fprintf(stderr, "bench: no cuBLAS column: %s\n",
                   std::string(status.message()).c_str());
    reported = true;
    return std::nullopt;
  };
  auto cublas = CublasSgemm::Create(s.m, s.n, s.k);
  if (!cublas.ok()) return fail(cublas.status());
  if (absl::Status st = (*cublas)->Upload(buf.host_a, buf.host_b); !st.ok()) {
    return fail(st);
  }
  absl::Status status;
  CublasResult r;
  r.ms = TimePerCallMs(
      [&] {
        if (absl::Status st = (*cublas)->Run(); !st.ok()) status = st;
      },
      [&] {
        if (absl::Status st = (*cublas)->Finish(); !st.ok()) status = st;
      },
      300);
  if (!status.ok()) return fail(status);
  absl::StatusOr<std::vector<float>> c = (*cublas)->Download();
  if (!c.ok()) return fail(c.status());
  r.error_vs_tuned = RelativeError(*c, tuned_c);
  r.library = (*cublas)->describe();
  return r;
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
  // Non-square shapes as MxNxK: a transformer's projection (4096x4096x1024)
  // and skinny products of small batches (128 rows or columns).
  std::vector<std::string> shapes =
      kGpu ? std::vector<std::string>{"4096x4096x1024", "128x4096x4096",
                                      "4096x128x4096"}
           : std::vector<std::string>{};
  uint32_t trials = kGpu ? 300 : 100;
  std::string template_name = kGpu ? "gemm_gpu" : "gemm_tiled";
  double unit = kGpu ? 1e12 : 1e9;  // TFLOP/s or GFLOP/s
  std::string unit_name = kGpu ? "TF/s" : "GF/s";
  std::string db;
  bool json = false;
  bool no_cublas = false;
  int platform = 0;
  int device = 0;
  double peak_tflops = 0;
  std::string strategy = "xgb";
};

void AddFlags(CLI::App& app, Flags& f) {
  app.add_option("--sizes", f.sizes, "square sizes (0: none)")->delimiter(',');
  app.add_option("--shapes", f.shapes, "non-square shapes, MxNxK")
      ->delimiter(',');
  app.add_option("--trials", f.trials, "tuning trials per shape")
      ->capture_default_str();
  app.add_option("--template", f.template_name, "gemm template to tune")
      ->capture_default_str();
  app.add_option("--strategy", f.strategy, "search strategy")
      ->capture_default_str();
  bench::AddBenchFleetFlags(app, f.platform, f.device, f.db);
  app.add_option("--peak-tflops", f.peak_tflops,
                 "the device's FP32 peak (default: computed for NVIDIA GPUs)");
  app.add_flag("--no-cublas", f.no_cublas, "leave out the cuBLAS column");
  app.add_flag("--json", f.json, "print JSON instead of a table");
}

// The shapes of the run: the squares, then the MxNxK ones.
absl::StatusOr<std::vector<Shape>> ParseShapes(const Flags& f) {
  std::vector<Shape> shapes;
  for (int size : f.sizes) {
    if (size == 0) continue;  // --sizes "" or 0: no squares
    shapes.push_back({size, size, size});
  }
  for (const std::string& text : f.shapes) {
    if (text.empty()) continue;  // --shapes "": squares only
    std::vector<std::string> parts = absl::StrSplit(text, 'x');
    Shape s;
    if (parts.size() != 3 || !absl::SimpleAtoi(parts[0], &s.m) ||
        !absl::SimpleAtoi(parts[1], &s.n) ||
        !absl::SimpleAtoi(parts[2], &s.k) || s.m < 1 || s.n < 1 || s.k < 1) {
      return absl::InvalidArgumentError(
          absl::StrCat("--shapes: '", text, "' is not MxNxK"));
    }
    shapes.push_back(s);
  }
  return shapes;
}

// Tunes one shape through the embedded fleet and returns the best config
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
                             contract::ParseStrategy(f.strategy));
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

// Every trial record of a job (QueryRecords, all pages), by trial id.
absl::StatusOr<std::vector<tunefleet::v1::TuningRecord>> JobRecords(
    const cli::EmbeddedFleet& fleet, int64_t job_id) {
  auto stub =
      tunefleet::v1::TuningService::NewStub(client::Dial(fleet.connection()));
  tunefleet::v1::QueryRecordsRequest request;
  request.set_job_id(job_id);
  request.set_page_size(10000);
  std::vector<tunefleet::v1::TuningRecord> records;
  while (true) {
    tunefleet::v1::QueryRecordsResponse response;
    grpc::ClientContext context;
    const grpc::Status status =
        stub->QueryRecords(&context, request, &response);
    if (!status.ok()) {
      return absl::UnavailableError(
          absl::StrCat("QueryRecords: ", status.error_message()));
    }
    records.insert(records.end(), response.records().begin(),
                   response.records().end());
    if (response.next_page_token().empty() || response.records().empty() ||
        response.next_page_token() == request.page_token()) {
      break;
    }
    request.set_page_token(response.next_page_token());
  }
  return records;
}

// When the job first reached `fraction` of its final best: trials stored
// by then (in order of measured_unix_ms) and seconds since `start_unix_ms`
// (the submission). {0, 0} when no trial succeeded.
struct Reached {
  int trials = 0;
  double seconds = 0;
};
Reached FirstReached(std::vector<tunefleet::v1::TuningRecord> records,
                     int64_t start_unix_ms, double fraction) {
  std::stable_sort(records.begin(), records.end(),
                   [](const auto& a, const auto& b) {
                     return a.measured_unix_ms() < b.measured_unix_ms();
                   });
  double best = 0;
  for (const auto& r : records) best = std::max(best, r.gflops());
  for (size_t i = 0; i < records.size(); ++i) {
    if (best > 0 && records[i].gflops() >= fraction * best) {
      return {static_cast<int>(i + 1),
              (records[i].measured_unix_ms() - start_unix_ms) / 1e3};
    }
  }
  return {};
}

int64_t UnixMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// One shape: tuned, then the tuned kernel, cuBLAS, CLBlast and the naive
// kernel timed. A JSON row; null when nothing was valid.
absl::StatusOr<nlohmann::json> BenchShape(const Flags& f,
                                          const cli::EmbeddedFleet& fleet,
                                          const opencl::ClDevice& device,
                                          const Shape& s) {
  TUNEFLEET_ASSIGN_OR_RETURN(
      templates::Workload workload,
      templates::Workload::Parse(
          "gemm", absl::StrFormat("M=%d,N=%d,K=%d", s.m, s.n, s.k)));
  TUNEFLEET_ASSIGN_OR_RETURN(
      const templates::KernelTemplate* gemm,
      templates::FindTemplateFor(workload, f.template_name));
  const auto tune_start = Clock::now();
  const int64_t tune_start_unix_ms = UnixMs();
  TUNEFLEET_ASSIGN_OR_RETURN(auto tuned_config,
                             Tune(f, fleet, workload, *gemm));
  const double tune_s =
      std::chrono::duration<double>(Clock::now() - tune_start).count();
  if (!tuned_config) return nlohmann::json();
  const auto& [config, outcome] = *tuned_config;
  TUNEFLEET_ASSIGN_OR_RETURN(
      const std::vector<tunefleet::v1::TuningRecord> records,
      JobRecords(fleet, outcome.submitted.job_id()));
  const Reached r95 = FirstReached(records, tune_start_unix_ms, 0.95);
  const Reached r99 = FirstReached(records, tune_start_unix_ms, 0.99);
  cl_command_queue queue = device.queue.get();
  TUNEFLEET_ASSIGN_OR_RETURN(
      const Buffers buf,
      MakeBuffers(device.context.get(), queue, *gemm, workload, s));
  const double tuned_ms =
      TimeTemplateLaunch(device, gemm->Launch(config, workload), buf);
  const std::vector<float> tuned_c = ReadC(queue, buf, s);
  std::optional<CublasResult> cublas;
  if (!f.no_cublas) cublas = TimeCublas(buf, s, tuned_c);
  const double naive_ms =
      TimeTemplateLaunch(device, gemm->ReferenceLaunch(workload), buf);
  const double clblast_ms = TimeClblast(queue, buf, s);
  // FLOPs per call over ms per call, in the unit of the run.
  const double flop = 2.0 * s.m * s.n * s.k;
  auto rate = [&](double ms) {
    return ms > 0 ? flop / (ms / 1e3) / f.unit : 0;
  };
  const double tuned = rate(tuned_ms), peer = rate(clblast_ms);
  const double cublas_rate = cublas ? rate(cublas->ms) : 0;
  return nlohmann::json{
      {"shape", s.Text()},
      {"m", s.m},
      {"n", s.n},
      {"k", s.k},
      {"trials", outcome.last.trials_done()},
      {"tune_s", tune_s},
      {"config", cli::ConfigText(outcome.last.best().config())},
      {"unit", f.unit_name},
      {"tuned", tuned},
      {"tuned_event", outcome.last.best().gflops() * 1e9 / f.unit},
      {"cublas", cublas_rate},
      {"cublas_error_vs_tuned", cublas ? cublas->error_vs_tuned : 0.0},
      {"cublas_library", cublas ? cublas->library : ""},
      {"clblast", peer},
      {"naive", rate(naive_ms)},
      {"ratio_vs_cublas", cublas_rate > 0 ? tuned / cublas_rate : 0.0},
      {"ratio_vs_clblast", peer > 0 ? tuned / peer : 0.0},
      {"ratio_vs_naive", rate(naive_ms) > 0 ? tuned / rate(naive_ms) : 0.0},
      {"fraction_of_peak",
       f.peak_tflops > 0 ? tuned * f.unit / 1e12 / f.peak_tflops : 0.0},
      {"trials_to_95", r95.trials},
      {"seconds_to_95", r95.seconds},
      {"trials_to_99", r99.trials},
      {"seconds_to_99", r99.seconds},
  };
}

void PrintTable(const Flags& f, const nlohmann::json& out) {
  std::cout << "SGEMM on " << out["device"].get<std::string>() << ", template "
            << f.template_name
            << " (host wall time per call; cuBLAS on its own CUDA buffers "
               "holding the same data; FP32 peak "
            << absl::StrFormat("%.1f", f.peak_tflops) << " TFLOP/s; "
            << absl::StrFormat("%.0f", out["wall_s"].get<double>())
            << " s in all)\n";
  std::cout << absl::StrFormat(
      "%-15s %6s %6s %9s %8s %8s %7s %8s %8s %7s %13s %13s\n", "shape",
      "trials", "tune s", absl::StrCat("tuned ", f.unit_name), "cuBLAS",
      "CLBlast", "naive", "vs cuBLAS", "vs CLBl", "of peak", "95%: trials/s",
      "99%: trials/s");
  for (const auto& r : out["rows"]) {
    std::cout << absl::StrFormat(
        "%-15s %6d %6.0f %9.2f %8.2f %8.2f %7.2f %8.2fx %7.2fx %6.1f%% "
        "%6d/%5.0fs %6d/%5.0fs\n",
        r["shape"].get<std::string>(), r["trials"].get<int>(),
        r["tune_s"].get<double>(), r["tuned"].get<double>(),
        r["cublas"].get<double>(), r["clblast"].get<double>(),
        r["naive"].get<double>(), r["ratio_vs_cublas"].get<double>(),
        r["ratio_vs_clblast"].get<double>(),
        100 * r["fraction_of_peak"].get<double>(), r["trials_to_95"].get<int>(),
        r["seconds_to_95"].get<double>(), r["trials_to_99"].get<int>(),
        r["seconds_to_99"].get<double>());
  }
  for (const auto& r : out["rows"]) {
    std::cout << "  " << r["shape"].get<std::string>() << ": "
              << r["config"].get<std::string>();
    if (r["cublas"].get<double>() > 0) {
      std::cout << absl::StrFormat(
          " (cuBLAS %s, max|C_cublas - C_tuned| / max|C_tuned| = %.1e)",
          r["cublas_library"].get<std::string>(),
          r["cublas_error_vs_tuned"].get<double>());
    }
    std::cout << "\n";
  }
}

int Main(int argc, char** argv) {
  CLI::App app{kGpu ? "gpu_gemm: tuned SGEMM (template gemm_gpu) vs cuBLAS and "
                      "CLBlast SGEMM on a GPU, in TFLOP/s and as a fraction "
                      "of FP32 peak"
                    : "tuned SGEMM vs CLBlast SGEMM on this machine's OpenCL "
                      "device"};
  Flags f;
  AddFlags(app, f);
  CLI11_PARSE(app, argc, argv);
  auto fleet =
      bench::StartBenchFleet("gemm_vs_clblast", f.db, f.platform, f.device);
  if (!fleet.ok()) return cli::ReportError("bench", fleet.status());
  auto device = opencl::OpenDevice(f.platform, f.device);
  if (!device.ok()) return cli::ReportError("bench", device.status());
  if (f.peak_tflops <= 0) {
    f.peak_tflops =
        PeakTflops(opencl::QueryDeviceInfo(device->platform, device->device));
  }
  absl::StatusOr<std::vector<Shape>> shapes = ParseShapes(f);
  if (!shapes.ok()) return cli::ReportError("bench", shapes.status());
  const auto bench_start = Clock::now();
  nlohmann::json rows = nlohmann::json::array();
  for (const Shape& s : *shapes) {
    absl::StatusOr<nlohmann::json> row = BenchShape(f, **fleet, *device, s);
    if (!row.ok()) return cli::ReportError("bench", row.status());
    if (row->is_null()) {
      std::fprintf(stderr, "bench: no valid config at %s\n", s.Text().c_str());
      continue;
    }
    std::fprintf(stderr, "%s done (%.0f s of tuning)\n", s.Text().c_str(),
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
