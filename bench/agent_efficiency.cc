// Benchmark (not a test): what each of the device agent's efficiency
// measures saves on this machine's OpenCL device, each figure with and
// without the measure, measured in the same run:
//   (a) program build: cold source build vs the persistent binary cache
//       (a fresh Measurer, i.e. fresh ProgramCache, on a temporary directory)
//   (b) in-memory program cache: hit vs rebuild
//   (c) device buffers and reference output reused across the trials of a
//       workload vs a fresh workload (allocate, fill, reference) per trial
//   (d) a batch of trials as the agent runs them, with the next trial's
//       program built in the background (prefetch) vs not
//   (e) timing rounds replayed from a cl_khr_command_buffer vs plain
//       enqueues, for a tiny kernel (dispatch-bound) and for the gemm
//
//   agent_efficiency [--platform I --device J] [--template gemm_gpu]
//                    [--size 256] [--configs 16] [--seed 1] [--json]
//
// Builds carry a per-run -D define (a nonce) so that driver-level program
// caches (PoCL's kernel cache, NVIDIA's compute cache) cannot make a
// "cold" build warm from an earlier run; --no-nonce turns that off.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/cleanup/cleanup.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/stats.h"
#include "base/time.h"
#include "contract/timing_policy.h"
#include "kernels_templates/registry.h"
#include "measure/measurer.h"
#include "nlohmann/json.hpp"
#include "opencl/program_cache.h"
#include "trial/trial_request.h"

