// Agent efficiency on the local OpenCL device (PoCL in CI): the persistent
// program-binary cache, background builds of the next trial's program
// (prefetch) and record-and-replay timing with cl_khr_command_buffer. Every
// test checks results (sources of programs, measurement errors, verified
// outputs), never times.
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/hash.h"
#include "device_agent/worker.h"
#include "gtest/gtest.h"
#include "kernels_templates/registry.h"
#include "measure/measurer.h"
#include "opencl/program_cache.h"
#include "tests/support/command_runner.h"
#include "trial/trial_request.h"

namespace tunefleet {
namespace {

using measure::Measurer;
using measure::MeasurerOptions;
using opencl::ProgramCache;
using templates::KnobValues;
using templates::Workload;
using tunefleet::v1::Measurement;
using tunefleet::v1::MeasureRequest;

// Configs valid on every device (8x8 and smaller work-groups, no local
// memory or little of it), each a different program.
const std::vector<std::string>& Configs() {
  static const std::vector<std::string> configs = {
      "MWG=16,NWG=16,KWG=8,MWI=2,NWI=2,VW=1,SA=0,SB=0,KUNROLL=1,HALF=0,IMB=0",
      "MWG=16,NWG=16,KWG=8,MWI=2,NWI=2,VW=2,SA=0,SB=0,KUNROLL=2,HALF=0,IMB=0",
      "MWG=32,NWG=32,KWG=16,MWI=4,NWI=4,VW=4,SA=1,SB=1,KUNROLL=4,HALF=0,IMB=0",
      "MWG=16,NWG=32,KWG=8,MWI=2,NWI=4,VW=1,SA=0,SB=1,KUNROLL=1,HALF=0,IMB=0",
  };
  return configs;
}

Workload Gemm(int64_t m, int64_t n, int64_t k) {
  return *Workload::Create("gemm", {{"M", m}, {"N", n}, {"K", k}});
}

MeasureRequest Request(int config_index, int64_t trial_id, uint32_t repeat = 1,
                       uint32_t number = 1) {
  static const templates::KernelTemplate& gemm =
      *templates::FindTemplate("gemm", "gemm_tiled").value();
  v1::TimingPolicy timing;
  timing.set_repeat(repeat);
  timing.set_number(number);
  auto values = gemm.ParseConfig(Configs()[config_index]);
  EXPECT_TRUE(values.ok()) << values.status();
  return trial::BuildMeasureRequest(gemm, Gemm(48, 40, 56), *values, trial_id,
                                    timing);
}

std::unique_ptr<Measurer> NewMeasurer(MeasurerOptions options) {
  auto device = opencl::OpenDevice(0, 0);
  EXPECT_TRUE(device.ok()) << device.status();
  if (!device.ok()) return nullptr;
  auto m = Measurer::Create(*std::move(device), std::move(options));
  EXPECT_TRUE(m.ok()) << m.status();
  return m.ok() ? *std::move(m) : nullptr;
}

std::vector<std::string> BinFiles(const std::string& dir) {
  std::vector<std::string> files;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    files.push_back(entry.path().string());
  }
  return files;
}

// --- ProgramCache directly: a tiny kernel run and checked by hand. ---

constexpr char kScaleSource[] =
    "__kernel void scale(__global float* y, __global const float* x) {\n"
    "  const int i = get_global_id(0);\n"
    "  y[i] = FACTOR * x[i];\n"
    "}\n";

class ProgramCacheOnDevice : public ::testing::Test {
 protected:
  void SetUp() override {
    auto device = opencl::OpenDevice(0, 0);
    ASSERT_TRUE(device.ok()) << device.status();
    device_ = *std::move(device);
  }

