// Validates job submissions, creates their rows, and owns the running jobs.
#ifndef TUNEFLEET_SERVER_JOB_MANAGER_H_
#define TUNEFLEET_SERVER_JOB_MANAGER_H_

#include <map>
#include <memory>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "proto/tuning.pb.h"
#include "server/job.h"
#include "server/scheduler.h"
#include "server/store.h"

namespace tunefleet::server {

// Largest trial budget one job may ask for.
inline constexpr uint32_t kMaxTrialsPerJob = 1000000;
// Caps on a job's timing policy.
inline constexpr uint32_t kMaxRepeat = 100;
inline constexpr uint32_t kMaxLaunchesPerTrial = 10000;
// Sizes of a user's template spec and source a job may carry.
inline constexpr size_t kMaxSpecBytes = 64 << 10;
inline constexpr size_t kMaxSourceBytes = 1 << 20;
// Earlier records a new job's model starts from, at most (about).
inline constexpr size_t kMaxHistoryRows = 3000;

// Thread-safe.
class JobManager {
 public:
  JobManager(Store* store, Scheduler* scheduler)
      : store_(store), scheduler_(scheduler) {}
  ~JobManager() { Shutdown(); }

  // Checks the request, stores the job and starts it. Errors:
  // INVALID_ARGUMENT naming the bad field (workload, trials, strategy,
  // template, device_key); NOT_FOUND for a device key never seen;
  // FAILED_PRECONDITION when no agent is connected to pick a key from, or
  // no config of the template fits the device.
  absl::StatusOr<std::shared_ptr<Job>> Submit(
      const tunefleet::v1::SubmitJobRequest& request);

  // The live job, or nullptr (unknown, or from an earlier server run).
  std::shared_ptr<Job> Find(int64_t job_id);

  // Routes an agent's result to its job.
  void OnResult(int64_t job_id, int64_t trial_id,
                const tunefleet::v1::Measurement& measurement);

  // Cancels and joins every job.
  void Shutdown();

 private:
  absl::StatusOr<std::string> ChooseDeviceKey(const std::string& requested);

  Store* store_;
  Scheduler* scheduler_;
  absl::Mutex mu_;
  std::map<int64_t, std::shared_ptr<Job>> jobs_ ABSL_GUARDED_BY(mu_);
};

}  // namespace tunefleet::server

#endif  // TUNEFLEET_SERVER_JOB_MANAGER_H_
