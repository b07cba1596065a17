// Validates job submissions, creates their rows, owns the running jobs, and
// resumes the jobs a stopped server left unfinished.
#ifndef TUNEFLEET_SERVER_JOB_MANAGER_H_
#define TUNEFLEET_SERVER_JOB_MANAGER_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "base/time.h"
#include "progress/stored_progress.h"
#include "server/job.h"
#include "server/job_executor.h"
#include "server/lease_scheduler.h"
#include "server/model_job.h"
#include "server/model_measure.h"
#include "server/trial_ledger.h"
#include "store/store.h"
#include "tunefleet/v1/tuning.pb.h"
#include "validation/validation.h"

namespace tunefleet::server {

// The caps on a request (trials, timing, spec sizes) live in
// validation/validation.h.
// Earlier records a new job's model starts from, at most (about).
inline constexpr size_t kMaxHistoryRows = 3000;

// The bounds on the work one server takes (docs/SERVER_LIMITS.md);
// tunefleet-server's flags set them.
struct JobLimits {
  // Jobs and model jobs queued or running at once (a model job counts
  // once, whatever its tasks); a submission beyond is refused with
  // RESOURCE_EXHAUSTED. Resumed jobs are never refused.
  int max_active_jobs = 256;
  // Tasks of one model job (1 .. validation::kMaxModelTasks); more are
  // refused with RESOURCE_EXHAUSTED.
  int max_model_tasks = validation::kMaxModelTasks;
  // Threads running every job's and model job's steps (job_executor.h);
  // 0: max(4, the machine's hardware threads).
  int job_threads = 0;
  // Ended jobs whose final progress stays in memory (GetJob, WatchJob and
  // ListJobs answer them as they ended; older ones from the store), by
  // count and by bytes of progress.
  int kept_ended_jobs = 1024;
  int64_t kept_ended_bytes = int64_t{64} << 20;
};

// Thread-safe. Job deadlines (SubmitJobRequest.deadline_s) are measured
// against `clock`; `store`, `scheduler` and `clock` must outlive the
// manager. Every job runs on the manager's executor (limits.job_threads
// threads); a job that ended leaves the manager (its final progress is
// kept, see JobLimits), and its memory is given back.
class JobManager : public TrialJobs {
 public:
  // Results reach the jobs through a TrialLedger (server/trial_ledger.h),
  // which stores them first.
  JobManager(store::Store* store, LeaseScheduler* scheduler,
             const base::Clock& clock = base::RealClock(),
             JobLimits limits = {});
  ~JobManager() override;

  const JobLimits& limits() const { return limits_; }
  // How model jobs run their tuned plan end to end once their budget is
  // spent (server/model_measure.h); before any model job starts. Unset:
  // their measurement is stored as missing.
  void SetModelRunner(ModelRunFn run) { model_run_ = std::move(run); }
  int executor_threads() const { return executor_->threads(); }

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
  // many users' templates, or limits().max_active_jobs jobs and model jobs
  // are queued or running (naming the limit and its flag);
  // FAILED_PRECONDITION when no agent is connected to pick a key from, or
  // no config of the template fits the device.
  absl::StatusOr<std::shared_ptr<Job>> Submit(
      const tunefleet::v1::SubmitJobRequest& request);

  // A re-validation job (docs/DRIVER_DRIFT.md): `request` (a stored job's,
  // its device key set) prepared as Submit() does, then run as a job that
  // measures exactly the configs of `targets` whose stored text matches
  // the space's (the others are dropped from `targets`), on agents of the
  // key reporting `driver_version` only; no reference kernel, no transfer,
  // no early stop or deadline. Not counted against max_active_jobs (it is
  // the server's own work). Errors: Prepare()'s; FAILED_PRECONDITION when
  // no target's config is in the space any more.
  absl::StatusOr<std::shared_ptr<Job>> SubmitRevalidation(
      tunefleet::v1::SubmitJobRequest request,
      const std::string& driver_version,
      std::vector<store::RevalidationTarget>* targets);