  // Runs scale() of `program` on 0..63 and returns y.
  std::vector<float> RunScale(cl_program program) {
    constexpr size_t kN = 64;
    std::vector<float> x(kN), y(kN, -1.0f);
    for (size_t i = 0; i < kN; ++i) x[i] = static_cast<float>(i);
    cl_int err = CL_SUCCESS;
    opencl::ClKernel kernel(clCreateKernel(program, "scale", &err));
    EXPECT_EQ(err, CL_SUCCESS);
    opencl::ClMem xb(clCreateBuffer(device_.context.get(),
                                    CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR,
                                    kN * sizeof(float), x.data(), &err));
    EXPECT_EQ(err, CL_SUCCESS);
    opencl::ClMem yb(clCreateBuffer(device_.context.get(), CL_MEM_WRITE_ONLY,
                                    kN * sizeof(float), nullptr, &err));
    EXPECT_EQ(err, CL_SUCCESS);
    cl_mem y_mem = yb.get(), x_mem = xb.get();
    clSetKernelArg(kernel.get(), 0, sizeof(cl_mem), &y_mem);
    clSetKernelArg(kernel.get(), 1, sizeof(cl_mem), &x_mem);
    const size_t global = kN;
    EXPECT_EQ(
        clEnqueueNDRangeKernel(device_.queue.get(), kernel.get(), 1, nullptr,
                               &global, nullptr, 0, nullptr, nullptr),
        CL_SUCCESS);
    EXPECT_EQ(
        clEnqueueReadBuffer(device_.queue.get(), yb.get(), CL_TRUE, 0,
                            kN * sizeof(float), y.data(), 0, nullptr, nullptr),
        CL_SUCCESS);
    return y;
  }

  void ExpectScaled(cl_program program, float factor) {
    const std::vector<float> y = RunScale(program);
    for (size_t i = 0; i < y.size(); ++i) {
      ASSERT_EQ(y[i], factor * static_cast<float>(i)) << "at " << i;
    }
  }