namespace tunefleet::bench {
namespace {

using measure::Measurer;
using measure::MeasurerOptions;
using tunefleet::v1::Measurement;
using tunefleet::v1::MeasureRequest;
using Clock = std::chrono::steady_clock;

using base::Median;
using base::MsSince;

double Mean(const std::vector<double>& v) {
  if (v.empty()) return 0;
  double sum = 0;
  for (double x : v) sum += x;
  return sum / v.size();
}

std::string Env(const char* name) {
  const char* v = std::getenv(name);
  return v == nullptr ? "(unset)" : v;
}

struct Setup {
  int platform = 0;
  int device = 0;
};

absl::StatusOr<std::unique_ptr<Measurer>> NewMeasurer(const Setup& setup,
                                                      MeasurerOptions options) {
  absl::StatusOr<opencl::ClDevice> device =
      opencl::OpenDevice(setup.platform, setup.device);
  if (!device.ok()) return device.status();
  return Measurer::Create(*std::move(device), std::move(options));
}

// The requests of `configs`, their programs made distinct from any earlier
// run's by `nonce` (0: none).
std::vector<MeasureRequest> Requests(
    const templates::KernelTemplate& tmpl, const templates::Workload& w,
    const std::vector<templates::KnobValues>& configs,
    const v1::TimingPolicy& timing, uint64_t nonce,
    const std::string& workload_suffix = "") {
  std::vector<MeasureRequest> out;
  for (size_t i = 0; i < configs.size(); ++i) {
    MeasureRequest r =
        trial::BuildMeasureRequest(tmpl, w, configs[i], i + 1, timing);
    if (nonce != 0) {
      const std::string define = absl::StrCat(" -DTF_BENCH_NONCE=", nonce);
      r.mutable_kernel()->mutable_build_options()->append(define);
      r.mutable_verification()
          ->mutable_reference()
          ->mutable_build_options()
          ->append(define);
      r.mutable_verification()->mutable_reference_key()->append(define);
    }
    r.mutable_workload_key()->append(workload_suffix);
    out.push_back(std::move(r));
  }
  return out;
}

// y = 2x over `elements` floats: a kernel whose launches cost less than
// their dispatch.
MeasureRequest TinyRequest(uint64_t elements, uint32_t number) {
  MeasureRequest r;
  r.set_trial_id(1);
  r.set_workload_key(absl::StrCat("bench tiny ", elements));
  for (const char* name : {"x", "y"}) {
    v1::BufferSpec* b = r.add_buffers();
    b->set_name(name);
    b->set_elements(elements);
    b->set_dtype(v1::DTYPE_FP32);
    const bool output = std::string(name) == "y";
    b->set_output(output);
    b->set_fill(output ? v1::BufferSpec::ZERO : v1::BufferSpec::UNIFORM);
    b->set_seed(5);
  }
  for (v1::KernelLaunch* k :
       {r.mutable_kernel(), r.mutable_verification()->mutable_reference()}) {
    k->set_source(
        "__kernel void twice(__global float* y, __global const float* x) {\n"
        "  const int i = get_global_id(0);\n  y[i] = 2.0f * x[i];\n}\n");
    k->set_kernel_name("twice");
    k->add_global_size(elements);
    k->add_args()->set_buffer("y");
    k->add_args()->set_buffer("x");
  }
  r.mutable_verification()->set_reference_key("bench tiny");
  r.mutable_verification()->set_rtol(1e-6);
  r.mutable_timing()->set_repeat(5);
  r.mutable_timing()->set_number(number);
  r.mutable_timing()->set_max_launches(1000000);
  r.mutable_timing()->set_max_total_ms(60000);
  return r;
}

// Distinct random configs of `tmpl` valid for `w` on the device.
std::vector<templates::KnobValues> PickConfigs(
    const templates::KernelTemplate& tmpl, const templates::Workload& w,
    const templates::DeviceLimits& limits, int count, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::set<templates::KnobValues> seen;
  std::vector<templates::KnobValues> out;
  for (int attempt = 0;
       attempt < 200000 && static_cast<int>(out.size()) < count; ++attempt) {
    templates::KnobValues c;
    for (const templates::Knob& k : tmpl.knobs()) {
      c.push_back(k.values[rng() % k.values.size()]);
    }
    if (seen.insert(c).second && tmpl.ConfigValid(c, w, limits)) {
      out.push_back(c);
    }
  }
  return out;
}

// Measures every request; returns false (after printing) on a failed one.
struct Pass {
  std::vector<Measurement> results;
  double wall_ms = 0;
  bool ok = true;
};
Pass RunAll(Measurer& m, const std::vector<MeasureRequest>& requests,
            bool prefetch_next) {
  Pass pass;
  const auto start = Clock::now();
  for (size_t i = 0; i < requests.size(); ++i) {
    // As Agent::MeasureLoop: the next queued trial is prefetched first.
    if (prefetch_next && i + 1 < requests.size()) m.Prefetch(requests[i + 1]);
    pass.results.push_back(m.Measure(requests[i]));
    const Measurement& r = pass.results.back();
    if (r.error() != Measurement::OK) {
      std::cerr << "trial " << i << ": " << Measurement::Error_Name(r.error())
                << " " << r.error_message().substr(0, 400) << "\n";
      pass.ok = false;
    }
  }
  pass.wall_ms = base::MsSince(start);
  return pass;
}

std::vector<double> Field(const Pass& pass, double (*get)(const Measurement&)) {
  std::vector<double> v;
  for (const Measurement& m : pass.results) v.push_back(get(m));
  return v;
}
double CompileMs(const Measurement& m) { return m.compile_ms(); }
double WallMs(const Measurement& m) { return m.wall_ms(); }
double KernelMs(const Measurement& m) {
  std::vector<double> t(m.times_ns().begin(), m.times_ns().end());
  return base::Median(t) / 1e6;
}

int CountSource(const Pass& pass, Measurement::ProgramSource source) {
  int n = 0;
  for (const Measurement& m : pass.results) n += m.program_source() == source;
  return n;
}

// One replay-vs-plain comparison: medians over `trials` measurements.
struct ReplayFigures {
  bool available = false;
  std::string reason;
  uint32_t number = 0;
  double plain_wall_ms_per_round = 0, replay_wall_ms_per_round = 0;
  double plain_submit_ms_per_round = 0, replay_submit_ms_per_round = 0;
  double replay_record_ms = 0;
  double plain_launch_ns = 0, replay_launch_ns = 0;
  int fallbacks = 0;
  std::string clock;  // where replayed device times were read
};

absl::StatusOr<ReplayFigures> CompareReplay(Measurer& plain, Measurer& replay,
                                            const MeasureRequest& request,
                                            int trials) {
  ReplayFigures f;
  f.available = replay.replay_enabled();
  f.reason = replay.replay_unavailable_reason();
  std::vector<double> pw, rw, ps, rs, rr, pl, rl;
  for (int t = 0; t < trials; ++t) {
    for (Measurer* m : {&plain, &replay}) {
      if (m == &replay && !f.available) continue;
      const Measurement r = m->Measure(request);
      if (r.error() != Measurement::OK) {
        return absl::InternalError(
            absl::StrCat(Measurement::Error_Name(r.error()), " ",
                         r.error_message().substr(0, 400)));
      }
      f.number = r.number();
      const Measurer::TimingStats& s = m->last_timing();
      std::vector<double> times(r.times_ns().begin(), r.times_ns().end());
      if (m == &plain) {
        pw.push_back(s.wall_ms_per_round);
        ps.push_back(s.submit_ms_per_round);
        pl.push_back(base::Median(times));
      } else {
        rw.push_back(s.wall_ms_per_round);
        rs.push_back(s.submit_ms_per_round);
        rr.push_back(s.record_ms);
        rl.push_back(base::Median(times));
        if (!r.replayed()) ++f.fallbacks;
        f.clock = s.replay_clock;
      }
    }
  }
  f.plain_wall_ms_per_round = base::Median(pw);
  f.plain_submit_ms_per_round = base::Median(ps);
  f.plain_launch_ns = base::Median(pl);
  f.replay_wall_ms_per_round = base::Median(rw);
  f.replay_submit_ms_per_round = base::Median(rs);
  f.replay_record_ms = base::Median(rr);
  f.replay_launch_ns = base::Median(rl);
  return f;
}

// The figures as JSON; the replayed ones only where replay was available.
nlohmann::json ReplayJson(const ReplayFigures& f) {
  nlohmann::json j = {
      {"available", f.available},
      {"number", f.number},
      {"plain_wall_ms_per_round", f.plain_wall_ms_per_round},
      {"plain_submit_ms_per_round", f.plain_submit_ms_per_round},
      {"plain_device_ns_per_launch", f.plain_launch_ns}};
  if (!f.available) {
    j["reason"] = f.reason;
    return j;
  }
  j.update({{"replay_wall_ms_per_round", f.replay_wall_ms_per_round},
            {"replay_submit_ms_per_round", f.replay_submit_ms_per_round},
            {"replay_record_ms", f.replay_record_ms},
            {"replay_device_ns_per_launch", f.replay_launch_ns},
            {"replay_fallbacks", f.fallbacks},
            {"replay_clock", f.clock}});
  return j;
}

// Prints ReplayJson's figures as a small table.
void PrintReplay(const std::string& what, const nlohmann::json& f) {
  const uint32_t number = f["number"].get<uint32_t>();
  const double plain_wall = f["plain_wall_ms_per_round"].get<double>();
  const double plain_launch = f["plain_device_ns_per_launch"].get<double>();
  std::cout << absl::StrFormat("  %s, %u launches per round:\n", what, number);
  if (!f["available"].get<bool>()) {
    std::cout << "    replay not available on this device ("
              << f["reason"].get<std::string>() << "); plain enqueues: "
              << absl::StrFormat("%.3f ms per round, %.0f ns per launch\n",
                                 plain_wall, plain_launch);
    return;
  }
  const double replay_wall = f["replay_wall_ms_per_round"].get<double>();
  std::cout << absl::StrFormat("    %-34s %12s %12s\n", "", "plain",
                               "replayed");
  std::cout << absl::StrFormat(
      "    %-34s %12.3f %12.3f   (%.2fx)\n", "host wall ms per round",
      plain_wall, replay_wall,
      replay_wall > 0 ? plain_wall / replay_wall : 0.0);
  std::cout << absl::StrFormat("    %-34s %12.3f %12.3f\n",
                               "host submit ms per round",
                               f["plain_submit_ms_per_round"].get<double>(),
                               f["replay_submit_ms_per_round"].get<double>());
  std::cout << absl::StrFormat("    %-34s %12s %12.3f\n",
                               "record + finalize ms (once/trial)", "-",
                               f["replay_record_ms"].get<double>());
  std::cout << absl::StrFormat("    %-34s %12.0f %12.0f\n",
                               "device ns per launch (times_ns)", plain_launch,
                               f["replay_device_ns_per_launch"].get<double>());
  std::cout << absl::StrFormat("    %-34s %12.0f %12.0f\n",
                               "host wall ns per launch",
                               plain_wall * 1e6 / std::max(number, 1u),
                               replay_wall * 1e6 / std::max(number, 1u));
  std::cout << "    replayed device time read from: "
            << f["replay_clock"].get<std::string>() << "\n";
  if (const int fallbacks = f["replay_fallbacks"].get<int>(); fallbacks > 0) {
    std::cout << "    (" << fallbacks
              << " replayed trials fell back to plain enqueues)\n";
  }
}

// The command line.
struct Flags {
  Setup setup;
  std::string template_name = "gemm_gpu";
  int64_t size = 256;
  int config_count = 16;
  uint64_t seed = 1;
  bool json = false;
  bool no_nonce = false;
  uint64_t tiny_elements = 1024;
  uint32_t tiny_number = 200;
  uint32_t gemm_number = 20;
  int replay_trials = 5;
};

void AddFlags(CLI::App& app, Flags& f) {
  // Every option's --help shows its default.
  app.option_defaults()->always_capture_default();
  app.add_option("--platform", f.setup.platform, "OpenCL platform index");
  app.add_option("--device", f.setup.device, "OpenCL device index");
  app.add_option("--template", f.template_name, "gemm template");
  app.add_option("--size", f.size, "M = N = K");
  app.add_option("--configs", f.config_count, "distinct valid configs");
  app.add_option("--seed", f.seed, "config sampling seed");
  app.add_option("--tiny-elements", f.tiny_elements,
                 "work-items of the tiny kernel of (e)");
  app.add_option("--tiny-number", f.tiny_number,
                 "launches per round of the tiny kernel in (e)");
  app.add_option("--gemm-number", f.gemm_number,
                 "launches per round of the gemm in (e)");
  app.add_option("--replay-trials", f.replay_trials,
                 "trials per side in (e); medians are printed");
  app.add_flag("--no-nonce", f.no_nonce,
               "do not make builds distinct from earlier runs (driver "
               "caches may then serve 'cold' builds)");
  app.add_flag("--json", f.json, "print JSON instead of a table");
}

// What every section measures with: the device, the template, the workload
// and its configs, the measurers' base options and the build nonce.
class Bench {
 public:
  // Errors: the template, workload, device or configs the flags name do not
  // exist or fit.
  static absl::StatusOr<Bench> Open(const Flags& flags);

