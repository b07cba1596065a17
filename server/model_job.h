// A model job: one trial budget over a model's tasks (SubmitModelJob;
// docs/MODEL_JOBS.md). Each task is a Job of its own (a job row naming the
// model job) whose budget starts empty; the model job's thread reads the
// tasks' progress, asks its task scheduler (search/task_scheduler.h) where
// the next batch of trials goes, and grants it to that task's job.
//
//   agents --results--> task Jobs --progress--> ModelJob thread
//                          ^                      | TaskScheduler::Update
//                          +------- Grant(n) -----+ TaskScheduler::Next
//
// It grants while the trials granted and not yet measured are fewer than
// the agents of its device key can hold, so every agent has work across
// the tasks. It ends when the budget is spent or every task has stopped
// (then it closes its tasks' jobs, which end as their last trials land),
// at its deadline, or when cancelled. The grants are stored per task
// (jobs.granted), so a restarted server resumes it: every task's finished
// trials kept, its unmeasured grants measured, the budget never exceeded.
#ifndef TUNEFLEET_SERVER_MODEL_JOB_H_
#define TUNEFLEET_SERVER_MODEL_JOB_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "base/time.h"
#include "search/task_scheduler.h"
#include "server/job.h"
#include "server/scheduler.h"
#include "store/store.h"
#include "tunefleet/v1/tuning.pb.h"

namespace tunefleet::server {

// One tuned task of a model job.
struct ModelTaskSlot {
  int task_index = 0;  // into the request's tasks
  uint32_t weight = 1;
  int64_t job_id = 0;   // the task's job
  int64_t granted = 0;  // trials granted before this server started
  // The task's running job; null for one that ended before this server
  // started (then `stored` is its progress).
  std::shared_ptr<Job> job;
  tunefleet::v1::JobProgress stored;
};

// Thread-safe as Job.
class ModelJob : public TrackedJob {
 public:
  // `tasks` and `scheduler` in the same order. `store`, `fleet` and
  // `clock` must outlive the model job. The task jobs are started by
  // Start().
  ModelJob(store::ModelJob row, std::vector<ModelTaskSlot> tasks,
           std::vector<tunefleet::v1::SkippedTask> skipped,
           search::TaskScheduler scheduler, store::Store* store,
           Scheduler* fleet, const base::Clock& clock);
  ~ModelJob() override;

  int64_t id() const override { return row_.id; }
  const store::ModelJob& row() const { return row_; }

  // Cancel() cancels every task's job, and the model job ends cancelled;
  // Interrupt() stops its tasks' threads too, leaving all unfinished in the
  // store for the next server. Progress() has every task's progress and the
  // latency history.

  // The progress without per-task progress and history (ListJobs).
  tunefleet::v1::JobProgress Summary();

 private:
  void Run() override;
  // Grants and watches until the budget is spent, every task stopped, the
  // deadline passed, or it is cancelled (false then).
  bool Loop();
  // Reads every task's progress into the task scheduler; returns them.
  std::vector<tunefleet::v1::JobProgress> Observe();
  // Grants batches while the fleet of the key has room for more trials.
  void GrantWhatFits(const std::vector<tunefleet::v1::JobProgress>& tasks);
  // The progress from the tasks' progress (the lock held).
  void Publish(const std::vector<tunefleet::v1::JobProgress>& tasks)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Closes every task's job and waits for them to end.
  void CloseTasks();
  void Finish(tunefleet::v1::JobState state, const std::string& reason);
  bool PastDeadline() const;

  const store::ModelJob row_;
  std::vector<ModelTaskSlot> tasks_;
  const std::vector<tunefleet::v1::SkippedTask> skipped_;
  search::TaskScheduler scheduler_;  // the model job's thread only
  store::Store* const store_;
  Scheduler* const fleet_;
  const base::Clock& clock_;
};

}  // namespace tunefleet::server

#endif  // TUNEFLEET_SERVER_MODEL_JOB_H_