  opencl::ClDevice device_;
};

TEST_F(ProgramCacheOnDevice, BinaryCacheRoundTrip) {
  const std::string dir = testing::FreshTempDir("agent_eff_roundtrip");
  {
    ProgramCache first(device_.context.get(), device_.device,
                       ProgramCache::Options{.binary_dir = dir});
    auto built = first.Get(kScaleSource, "-DFACTOR=3.0f");
    ASSERT_TRUE(built.ok()) << built.status();
    EXPECT_EQ(built->origin, ProgramCache::Origin::kBuiltFromSource);
    EXPECT_FALSE(built->cache_hit);
    EXPECT_EQ(first.stats().disk_writes, 1u);
    ExpectScaled(built->program.get(), 3.0f);
    // The same process asks again: memory.
    auto again = first.Get(kScaleSource, "-DFACTOR=3.0f");
    ASSERT_TRUE(again.ok());
    EXPECT_EQ(again->origin, ProgramCache::Origin::kMemory);
    EXPECT_TRUE(again->cache_hit);
    EXPECT_EQ(again->compile_ms, 0.0);
  }
  ASSERT_EQ(BinFiles(dir).size(), 1u);
  EXPECT_TRUE(std::filesystem::exists(
      ProgramCache(device_.context.get(), device_.device,
                   ProgramCache::Options{.binary_dir = dir})
          .BinaryPath(kScaleSource, "-DFACTOR=3.0f")));

  // A new cache (a new process, as far as the cache knows) on the same dir.
  ProgramCache second(device_.context.get(), device_.device,
                      ProgramCache::Options{.binary_dir = dir});
  auto loaded = second.Get(kScaleSource, "-DFACTOR=3.0f");
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ(loaded->origin, ProgramCache::Origin::kBinaryCache);
  EXPECT_EQ(second.stats().disk_hits, 1u);
  EXPECT_EQ(second.stats().disk_writes, 0u);
  ExpectScaled(loaded->program.get(), 3.0f);

  // Other build options are another program, another file.
  auto other = second.Get(kScaleSource, "-DFACTOR=5.0f");
  ASSERT_TRUE(other.ok()) << other.status();
  EXPECT_EQ(other->origin, ProgramCache::Origin::kBuiltFromSource);
  ExpectScaled(other->program.get(), 5.0f);
  EXPECT_EQ(BinFiles(dir).size(), 2u);
}

TEST_F(ProgramCacheOnDevice, CorruptCacheFilesFallBackToSource) {
  const std::string dir = testing::FreshTempDir("agent_eff_corrupt");
  const std::string options = "-DFACTOR=7.0f";
  std::string path, good;
  {
    ProgramCache cache(device_.context.get(), device_.device,
                       ProgramCache::Options{.binary_dir = dir});
    ASSERT_TRUE(cache.Get(kScaleSource, options).ok());
    ASSERT_TRUE(cache.Get(kScaleSource, "-DFACTOR=2.0f").ok());
    path = cache.BinaryPath(kScaleSource, options);
    std::ifstream in(path, std::ios::binary);
    good.assign(std::istreambuf_iterator<char>(in), {});
  }
  ASSERT_GT(good.size(), 100u);
  std::string other_file;
  {
    ProgramCache cache(device_.context.get(), device_.device,
                       ProgramCache::Options{.binary_dir = dir});
    std::ifstream in(cache.BinaryPath(kScaleSource, "-DFACTOR=2.0f"),
                     std::ios::binary);
    other_file.assign(std::istreambuf_iterator<char>(in), {});
  }

  std::string flipped = good;
  flipped[flipped.size() / 2] ^= 0x5a;
  std::string garbage(good.size(), 'x');
  const std::vector<std::pair<std::string, std::string>> corruptions = {
      {"empty", ""},
      {"truncated", good.substr(0, good.size() / 2)},
      {"header only", good.substr(0, 80)},
      {"flipped payload byte", flipped},
      {"garbage", garbage},
      {"another program's file", other_file},
  };
  for (const auto& [what, bytes] : corruptions) {
    SCOPED_TRACE(what);
    {
      std::ofstream out(path, std::ios::binary | std::ios::trunc);
      out << bytes;
    }
    ProgramCache cache(device_.context.get(), device_.device,
                       ProgramCache::Options{.binary_dir = dir});
    auto built = cache.Get(kScaleSource, options);
    ASSERT_TRUE(built.ok()) << built.status();
    EXPECT_EQ(built->origin, ProgramCache::Origin::kBuiltFromSource);
    EXPECT_EQ(cache.stats().disk_rejects, 1u);
    EXPECT_EQ(cache.stats().disk_writes, 1u);  // overwritten
    ExpectScaled(built->program.get(), 7.0f);

    // The file was replaced by a good one.
    ProgramCache next(device_.context.get(), device_.device,
                      ProgramCache::Options{.binary_dir = dir});
    auto loaded = next.Get(kScaleSource, options);
    ASSERT_TRUE(loaded.ok()) << loaded.status();
    EXPECT_EQ(loaded->origin, ProgramCache::Origin::kBinaryCache);
    ExpectScaled(loaded->program.get(), 7.0f);
  }
  // No temporary files are left behind.
  for (const std::string& file : BinFiles(dir)) {
    EXPECT_EQ(file.find(".tmp."), std::string::npos) << file;
  }
}

TEST_F(ProgramCacheOnDevice, UnwritableDirectoryStillBuilds) {
  ProgramCache cache(device_.context.get(), device_.device,
                     ProgramCache::Options{.binary_dir = "/proc/no/such/dir"});
  auto built = cache.Get(kScaleSource, "-DFACTOR=4.0f");
  ASSERT_TRUE(built.ok()) << built.status();
  EXPECT_EQ(cache.stats().disk_writes, 0u);
  ExpectScaled(built->program.get(), 4.0f);
}

// A cache directory others may write could hold planted binaries: it is not
// used (no loads, no writes), and programs still build.
TEST_F(ProgramCacheOnDevice, ADirectoryOthersMayWriteIsNotUsed) {
  const std::string dir = testing::FreshTempDir("agent_eff_shared");
  std::filesystem::create_directories(dir);
  std::filesystem::permissions(dir, std::filesystem::perms::all);
  {
    ProgramCache cache(device_.context.get(), device_.device,
                       ProgramCache::Options{.binary_dir = dir});
    auto built = cache.Get(kScaleSource, "-DFACTOR=4.0f");
    ASSERT_TRUE(built.ok()) << built.status();
    EXPECT_EQ(cache.stats().disk_writes, 0u);
    ExpectScaled(built->program.get(), 4.0f);
  }
  EXPECT_TRUE(std::filesystem::is_empty(dir));
  // The same directory made private is used.
  std::filesystem::permissions(dir, std::filesystem::perms::owner_all);
  ProgramCache cache(device_.context.get(), device_.device,
                     ProgramCache::Options{.binary_dir = dir});
  ASSERT_TRUE(cache.Get(kScaleSource, "-DFACTOR=4.0f").ok());
  EXPECT_EQ(cache.stats().disk_writes, 1u);
}

TEST_F(ProgramCacheOnDevice, PrefetchedProgramIsAHit) {
  ProgramCache cache(device_.context.get(), device_.device,
                     ProgramCache::Options{});
  cache.Prefetch(kScaleSource, "-DFACTOR=9.0f");
  cache.Prefetch(kScaleSource, "-DFACTOR=9.0f");  // deduplicated
  cache.WaitForPrefetches();
  EXPECT_EQ(cache.stats().prefetches, 1u);
  auto built = cache.Get(kScaleSource, "-DFACTOR=9.0f");
  ASSERT_TRUE(built.ok()) << built.status();
  EXPECT_EQ(built->origin, ProgramCache::Origin::kPrefetched);
  EXPECT_TRUE(built->cache_hit);
  EXPECT_EQ(built->compile_ms, 0.0);
  ExpectScaled(built->program.get(), 9.0f);
  auto again = cache.Get(kScaleSource, "-DFACTOR=9.0f");
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->origin, ProgramCache::Origin::kMemory);
  EXPECT_EQ(cache.stats().prefetch_hits, 1u);
  EXPECT_EQ(cache.stats().misses, 0u);
}