  // Checks a model job (ValidateSubmitModelJobRequest, then every task as
  // Submit() checks a job, its errors prefixed "tasks[i]."), stores it and
  // its tasks' jobs, and starts it. A task with no config for the device
  // is skipped and listed in `response`; FAILED_PRECONDITION when every
  // task is; RESOURCE_EXHAUSTED as Submit(), and for more tasks than
  // limits().max_model_tasks. Fills `response`.
  absl::StatusOr<std::shared_ptr<ModelJob>> SubmitModel(
      const tunefleet::v1::SubmitModelJobRequest& request,
      tunefleet::v1::SubmitModelJobResponse* response);

  // The live job (a model job's task included), or nullptr (unknown,
  // ended, or from an earlier server run).
  std::shared_ptr<Job> Find(int64_t job_id);
  // The live job or model job with this id, or nullptr.
  std::shared_ptr<TrackedJob> FindTracked(int64_t job_id);
  // The final progress of a job or model job that ended in this server
  // (among the last kept, JobLimits), or nullopt.
  std::optional<tunefleet::v1::JobProgress> EndedProgress(int64_t job_id);
  // The progress of a job or model job this server runs (FindTracked) or
  // ran (EndedProgress), or nullopt: unknown here, or of an earlier run
  // (its stored state is the store's).
  std::optional<tunefleet::v1::JobProgress> LiveOrEndedProgress(int64_t job_id);
  // Live jobs and model jobs now (tasks of model jobs not counted).
  int active_jobs();

  // TrialJobs: what the TrialLedger asks of the live jobs (a model job's
  // tasks included); a job not live takes nothing.
  // The row of a result of a live job (Job::Row); nullopt when not live.
  std::optional<ResultRow> RowFor(int64_t job_id, int64_t trial_id,
                                  const tunefleet::v1::Measurement& m) override;
  // Job::OnReference, when `trial_id` is the live job's reference run.
  void OnReference(int64_t job_id, int64_t trial_id,
                   const tunefleet::v1::Measurement& m) override;
  // Job::OnStored.
  void OnStored(const StoredResult& result) override;
  // Job::CountRequeued.
  void OnRequeued(int64_t job_id, int64_t trial_id) override;

  // Cancels one job or model job. NOT_FOUND for an unknown id,
  // FAILED_PRECONDITION for a job already ended. Returns its progress after the
  // cancel.
  absl::StatusOr<tunefleet::v1::JobProgress> Cancel(int64_t job_id);
  // The newest `limit` jobs and model jobs below id `before_id` (0: any),
  // live progress where running; model jobs without per-task progress.
  absl::StatusOr<std::vector<tunefleet::v1::JobProgress>> List(
      int64_t limit, int64_t before_id = 0);

  // Cancels every running job (their state becomes cancelled).
  void CancelAll();
  // Ends every job's steps and leaves the jobs unfinished in the store,
  // for ResumeJobs() on the next start, with the attempts of the trials
  // still leased (LeaseScheduler::StoreLeaseAttempts).
  void Shutdown();

