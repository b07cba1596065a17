// Validates job submissions, creates their rows, owns the running jobs, and
// resumes the jobs a stopped server left unfinished.
#ifndef TUNEFLEET_SERVER_JOB_MANAGER_H_
#define TUNEFLEET_SERVER_JOB_MANAGER_H_

#include <map>
#include <memory>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "base/time.h"
#include "server/job.h"
#include "server/scheduler.h"
#include "server/validation/validation.h"
#include "store/store.h"
#include "tunefleet/v1/tuning.pb.h"

namespace tunefleet::server {

// The caps on a request (trials, timing, spec sizes) live in
// server/validation/validation.h.
// Earlier records a new job's model starts from, at most (about).
inline constexpr size_t kMaxHistoryRows = 3000;

// A stored job's progress from its row and trial tally (a job not running
// in this server).
absl::StatusOr<tunefleet::v1::JobProgress> StoredProgress(
    store::Store& store, const store::Job& row);

// Thread-safe. Job deadlines (SubmitJobRequest.deadline_s) are measured
// against `clock`; `store`, `scheduler` and `clock` must outlive the
// manager.
class JobManager {
 public:
  JobManager(store::Store* store, Scheduler* scheduler,
             const base::Clock& clock = base::RealClock())
      : store_(store), scheduler_(scheduler), clock_(clock) {}
  ~JobManager() { Shutdown(); }

  // Starts again every job the store holds as queued or running: finished
  // trials are kept, leased and pending ones queued again. A job that
  // cannot be rebuilt (its template gone, a request from an older build)
  // is marked failed with the reason. Returns how many resumed.
  absl::StatusOr<int> ResumeJobs();

  // Checks the request (ValidateSubmitJobRequest, then what needs the
  // store and registry), stores the job and starts it. Errors:
  // INVALID_ARGUMENT naming the bad field (workload, trials, strategy,
  // template_name, template_spec, timing, device_key, ...); NOT_FOUND for a
  // device key never seen; RESOURCE_EXHAUSTED when the process holds too
  // many users' templates;
  // FAILED_PRECONDITION when no agent is connected to pick a key from, or
  // no config of the template fits the device.
  absl::StatusOr<std::shared_ptr<Job>> Submit(
      const tunefleet::v1::SubmitJobRequest& request);

  // The live job, or nullptr (unknown, or from an earlier server run).
  std::shared_ptr<Job> Find(int64_t job_id);

  // Routes an agent's result to its job, through CheckedMeasurement().
  void OnResult(int64_t job_id, int64_t trial_id,
                const tunefleet::v1::Measurement& measurement);
  // Tells jobs about leases their agents lost: requeued trials are
  // counted, abandoned ones end as DEVICE_LOST.
  void OnLostLeases(const LostLeases& lost);

  // Cancels one job. NOT_FOUND for an unknown id, FAILED_PRECONDITION for a
  // job already ended. Returns its progress after the cancel.
  absl::StatusOr<tunefleet::v1::JobProgress> Cancel(int64_t job_id);
  // The newest `limit` jobs below id `before_id` (0: any), live progress
  // where running.
  absl::StatusOr<std::vector<tunefleet::v1::JobProgress>> List(
      int64_t limit, int64_t before_id = 0);

  // Cancels every running job (their state becomes cancelled).
  void CancelAll();
  // Stops every job's thread and leaves the jobs unfinished in the store,
  // for ResumeJobs() on the next start.
  void Shutdown();

 private:
  // A checked request turned into what a Job needs.
  struct Prepared {
    JobSpec spec;
    tunefleet::v1::DeviceInfo device;
    std::unique_ptr<search::SearchSpace> space;
  };
  absl::StatusOr<Prepared> Prepare(
      const tunefleet::v1::SubmitJobRequest& request);
  absl::StatusOr<std::string> ChooseDeviceKey(const std::string& requested);
  // Rebuilds one stored job and starts it.
  absl::Status Resume(const store::Job& row);
  std::shared_ptr<Job> Launch(int64_t id, Prepared prepared, JobResume resume);
  std::vector<std::shared_ptr<Job>> TakeAll();

  store::Store* const store_;
  Scheduler* const scheduler_;
  const base::Clock& clock_;
  absl::Mutex mu_;
  std::map<int64_t, std::shared_ptr<Job>> jobs_ ABSL_GUARDED_BY(mu_);
};

}  // namespace tunefleet::server

#endif  // TUNEFLEET_SERVER_JOB_MANAGER_H_