// Several background threads build several hinted programs (the agent's
// look-ahead over its queued trials); each is then a prefetched hit.
TEST_F(ProgramCacheOnDevice, SeveralThreadsBuildSeveralPrefetches) {
  ProgramCache cache(
      device_.context.get(), device_.device,
      ProgramCache::Options{.max_queued_prefetches = 8, .prefetch_threads = 4});
  constexpr int kFactors = 6;
  auto options = [](int f) { return absl::StrCat("-DFACTOR=", f + 2, ".0f"); };
  for (int f = 0; f < kFactors; ++f) cache.Prefetch(kScaleSource, options(f));
  cache.WaitForPrefetches();
  EXPECT_EQ(cache.stats().prefetches, static_cast<size_t>(kFactors));
  for (int f = 0; f < kFactors; ++f) {
    auto built = cache.Get(kScaleSource, options(f));
    ASSERT_TRUE(built.ok()) << built.status();
    EXPECT_EQ(built->origin, ProgramCache::Origin::kPrefetched) << f;
    ExpectScaled(built->program.get(), static_cast<float>(f + 2));
  }
  EXPECT_EQ(cache.stats().misses, 0u);
}

TEST_F(ProgramCacheOnDevice, PrefetchedBuildErrorReachesGet) {
  ProgramCache cache(device_.context.get(), device_.device,
                     ProgramCache::Options{});
  const std::string broken = "__kernel void f(__global float* y) { y[0] = ; }";
  cache.Prefetch(broken, "");
  cache.WaitForPrefetches();
  auto built = cache.Get(broken, "");  // the background build's error
  ASSERT_FALSE(built.ok());
  EXPECT_EQ(cache.stats().misses, 0u);
  EXPECT_TRUE(absl::IsInvalidArgument(built.status())) << built.status();
  EXPECT_NE(built.status().message().find("clBuildProgram"), std::string::npos);
  // Failures are not cached: asked again, it is built (and fails) again.
  auto again = cache.Get(broken, "");
  EXPECT_FALSE(again.ok());
  EXPECT_EQ(cache.stats().misses, 1u);
}

TEST_F(ProgramCacheOnDevice, ConcurrentGetsAndPrefetchesAllSucceed) {
  ProgramCache cache(device_.context.get(), device_.device,
                     ProgramCache::Options{.capacity = 3});  // evicts a lot
  constexpr int kFactors = 6;
  auto options = [](int f) { return absl::StrCat("-DFACTOR=", f, ".0f"); };
  std::thread prefetcher([&] {
    for (int round = 0; round < 3; ++round) {
      for (int f = 0; f < kFactors; ++f)
        cache.Prefetch(kScaleSource, options(f));
    }
  });
  std::vector<std::pair<int, opencl::ClProgram>> got;
  for (int round = 0; round < 3; ++round) {
    for (int f = kFactors - 1; f >= 0; --f) {
      auto built = cache.Get(kScaleSource, options(f));
      ASSERT_TRUE(built.ok()) << built.status();
      got.emplace_back(f, std::move(built->program));
    }
  }
  prefetcher.join();
  cache.WaitForPrefetches();
  // Programs stay valid after eviction: the caller holds a reference.
  for (const auto& [f, program] : got) {
    ExpectScaled(program.get(), static_cast<float>(f));
  }
}

// --- Through the Measurer. ---

