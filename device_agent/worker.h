// Crash isolation on the device: measurements run in a
// supervised worker process. A kernel that hangs is killed at the trial's
// deadline (TIMEOUT); one that crashes the worker is reported
// (RUNTIME_ERROR) and a new worker starts; the agent and its stream stay
// up. A trial's timeout_ms counts only its kernels running: the worker
// announces each phase (worker.proto Phase), and starting a worker and
// building programs have limits (and error codes) of their own, so a slow
// host or a slow compiler is not taken for a hanging kernel. The worker is the
// agent's own executable started with kWorkerFlag; requests and replies are
// WorkerRequest / WorkerReply (device_agent/worker.proto) on two pipes, as fds
// 3 and 4 of the worker.
#ifndef TUNEFLEET_DEVICE_AGENT_WORKER_H_
#define TUNEFLEET_DEVICE_AGENT_WORKER_H_

#include <sys/types.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "base/files.h"
#include "base/pass_key.h"
#include "base/subprocess.h"
#include "contract/timing_policy.h"
#include "device_agent/backend.h"
#include "device_agent/worker.pb.h"
#include "measure/measurer.h"

namespace tunefleet::device_agent {

// argv[1] of a worker process: when IsChildInvocation(argc, argv,
// kWorkerFlag) (child_process.h), main() must return RunWorkerMain(argc,
// argv) before doing anything else.
inline constexpr char kWorkerFlag[] = "--tunefleet-worker";

// The worker's main loop: `<exe> --tunefleet-worker PLATFORM DEVICE
// [--binary-cache DIR] [--prefetch auto|on|off] [--replay on|off]`. Opens
// the device, then answers requests on fd 3 with replies on fd 4 until the
// agent closes fd 3. Dies with its parent (PR_SET_PDEATHSIG).
int RunWorkerMain(int argc, char** argv);

// Runs each measurement in the worker process. Not thread-safe: one
// measurement thread uses it.
class WorkerBackend : public MeasurementBackend {
 public:
  struct Options {
    std::string executable = "/proc/self/exe";
    int platform = 0;
    int device = 0;
    // Deadline of a trial whose request carries no timeout_ms, in ms:
    // tunefleet's one default (contract/timing_policy.h).
    double default_timeout_ms = contract::DefaultTimingPolicy().timeout_ms();
    // Limit of starting a worker (opening the device, building the fill
    // kernels), the first one and each restart after a crash or a
    // timeout: past it, the trial waiting for the worker is DEVICE_LOST.
    double start_timeout_ms = 60000;
    // Limit of a trial's build phase (its programs, a new workload's
    // buffers; MeasurePhase::kBuild), apart from its timeout_ms, which
    // counts only kernels running: past it, COMPILE_ERROR.
    double build_timeout_ms = 120000;
    // The worker's Measurer (persistent binaries, prefetching, replay).
    measure::MeasurerOptions measurer;
  };

  // Starts a worker and reads the device info through it. Errors:
  // UNAVAILABLE with the worker's reason (no such device, ...) or why it
  // could not be started.
  static absl::StatusOr<std::unique_ptr<WorkerBackend>> Start(Options options);
  ~WorkerBackend() override;

  const tunefleet::v1::DeviceInfo& device_info() const override {
    return info_;
  }
  tunefleet::v1::Measurement Measure(
      const tunefleet::v1::MeasureRequest& request) override;
  // Sends the programs of `next` (of every call since the last Measure())
  // along with the coming Measure(), for the worker to build in the
  // background. If the worker dies during a trial that carried prefetches,
  // the trial is run once more without them in a fresh worker, so a
  // compiler crash on a later config is not recorded against this one (the
  // hinted trials are then built when measured).
  void Prefetch(const tunefleet::v1::MeasureRequest& next) override;

  // Workers started after the first (each crash or timeout starts one).
  int restarts() const { return restarts_; }

  WorkerBackend(base::PassKey<WorkerBackend>, Options options)
      : options_(std::move(options)) {}

 private:
  absl::Status Spawn();
  // Starts a worker when none runs and reads the device info through it,
  // within options_.start_timeout_ms. Errors: UNAVAILABLE saying why.
  absl::Status EnsureWorker();
  // Kills the worker (if alive) and reaps it; returns how it ended.
  std::string Reap(bool kill_first);
  // Where a call ended: starting the worker, or the trial phase the
  // worker last announced (worker.proto Phase).
  enum class Phase { kStart, kBuild, kRun };
  // Each phase's limit, ms, counted from the moment it starts.
  struct Limits {
    double build_ms;
    double run_ms;
  };
  struct Reply {
    absl::StatusOr<tunefleet::internal::WorkerReply> reply;
    Phase phase = Phase::kBuild;
  };
  // Sends a request (with `start`, starting a worker first when none runs,
  // and again when the request cannot be written) and waits for the reply,
  // each phase within its limit. On DEADLINE_EXCEEDED or UNAVAILABLE (the
  // worker died) the worker is gone.
  Reply Call(const tunefleet::internal::WorkerRequest& request,
             const Limits& limits, bool start = true);

  Options options_;
  tunefleet::v1::DeviceInfo info_;
  base::Subprocess worker_;
  base::UniqueFd to_worker_;
  base::UniqueFd from_worker_;
  int restarts_ = -1;
  std::vector<tunefleet::v1::KernelLaunch> prefetch_;
  bool prefetch_enabled_ = false;
  bool skip_next_prefetch_ = false;
};

}  // namespace tunefleet::device_agent

#endif  // TUNEFLEET_DEVICE_AGENT_WORKER_H_