  // (a) program build: cold source build vs the persistent binary cache.
  absl::StatusOr<nlohmann::json> ProgramBuild();
  // (b) in-memory program cache: hit vs rebuild.
  absl::StatusOr<nlohmann::json> MemoryCache();
  // (c) device buffers and reference output reused vs a fresh workload.
  absl::StatusOr<nlohmann::json> BufferReuse();
  // (d) a batch under the default timing policy, prefetch off vs on.
  absl::StatusOr<nlohmann::json> Prefetch();
  // (e) command-buffer replay vs plain enqueues, tiny kernel and gemm.
  absl::StatusOr<nlohmann::json> Replay();

  // The run's identity: device, template, workload, driver cache settings.
  nlohmann::json Header() const;
  const v1::DeviceInfo& info() const { return info_; }
  const templates::KernelTemplate& tmpl() const { return *tmpl_; }
  const templates::Workload& workload() const { return workload_; }
  const std::vector<templates::KnobValues>& configs() const { return configs_; }
  const Flags& flags() const { return flags_; }
  // The binary cache's temporary directory, removed when the run ends.
  const std::string& cache_dir() const { return cache_dir_; }

 private:
  Bench(Flags flags, const templates::KernelTemplate* tmpl,
        templates::Workload workload)
      : flags_(std::move(flags)), tmpl_(tmpl), workload_(std::move(workload)) {}
  // A build nonce distinct from earlier runs' (0 with --no-nonce).
  uint64_t Nonce();
  std::vector<MeasureRequest> RequestsOf(const v1::TimingPolicy& timing,
                                         uint64_t nonce) const {
    return Requests(*tmpl_, workload_, configs_, timing, nonce);
  }