TEST(MeasurerBinaryCache, SecondMeasurerLoadsBinariesAndVerifies) {
  const std::string dir = testing::FreshTempDir("agent_eff_measurer");
  MeasurerOptions options;
  options.binary_cache_dir = dir;
  options.prefetch = MeasurerOptions::Prefetch::kOff;
  std::vector<Measurement> first;
  {
    auto measurer = NewMeasurer(options);
    ASSERT_NE(measurer, nullptr);
    for (int c = 0; c < 2; ++c) {
      first.push_back(measurer->Measure(Request(c, c + 1)));
      ASSERT_EQ(first.back().error(), Measurement::OK)
          << first.back().error_message();
      EXPECT_EQ(first.back().program_source(), Measurement::BUILT_FROM_SOURCE);
    }
  }
  // Reference + 2 configs.
  EXPECT_EQ(BinFiles(dir).size(), 3u);
  auto measurer = NewMeasurer(options);
  ASSERT_NE(measurer, nullptr);
  for (int c = 0; c < 2; ++c) {
    const Measurement m = measurer->Measure(Request(c, c + 1));
    ASSERT_EQ(m.error(), Measurement::OK) << m.error_message();
    EXPECT_EQ(m.program_source(), Measurement::BINARY_CACHE);
    // Verified against the reference, with the same outputs as before.
    EXPECT_EQ(m.max_rel_error(), first[c].max_rel_error());
  }
  EXPECT_EQ(measurer->program_cache().stats().disk_hits, 3u);

  // A corrupt file: built from source again, still correct.
  for (const std::string& file : BinFiles(dir)) {
    std::ofstream out(file, std::ios::binary | std::ios::trunc);
    out << "not a program binary";
  }
  auto third = NewMeasurer(options);
  ASSERT_NE(third, nullptr);
  const Measurement m = third->Measure(Request(0, 9));
  ASSERT_EQ(m.error(), Measurement::OK) << m.error_message();
  EXPECT_EQ(m.program_source(), Measurement::BUILT_FROM_SOURCE);
  EXPECT_EQ(m.max_rel_error(), first[0].max_rel_error());
  EXPECT_EQ(third->program_cache().stats().disk_rejects, 2u);  // ref + kernel
}

TEST(MeasurerPrefetch, NextTrialFindsItsProgramBuilt) {
  MeasurerOptions on;
  on.prefetch = MeasurerOptions::Prefetch::kOn;
  on.replay = false;
  MeasurerOptions off = on;
  off.prefetch = MeasurerOptions::Prefetch::kOff;
  auto with = NewMeasurer(on);
  auto without = NewMeasurer(off);
  ASSERT_NE(with, nullptr);
  ASSERT_NE(without, nullptr);
  EXPECT_TRUE(with->prefetch_enabled());
  EXPECT_FALSE(without->prefetch_enabled());

  // Trial 1 measured while trial 2's program builds; then trial 2.
  with->Prefetch(Request(1, 2));
  const Measurement a1 = with->Measure(Request(0, 1));
  with->WaitForPrefetches();
  const Measurement a2 = with->Measure(Request(1, 2));
  without->Prefetch(Request(1, 2));  // ignored
  const Measurement b1 = without->Measure(Request(0, 1));
  const Measurement b2 = without->Measure(Request(1, 2));

  for (const Measurement* m : {&a1, &a2, &b1, &b2}) {
    ASSERT_EQ(m->error(), Measurement::OK) << m->error_message();
  }
  EXPECT_EQ(a2.program_source(), Measurement::PREFETCHED);
  EXPECT_EQ(a2.compile_ms(), 0.0);
  EXPECT_EQ(b2.program_source(), Measurement::BUILT_FROM_SOURCE);
  EXPECT_GT(b2.compile_ms(), 0.0);
  // Identical programs on identical inputs: identical verified outputs.
  EXPECT_EQ(a1.max_rel_error(), b1.max_rel_error());
  EXPECT_EQ(a2.max_rel_error(), b2.max_rel_error());
  // Trial 2's kernel, and the reference too when another build thread got
  // to it before trial 1 asked for it.
  EXPECT_GE(with->program_cache().stats().prefetch_hits, 1u);
  EXPECT_EQ(without->program_cache().stats().prefetches, 0u);
}

