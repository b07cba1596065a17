// A trial's timeout_ms counts its kernels running, not the worker's
// restart nor the program build (device_agent/worker.h): each of those has
// its own limit and its own error code. The worker is the real
// tunefleet-agent, started through a shell script that first sleeps, as a
// loaded host or a slow phone starts it; the trials are the hostile
// template's (tests/data/templates/hostile.toml) on the OpenCL device.
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "cli/common.h"
#include "device_agent/worker.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernels_templates/registry.h"
#include "kernels_templates/workload.h"
#include "trial/trial_request.h"

namespace tunefleet {
namespace {

using ::testing::HasSubstr;
using tunefleet::v1::Measurement;

constexpr char kAgent[] = TUNEFLEET_BINARY_DIR "/device_agent/tunefleet-agent";

// A trial of the hostile template: MODE 0 is correct, 1 never ends, 2
// writes far out of bounds (the worker dies), 4 writes NaN.
tunefleet::v1::MeasureRequest Hostile(int mode, int64_t trial_id,
                                      double timeout_ms) {
  static const templates::KernelTemplate* tmpl = [] {
    auto spec = cli::LoadTemplateSpec(std::string(TUNEFLEET_SOURCE_DIR) +
                                      "/tests/data/templates/hostile.toml");
    EXPECT_TRUE(spec.ok()) << spec.status();
    return *templates::FindTemplate("hostile_scale", "hostile");
  }();
  auto config = tmpl->ParseConfig(absl::StrCat("MODE=", mode));
  EXPECT_TRUE(config.ok()) << config.status();
  tunefleet::v1::TimingPolicy timing;
  timing.set_repeat(1);
  timing.set_number(1);
  timing.set_min_repeat_ms(0);
  timing.set_timeout_ms(timeout_ms);
  return trial::BuildMeasureRequest(
      *tmpl, *templates::Workload::Parse("hostile_scale", "N=1000"), *config,
      trial_id, timing);
}

// A worker executable that sleeps `seconds` before it becomes the agent's
// worker, when the file `flag` exists (always when `flag` is empty).
std::string SlowWorker(const std::string& name, double seconds,
                       const std::string& flag = "") {
  const std::string path =
      absl::StrCat(::testing::TempDir(), "/", name, "_", getpid(), ".sh");
  std::ofstream(path) << "#!/bin/sh\n"
                      << (flag.empty() ? "" : "[ -e " + flag + " ] && ")
                      // Its own fds closed: a sleep the supervisor's kill of
                      // the shell leaves behind holds no pipe (the agent's,
                      // or the test's output, which ctest waits on).
                      << "sleep " << seconds
                      << " </dev/null >/dev/null 2>&1 3>&- 4>&-\n"
                      << "exec " << kAgent << " \"$@\"\n";
  chmod(path.c_str(), 0700);
  return path;
}

TEST(WorkerDeadlines, ARestartIsNotCountedInTheKernelsTimeout) {
  // Every worker takes 5 s to start; the kernels may run 3 s.
  device_agent::WorkerBackend::Options options;
  options.executable = SlowWorker("slow_start", 5);
  options.start_timeout_ms = 60000;
  auto backend = device_agent::WorkerBackend::Start(options);
  ASSERT_TRUE(backend.ok()) << backend.status();
  device_agent::WorkerBackend& worker = **backend;
  constexpr double kTimeoutMs = 3000;
  EXPECT_EQ(worker.Measure(Hostile(0, 1, kTimeoutMs)).error(), Measurement::OK);
  // The far write kills the worker...
  const Measurement crashed = worker.Measure(Hostile(2, 2, kTimeoutMs));
  EXPECT_EQ(crashed.error(), Measurement::RUNTIME_ERROR)
      << crashed.error_message();
  // ... and the next trial waits 5 s for a new one, then is judged on its
  // own kernel: a wrong answer, not a timeout.
  const Measurement nan = worker.Measure(Hostile(4, 3, kTimeoutMs));
  EXPECT_EQ(nan.error(), Measurement::WRONG_ANSWER) << nan.error_message();
  EXPECT_EQ(worker.restarts(), 1);
  // A kernel that never ends is still a TIMEOUT, its kernel's.
  const Measurement endless = worker.Measure(Hostile(1, 4, kTimeoutMs));
  EXPECT_EQ(endless.error(), Measurement::TIMEOUT) << endless.error_message();
  EXPECT_THAT(endless.error_message(), HasSubstr("of running kernels"));
}

TEST(WorkerDeadlines, EachPhaseHasItsOwnLimitAndItsOwnCode) {
  // A build past its limit is the config's COMPILE_ERROR.
  device_agent::WorkerBackend::Options options;
  options.executable = kAgent;
  options.build_timeout_ms = 1;
  auto backend = device_agent::WorkerBackend::Start(options);
  ASSERT_TRUE(backend.ok()) << backend.status();
  const Measurement built = (*backend)->Measure(Hostile(0, 1, 60000));
  EXPECT_EQ(built.error(), Measurement::COMPILE_ERROR) << built.error_message();
  EXPECT_THAT(built.error_message(), HasSubstr("of building programs"));

  // A worker that does not start within its limit: at the start an error,
  // after a crash the waiting trial is DEVICE_LOST.
  options = {};
  options.executable = SlowWorker("never_starts", 30);
  options.start_timeout_ms = 500;
  auto refused = device_agent::WorkerBackend::Start(options);
  ASSERT_FALSE(refused.ok());
  EXPECT_THAT(refused.status().message(),
              HasSubstr("did not start within 500 ms"));

  // Workers that start at once until the flag file exists, then take a
  // minute: the trial after a crash waits 8 s, the limit, and is
  // DEVICE_LOST.
  const std::string flag =
      absl::StrCat(::testing::TempDir(), "/slow_restart_", getpid());
  std::filesystem::remove(flag);
  options.executable = SlowWorker("slow_restart", 60, flag);
  options.start_timeout_ms = 8000;
  backend = device_agent::WorkerBackend::Start(options);
  ASSERT_TRUE(backend.ok()) << backend.status();
  EXPECT_EQ((*backend)->Measure(Hostile(2, 2, 60000)).error(),
            Measurement::RUNTIME_ERROR);
  std::ofstream(flag) << "slow\n";
  const Measurement lost = (*backend)->Measure(Hostile(0, 3, 60000));
  EXPECT_EQ(lost.error(), Measurement::DEVICE_LOST) << lost.error_message();
  EXPECT_THAT(lost.error_message(), HasSubstr("did not start within 8000 ms"));
  std::filesystem::remove(flag);
}

}  // namespace
}  // namespace tunefleet