  Flags flags_;
  const templates::KernelTemplate* tmpl_;
  templates::Workload workload_;
  v1::DeviceInfo info_;
  std::vector<templates::KnobValues> configs_;
  std::mt19937_64 nonce_rng_{std::random_device{}()};
  std::string cache_dir_;
  MeasurerOptions base_;    // prefetch and replay off
  v1::TimingPolicy quick_;  // one launch
};

absl::Status TrialsFailed() {
  return absl::InternalError("a trial failed (printed above)");
}

absl::StatusOr<Bench> Bench::Open(const Flags& flags) {
  absl::StatusOr<const templates::KernelTemplate*> tmpl =
      templates::FindTemplate("gemm", flags.template_name);
  if (!tmpl.ok()) return tmpl.status();
  absl::StatusOr<templates::Workload> workload = templates::Workload::Create(
      "gemm", {{"M", flags.size}, {"N", flags.size}, {"K", flags.size}});
  if (!workload.ok()) return workload.status();
  Bench bench(flags, *tmpl, *std::move(workload));
  // Each Measurer opens its own context, as a fresh worker process would.
  auto probe = NewMeasurer(flags.setup, {});
  if (!probe.ok()) return probe.status();
  bench.info_ = (*probe)->device_info();
  const templates::DeviceLimits limits =
      trial::LimitsFromDeviceInfo(bench.info_);
  if (absl::Status s = (*tmpl)->CheckWorkload(bench.workload_, limits);
      !s.ok()) {
    return s;
  }
  bench.configs_ = PickConfigs(**tmpl, bench.workload_, limits,
                               flags.config_count, flags.seed);
  if (bench.configs_.empty()) return absl::NotFoundError("no valid config");
  bench.cache_dir_ = (std::filesystem::temp_directory_path() /
                      absl::StrCat("agent_efficiency_", getpid()))
                         .string();
  std::filesystem::remove_all(bench.cache_dir_);
  bench.quick_.set_repeat(1);
  bench.quick_.set_number(1);
  bench.base_.prefetch = MeasurerOptions::Prefetch::kOff;
  bench.base_.replay = false;
  return bench;
}

uint64_t Bench::Nonce() {
  return flags_.no_nonce ? 0 : nonce_rng_() % 1000000000000ull + 1;
}

nlohmann::json Bench::Header() const {
  return {{"device", info_.device_name()},
          {"platform", info_.platform_version()},
          {"driver", info_.driver_version()},
          {"template", std::string(tmpl_->name())},
          {"workload", workload_.Canonical()},
          {"configs", configs_.size()},
          {"driver_cache_env",
           {{"POCL_KERNEL_CACHE", Env("POCL_KERNEL_CACHE")},
            {"CUDA_CACHE_DISABLE", Env("CUDA_CACHE_DISABLE")}}},
          {"nonce", !flags_.no_nonce}};
}

// Four fresh Measurers; requests of one nonce share their programs (rows 2
// to 4).
absl::StatusOr<nlohmann::json> Bench::ProgramBuild() {
  const uint64_t n1 = Nonce(), n2 = Nonce();
  struct Column {
    std::string name;
    uint64_t nonce;
    bool binary_cache;
  };
  const std::vector<Column> columns = {
      {"cold build, no binary cache", n1, false},
      {"cold build + write binary", n2, true},
      {"rebuild from source (new process)", n2, false},
      {"load from binary cache (new process)", n2, true},
  };
  nlohmann::json rows;
  for (const Column& c : columns) {
    MeasurerOptions options = base_;
    if (c.binary_cache) options.binary_cache_dir = cache_dir_;
    auto m = NewMeasurer(flags_.setup, options);
    if (!m.ok()) return m.status();
    const Pass pass = RunAll(**m, RequestsOf(quick_, c.nonce), false);
    if (!pass.ok) return TrialsFailed();
    const opencl::ProgramCache::Stats stats = (*m)->program_cache().stats();
    rows.push_back(
        {{"column", c.name},
         {"program_ms_mean", Mean(Field(pass, CompileMs))},
         {"program_ms_median", Median(Field(pass, CompileMs))},
         {"trial_wall_ms_mean", Mean(Field(pass, WallMs))},
         {"first_trial_wall_ms", pass.results[0].wall_ms()},
         {"total_ms", pass.wall_ms},
         {"binary_cache_hits", stats.disk_hits},
         {"binary_cache_writes", stats.disk_writes},
         {"binary_write_ms_mean",
          stats.disk_writes ? stats.store_ms / stats.disk_writes : 0.0}});
  }
  return rows;
}

// The same programs again in one ProgramCache vs a rebuild in a new one
// (driver caches warm).
absl::StatusOr<nlohmann::json> Bench::MemoryCache() {
  auto device = opencl::OpenDevice(flags_.setup.platform, flags_.setup.device);
  if (!device.ok()) return device.status();
  const auto requests = RequestsOf(quick_, Nonce());
  opencl::ProgramCache cache(device->context.get(), device->device,
                             opencl::ProgramCache::Options{});
  std::vector<double> first, rebuild, hit;
  for (const MeasureRequest& r : requests) {
    auto built = cache.Get(r.kernel().source(), r.kernel().build_options());
    if (!built.ok()) return built.status();
    first.push_back(built->compile_ms);
  }
  for (const MeasureRequest& r : requests) {
    opencl::ProgramCache fresh(device->context.get(), device->device,
                               opencl::ProgramCache::Options{});
    auto built = fresh.Get(r.kernel().source(), r.kernel().build_options());
    if (!built.ok()) return built.status();
    rebuild.push_back(built->compile_ms);
    const auto start = Clock::now();
    auto again = cache.Get(r.kernel().source(), r.kernel().build_options());
    hit.push_back(MsSince(start));
    if (!again.ok() || !again->cache_hit) {
      return absl::InternalError("expected an in-memory cache hit");
    }
  }
  return nlohmann::json{{"first_build_ms_mean", Mean(first)},
                        {"rebuild_ms_mean", Mean(rebuild)},
                        {"hit_ms_mean", Mean(hit)}};
}

// Programs are in memory on both sides, so only the workload set-up
// (buffers, fill, reference run) differs.
absl::StatusOr<nlohmann::json> Bench::BufferReuse() {
  auto m = NewMeasurer(flags_.setup, base_);
  if (!m.ok()) return m.status();
  auto reused = RequestsOf(quick_, Nonce());
  auto fresh = reused;
  for (size_t i = 0; i < fresh.size(); ++i) {
    absl::StrAppend(fresh[i].mutable_workload_key(), " fresh ", i);
    absl::StrAppend(fresh[i].mutable_verification()->mutable_reference_key(),
                    " fresh ", i);
  }
  if (!RunAll(**m, reused, false).ok) return TrialsFailed();  // build once
  const Pass with = RunAll(**m, reused, false);
  const Pass without = RunAll(**m, fresh, false);
  if (!with.ok || !without.ok) return TrialsFailed();
  return nlohmann::json{
      {"reused_trial_wall_ms_mean", Mean(Field(with, WallMs))},
      {"fresh_trial_wall_ms_mean", Mean(Field(without, WallMs))},
      {"reused_trial_wall_ms_median", Median(Field(with, WallMs))},
      {"fresh_trial_wall_ms_median", Median(Field(without, WallMs))}};
}

// Each side cold (its own nonce), as the agent runs a batch.
absl::StatusOr<nlohmann::json> Bench::Prefetch() {
  const v1::TimingPolicy timing = contract::DefaultTimingPolicy();
  nlohmann::json rows;
  for (bool prefetch : {false, true}) {
    MeasurerOptions options = base_;
    options.prefetch = prefetch ? MeasurerOptions::Prefetch::kOn
                                : MeasurerOptions::Prefetch::kOff;
    auto m = NewMeasurer(flags_.setup, options);
    if (!m.ok()) return m.status();
    const Pass pass = RunAll(**m, RequestsOf(timing, Nonce()), prefetch);
    if (!pass.ok) return TrialsFailed();
    rows.push_back(
        {{"prefetch", prefetch},
         {"batch_wall_ms", pass.wall_ms},
         {"compile_ms_mean", Mean(Field(pass, CompileMs))},
         {"kernel_ms_median", Median(Field(pass, KernelMs))},
         {"prefetched_trials", CountSource(pass, Measurement::PREFETCHED)}});
  }
  return rows;
}

absl::StatusOr<nlohmann::json> Bench::Replay() {
  MeasurerOptions replay_on = base_;
  replay_on.replay = true;
  auto plain = NewMeasurer(flags_.setup, base_);
  if (!plain.ok()) return plain.status();
  auto replay = NewMeasurer(flags_.setup, replay_on);
  if (!replay.ok()) return replay.status();
  absl::StatusOr<ReplayFigures> tiny = CompareReplay(
      **plain, **replay, TinyRequest(flags_.tiny_elements, flags_.tiny_number),
      flags_.replay_trials);
  if (!tiny.ok()) return tiny.status();
  v1::TimingPolicy timing;
  timing.set_repeat(5);
  timing.set_number(flags_.gemm_number);
  timing.set_max_launches(1000000);
  timing.set_max_total_ms(60000);
  absl::StatusOr<ReplayFigures> gemm =
      CompareReplay(**plain, **replay,
                    Requests(*tmpl_, workload_, {configs_[0]}, timing, 0)[0],
                    flags_.replay_trials);
  if (!gemm.ok()) return gemm.status();
  nlohmann::json e = {{"tiny", ReplayJson(*tiny)}, {"gemm", ReplayJson(*gemm)}};
  e["tiny"]["elements"] = flags_.tiny_elements;
  e["gemm"]["config"] = tmpl_->ConfigString(configs_[0]);
  return e;
}

void PrintProgramBuild(const nlohmann::json& a, size_t configs) {
  std::cout << "\n(a) program build per config (a fresh Measurer per row; "
               "quick timing: 1 launch)\n";
  std::cout << absl::StrFormat("  %-38s %11s %11s %13s %10s\n", "",
                               "program ms", "(median)", "trial wall ms",
                               "total s");
  for (const auto& row : a) {
    std::cout << absl::StrFormat("  %-38s %11.2f %11.2f %13.2f %10.2f\n",
                                 row["column"].get<std::string>(),
                                 row["program_ms_mean"].get<double>(),
                                 row["program_ms_median"].get<double>(),
                                 row["trial_wall_ms_mean"].get<double>(),
                                 row["total_ms"].get<double>() / 1000);
  }
  std::cout << absl::StrFormat(
      "  (program ms: clBuildProgram, or load; the 'write' row includes "
      "fetching CL_PROGRAM_BINARIES and writing the file, %.2f ms of it. "
      "Trial wall includes what a driver compiles lazily at the first "
      "launch.)\n",
      a[1]["binary_write_ms_mean"].get<double>());
  const double cold = a[0]["program_ms_mean"].get<double>();
  const double loaded = a[3]["program_ms_mean"].get<double>();
  const double cold_wall = a[0]["trial_wall_ms_mean"].get<double>();
  const double loaded_wall = a[3]["trial_wall_ms_mean"].get<double>();
  std::cout << absl::StrFormat(
      "  binary cache: program %.2f -> %.2f ms (%.1fx), trial wall %.2f -> "
      "%.2f ms (%.1fx); %d of %d programs (configs + reference) from disk\n",
      cold, loaded, loaded > 0 ? cold / loaded : 0.0, cold_wall, loaded_wall,
      cold_wall / std::max(loaded_wall, 1e-9),
      a[3]["binary_cache_hits"].get<int>(), static_cast<int>(configs) + 1);
}

void PrintCachesAndBuffers(const nlohmann::json& b, const nlohmann::json& c) {
  std::cout << absl::StrFormat(
      "\n(b) in-memory program cache: rebuild %.2f ms (first build %.2f ms) "
      "vs hit %.4f ms per program\n",
      b["rebuild_ms_mean"].get<double>(),
      b["first_build_ms_mean"].get<double>(), b["hit_ms_mean"].get<double>());
  std::cout << absl::StrFormat(
      "\n(c) device buffers + reference output: reused %.2f ms vs fresh "
      "workload %.2f ms per trial (mean wall; medians %.2f vs %.2f)\n",
      c["reused_trial_wall_ms_mean"].get<double>(),
      c["fresh_trial_wall_ms_mean"].get<double>(),
      c["reused_trial_wall_ms_median"].get<double>(),
      c["fresh_trial_wall_ms_median"].get<double>());
}

void PrintPrefetch(const nlohmann::json& d, size_t configs,
                   const v1::DeviceInfo& info) {
  std::cout << absl::StrFormat(
      "\n(d) batch of %zu cold trials, default timing policy (3 rounds >= 10 "
      "ms):\n",
      configs);
  std::cout << absl::StrFormat("  %-14s %12s %16s %17s %11s\n", "prefetch",
                               "batch wall s", "compile ms/trial",
                               "median kernel ms", "prefetched");
  for (const auto& row : d) {
    std::cout << absl::StrFormat("  %-14s %12.2f %16.2f %17.4f %11d\n",
                                 row["prefetch"].get<bool>() ? "on" : "off",
                                 row["batch_wall_ms"].get<double>() / 1000,
                                 row["compile_ms_mean"].get<double>(),
                                 row["kernel_ms_median"].get<double>(),
                                 row["prefetched_trials"].get<int>());
  }
  const double off = d[0]["batch_wall_ms"].get<double>();
  const double on = d[1]["batch_wall_ms"].get<double>();
  std::cout << absl::StrFormat(
      "  saved %.2f s (%.1f%%)%s\n", (off - on) / 1000,
      off > 0 ? 100 * (off - on) / off : 0.0,
      info.device_type() == "CPU"
          ? "; CPU device: background builds share the cores that run the "
            "timed kernels (the agent's default, --prefetch auto, keeps it "
            "off here)"
          : "");
}

void PrintTable(const Bench& bench, const nlohmann::json& out) {
  const v1::DeviceInfo& info = bench.info();
  const Flags& f = bench.flags();
  std::cout << absl::StrFormat(
      "agent efficiency on '%s' (%s, driver %s)\n%s %s, %zu configs; "
      "driver caches: POCL_KERNEL_CACHE=%s CUDA_CACHE_DISABLE=%s; %s\n",
      info.device_name(), info.platform_version(), info.driver_version(),
      bench.tmpl().name(), bench.workload().Canonical(), bench.configs().size(),
      Env("POCL_KERNEL_CACHE"), Env("CUDA_CACHE_DISABLE"),
      f.no_nonce ? "no nonce (driver caches may serve builds)"
                 : "builds made distinct from earlier runs (nonce)");
  PrintProgramBuild(out["a_program_build"], bench.configs().size());
  PrintCachesAndBuffers(out["b_memory_cache"], out["c_buffer_reuse"]);
  PrintPrefetch(out["d_prefetch"], bench.configs().size(), info);
  std::cout << "\n(e) timing rounds: command-buffer replay vs plain "
               "enqueues (medians of "
            << f.replay_trials << " trials)\n";
  PrintReplay(
      absl::StrCat("tiny kernel y=2x, ", f.tiny_elements, " work-items"),
      out["e_replay"]["tiny"]);
  PrintReplay(
      absl::StrCat("gemm ", bench.tmpl().ConfigString(bench.configs()[0])),
      out["e_replay"]["gemm"]);
  std::cout << "  cl_qcom_recordable_queues: not implemented (no such device "
               "here)\n";
}

int Fail(absl::string_view what, const absl::Status& s) {
  std::cerr << "agent_efficiency: " << what << ": " << s.message() << "\n";
  return 1;
}

int Main(int argc, char** argv) {
  CLI::App app{
      "agent_efficiency: what the device agent's program cache, binary "
      "cache, buffer reuse, prefetch and command-buffer replay save on this "
      "machine's OpenCL device"};
  Flags flags;
  AddFlags(app, flags);
  CLI11_PARSE(app, argc, argv);
  absl::StatusOr<Bench> bench = Bench::Open(flags);
  if (!bench.ok()) return Fail("set-up", bench.status());
  absl::Cleanup remove_cache = [&bench] {
    std::filesystem::remove_all(bench->cache_dir());
  };
  nlohmann::json out = bench->Header();
  const std::pair<const char*, absl::StatusOr<nlohmann::json> (Bench::*)()>
      sections[] = {{"a_program_build", &Bench::ProgramBuild},
                    {"b_memory_cache", &Bench::MemoryCache},
                    {"c_buffer_reuse", &Bench::BufferReuse},
                    {"d_prefetch", &Bench::Prefetch},
                    {"e_replay", &Bench::Replay}};
  for (const auto& [key, run] : sections) {
    absl::StatusOr<nlohmann::json> section = ((*bench).*run)();
    if (!section.ok()) return Fail(key, section.status());
    out[key] = *std::move(section);
  }
  if (flags.json) {
    std::cout << out.dump(2) << "\n";
    return 0;
  }
  PrintTable(*bench, out);
  return 0;
}

}  // namespace
}  // namespace tunefleet::bench

int main(int argc, char** argv) { return tunefleet::bench::Main(argc, argv); }