TEST(MeasurerPrefetch, OverlappingBuildsAndMeasurementsStayCorrect) {
  MeasurerOptions on;
  on.prefetch = MeasurerOptions::Prefetch::kOn;
  auto measurer = NewMeasurer(on);
  ASSERT_NE(measurer, nullptr);
  // As the agent does it: before each trial, prefetch the next; no waiting.
  const int n = static_cast<int>(Configs().size());
  int prefetched = 0;
  for (int i = 0; i < n; ++i) {
    if (i + 1 < n) measurer->Prefetch(Request(i + 1, i + 2, 2, 3));
    const Measurement m = measurer->Measure(Request(i, i + 1, 2, 3));
    ASSERT_EQ(m.error(), Measurement::OK) << m.error_message();
    EXPECT_EQ(m.times_ns_size(), 2);
    if (m.program_source() == Measurement::PREFETCHED) ++prefetched;
  }
  // Every program was built once: by the background thread (finished or
  // still building when asked for), or inline by the Get() that found it
  // still queued (a loaded machine) and took it off the queue.
  const ProgramCache::Stats stats = measurer->program_cache().stats();
  EXPECT_EQ(stats.prefetches + stats.misses, static_cast<size_t>(n) + 1)
      << "kernels and the reference, each built once";
  EXPECT_LE(static_cast<size_t>(prefetched), stats.prefetch_hits);
  EXPECT_GE(stats.misses, 1u);  // the first kernel is never hinted
}

TEST(MeasurerReplay, ReplayedTimingIsFlaggedAndVerified) {
  MeasurerOptions options;
  options.prefetch = MeasurerOptions::Prefetch::kOff;
  options.replay = true;
  auto measurer = NewMeasurer(options);
  ASSERT_NE(measurer, nullptr);
  if (!measurer->replay_enabled()) {
    GTEST_SKIP() << "no command-buffer replay on this device: "
                 << measurer->replay_unavailable_reason();
  }
  for (int c = 0; c < static_cast<int>(Configs().size()); ++c) {
    SCOPED_TRACE(Configs()[c]);
    const Measurement m = measurer->Measure(Request(c, c + 1, 3, 4));
    ASSERT_EQ(m.error(), Measurement::OK) << m.error_message();
    EXPECT_TRUE(m.replayed());
    EXPECT_EQ(m.number(), 4u);
    ASSERT_EQ(m.times_ns_size(), 3);
    for (double t : m.times_ns()) EXPECT_GT(t, 0.0);
    EXPECT_TRUE(measurer->last_timing().replayed);
    EXPECT_EQ(measurer->last_timing().replay_error, "");
  }
  // The outputs after each replay matched the reference (else the trial
  // would have fallen back to plain enqueues).
  EXPECT_EQ(measurer->replay_fallbacks(), 0);
}

// y = 2x over 4096 floats, with `expression` as the candidate's y[i].
MeasureRequest TinyRequest(const std::string& expression, int64_t trial_id) {
  MeasureRequest r;
  r.set_trial_id(trial_id);
  r.set_workload_key("tiny y=2x 4096");
  for (const char* name : {"x", "y"}) {
    v1::BufferSpec* b = r.add_buffers();
    b->set_name(name);
    b->set_elements(4096);
    b->set_dtype(v1::DTYPE_FP32);
    const bool output = std::string(name) == "y";
    b->set_output(output);
    b->set_fill(output ? v1::BufferSpec::ZERO : v1::BufferSpec::UNIFORM);
    b->set_seed(11);
  }
  auto launch = [](v1::KernelLaunch* k, const std::string& expr) {
    k->set_source(absl::StrCat(
        "__kernel void f(__global float* y, __global const float* x) {\n"
        "  const int i = get_global_id(0);\n  y[i] = ",
        expr, ";\n}\n"));
    k->set_kernel_name("f");
    k->add_global_size(4096);
    k->add_local_size(64);
    k->add_args()->set_buffer("y");
    k->add_args()->set_buffer("x");
  };
  launch(r.mutable_kernel(), expression);
  launch(r.mutable_verification()->mutable_reference(), "2.0f * x[i]");
  r.mutable_verification()->set_reference_key("tiny y=2x");
  r.mutable_verification()->set_rtol(1e-6);
  r.mutable_timing()->set_repeat(3);
  r.mutable_timing()->set_number(8);
  return r;
}