 private:
  // A checked request turned into what a Job needs.
  struct Prepared {
    JobSpec spec;
    tunefleet::v1::DeviceInfo device;
    std::unique_ptr<search_space::SearchSpace> space;
  };
  // Transfer history already read, by template name (one submission's).
  using HistoryCache = std::map<std::string, std::vector<search::HistoryGroup>>;
  absl::StatusOr<Prepared> Prepare(
      const tunefleet::v1::SubmitJobRequest& request,
      HistoryCache* history_cache = nullptr);
  // A stored unfinished job rebuilt: its request prepared again with the
  // stored run's seed, budget and times, its trials to resume.
  absl::StatusOr<std::pair<Prepared, JobResume>> Rebuild(
      const store::StoredJob& row);
  // A task of a model job, checked and ready to store.
  struct PreparedTask {
    int task_index = 0;
    tunefleet::v1::SubmitJobRequest request;  // as its job row keeps it
    Prepared prepared;
  };
  // Prepares the model's tasks at `indices` as jobs on device key `key`; a
  // task with no config for the device goes to `skipped`, as does any
  // other bad one unless `strict` (then its error, prefixed "tasks[i].").
  absl::StatusOr<std::vector<PreparedTask>> PrepareModelTasks(
      const tunefleet::v1::SubmitModelJobRequest& request,
      const std::string& key, const std::vector<int>& indices, bool strict,
      std::vector<tunefleet::v1::SkippedTask>* skipped);
  // Stores prepared tasks as job rows of model job `row` and makes them
  // into (not started) slots.
  absl::StatusOr<std::vector<ModelTaskSlot>> StoreModelTasks(
      const store::ModelJob& row, std::vector<PreparedTask> tasks);
  // A resumed model job's stored task: a slot with its job rebuilt, or with
  // its stored progress where it ended (or cannot be rebuilt).
  absl::StatusOr<ModelTaskSlot> ResumeModelTask(const store::ModelJob& row,
                                                const store::StoredJob& task,
                                                uint32_t weight);
  // Builds the model job's task scheduler from its slots and starts it.
  absl::StatusOr<std::shared_ptr<ModelJob>> LaunchModel(
      store::ModelJob row, const tunefleet::v1::SubmitModelJobRequest& request,
      std::vector<ModelTaskSlot> slots,
      std::vector<tunefleet::v1::SkippedTask> skipped);
  absl::Status ResumeModel(const store::ModelJob& row);
  absl::StatusOr<std::string> ChooseDeviceKey(const std::string& requested);
  // Rebuilds one stored job and starts it.
  absl::Status Resume(const store::StoredJob& row);
  // Stores a new job of `prepared` with `request` (as its row keeps it, to
  // rebuild the job) and launches it. Errors: INTERNAL when the request
  // cannot be encoded; Store::CreateJob's.
  absl::StatusOr<std::shared_ptr<Job>> CreateAndLaunch(
      const tunefleet::v1::SubmitJobRequest& request, Prepared prepared);
  // Makes the job; starts it unless it is a model job's `task` (its model
  // job starts it, StartTask()).
  std::shared_ptr<Job> Launch(int64_t id, Prepared prepared, JobResume resume,
                              bool task = false);
  void StartTask(const std::shared_ptr<Job>& task);
  // Holds a place among limits().max_active_jobs for a submission until
  // Unreserve(); RESOURCE_EXHAUSTED when none is left.
  absl::Status Reserve();
  void Unreserve();
  // A job, model job (`model`) or task (`task`) ended: it leaves the
  // manager, its final progress is kept, the memory is given back.
  void Ended(int64_t id, TrackedJob* job, bool model, bool task);
  // Keeps `progress` as the final progress of job `id`, dropping the
  // oldest kept beyond the limits.
  void KeepEnded(int64_t id, std::string progress)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Empties the manager and stops what it held with `stop`
  // (TrackedJob::Cancel or Interrupt), then joins it.
  void StopAll(void (TrackedJob::*stop)());

  store::Store* const store_;
  LeaseScheduler* const scheduler_;
  const base::Clock& clock_;
  const JobLimits limits_;
  ModelRunFn model_run_;
  absl::Mutex mu_;
  std::map<int64_t, std::shared_ptr<Job>> jobs_ ABSL_GUARDED_BY(mu_);
  std::map<int64_t, std::shared_ptr<ModelJob>> models_ ABSL_GUARDED_BY(mu_);
  int active_ ABSL_GUARDED_BY(mu_) = 0;    // live jobs and model jobs
  int reserved_ ABSL_GUARDED_BY(mu_) = 0;  // submissions under way
  // Serialized: one allocation each, not the thousands of a model job's
  // progress (which would pin the memory its tasks gave back).
  std::map<int64_t, std::string> ended_ ABSL_GUARDED_BY(mu_);
  int64_t ended_bytes_ ABSL_GUARDED_BY(mu_) = 0;
  std::atomic<bool> release_pending_{false};  // a memory release is posted
  // Last: its threads stop (Shutdown) before the rest goes.
  std::unique_ptr<JobExecutor> executor_;
};

}  // namespace tunefleet::server

#endif  // TUNEFLEET_SERVER_JOB_MANAGER_H_