TEST(MeasurerReplay, TinyKernelReplayedAndWrongAnswersStayWrong) {
  auto measurer = NewMeasurer({.replay = true});
  ASSERT_NE(measurer, nullptr);
  const Measurement good = measurer->Measure(TinyRequest("x[i] + x[i]", 1));
  ASSERT_EQ(good.error(), Measurement::OK) << good.error_message();
  EXPECT_EQ(good.replayed(), measurer->replay_enabled());
  EXPECT_EQ(good.times_ns_size(), 3);
  EXPECT_EQ(good.number(), 8u);
  // Verification runs before timing, whichever way it is timed.
  const Measurement bad =
      measurer->Measure(TinyRequest("2.0f * x[i] + (i == 7 ? 1.0f : 0.0f)", 2));
  EXPECT_EQ(bad.error(), Measurement::WRONG_ANSWER) << bad.error_message();
  EXPECT_FALSE(bad.replayed());
  EXPECT_EQ(bad.times_ns_size(), 0);
  EXPECT_EQ(measurer->replay_fallbacks(), 0);
}

TEST(MeasurerReplay, TurnedOffMeansPlainEnqueues) {
  MeasurerOptions options;
  options.replay = false;
  auto measurer = NewMeasurer(options);
  ASSERT_NE(measurer, nullptr);
  EXPECT_FALSE(measurer->replay_enabled());
  EXPECT_EQ(measurer->replay_unavailable_reason(), "turned off");
  const Measurement m = measurer->Measure(Request(0, 1, 3, 4));
  ASSERT_EQ(m.error(), Measurement::OK) << m.error_message();
  EXPECT_FALSE(m.replayed());
  EXPECT_EQ(m.times_ns_size(), 3);
  EXPECT_EQ(m.number(), 4u);
}

// --- Through the worker process (the agent's default backend). ---

TEST(WorkerEfficiency, PrefetchAndBinaryCacheAcrossWorkers) {
  const std::string dir = testing::FreshTempDir("agent_eff_worker");
  device_agent::WorkerBackend::Options options;
  options.executable = TUNEFLEET_BINARY_DIR "/device_agent/tunefleet-agent";
  options.measurer.binary_cache_dir = dir;
  options.measurer.prefetch = MeasurerOptions::Prefetch::kOn;
  {
    auto backend = device_agent::WorkerBackend::Start(options);
    ASSERT_TRUE(backend.ok()) << backend.status();
    (*backend)->Prefetch(Request(1, 2));
    const Measurement m1 = (*backend)->Measure(Request(0, 1));
    ASSERT_EQ(m1.error(), Measurement::OK) << m1.error_message();
    EXPECT_EQ(m1.program_source(), Measurement::BUILT_FROM_SOURCE);
    const Measurement m2 = (*backend)->Measure(Request(1, 2));
    ASSERT_EQ(m2.error(), Measurement::OK) << m2.error_message();
    EXPECT_EQ(m2.program_source(), Measurement::PREFETCHED);
    EXPECT_EQ((*backend)->restarts(), 0);
  }
  // A new worker process: both programs come from the binary cache.
  options.measurer.prefetch = MeasurerOptions::Prefetch::kOff;
  auto backend = device_agent::WorkerBackend::Start(options);
  ASSERT_TRUE(backend.ok()) << backend.status();
  for (int c = 0; c < 2; ++c) {
    const Measurement m = (*backend)->Measure(Request(c, c + 1));
    ASSERT_EQ(m.error(), Measurement::OK) << m.error_message();
    EXPECT_EQ(m.program_source(), Measurement::BINARY_CACHE);
  }
}

// A worker dies with the thread that started it (PR_SET_PDEATHSIG), as when
// an agent connection's measurement thread ends and the next connection
// measures on a new thread: the next trial runs in a fresh worker instead
// of failing as "the worker died".
TEST(WorkerEfficiency, AWorkerStartedByAThreadThatEndedIsReplaced) {
  device_agent::WorkerBackend::Options options;
  options.executable = TUNEFLEET_BINARY_DIR "/device_agent/tunefleet-agent";
  absl::StatusOr<std::unique_ptr<device_agent::WorkerBackend>> backend;
  std::thread([&] {
    backend = device_agent::WorkerBackend::Start(options);
  }).join();
  ASSERT_TRUE(backend.ok()) << backend.status();
  // The kernel delivers the parent-death signal as the thread exits; give
  // the worker the moment it takes to die.
  std::this_thread::sleep_for(std::chrono::seconds(1));
  const Measurement m = (*backend)->Measure(Request(0, 1));
  EXPECT_EQ(m.error(), Measurement::OK) << m.error_message();
  EXPECT_EQ((*backend)->restarts(), 1);
}

}  // namespace
}  // namespace tunefleet
