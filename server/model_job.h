// A model job: one trial budget over a model's tasks (SubmitModelJob;
// docs/MODEL_JOBS.md). Each task is a Job of its own (a job row naming the
// model job) whose budget starts empty; the model job's steps (on the
// job executor, as its tasks') read the tasks' progress, ask its task
// scheduler (search/task_scheduler.h) where the next batch of trials goes,
// and grant it to that task's job.
//
//   agents --results--> task Jobs --progress--> ModelJob steps
//                          ^                      | TaskScheduler::Update
//                          +------- Grant(n) -----+ TaskScheduler::Next
//
// It grants while the trials granted and not yet measured are fewer than
// the agents of its device key can hold, so every agent has work across
// the tasks. It ends when the budget is spent or every task has stopped
// (then it closes its tasks' jobs, which end as their last trials land),
// at its deadline, or when cancelled. Once the budget is spent (or every
// task stopped) it measures the tuned plan end to end on an agent of its
// key (server/model_measure.h, on a thread of its own) and stores the
// measured latency before it ends done; a measurement that cannot be made
// is stored with the reason. The latency history is stored as it grows
// (a resumed model job continues it). The grants are stored per task
// (jobs.granted), so a restarted server resumes it: every task's finished
// trials kept, its unmeasured grants measured, the budget never exceeded.
#ifndef TUNEFLEET_SERVER_MODEL_JOB_H_
#define TUNEFLEET_SERVER_MODEL_JOB_H_

#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "base/time.h"
#include "search/task_scheduler.h"
#include "server/job.h"
#include "server/lease_scheduler.h"
#include "server/model_measure.h"
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

// Thread-safe as Job. A change of a task's progress wakes a step (at most
// one every 25 ms); so does a timer every 200 ms while it runs (agents
// that connected, its deadline).
class ModelJob : public TrackedJob {
 public:
  // `tasks` and `scheduler` in the same order. `store`, `fleet` and
  // `clock` must outlive the model job. The task jobs are started by the
  // caller, after the model job is made (it listens to their progress).
  // `history`: its stored latency history (continued). `measure_run`:
  // runs the end-to-end measurement (empty: none is made, and the
  // measurement is stored as missing, saying so).
  ModelJob(store::ModelJob row, std::vector<ModelTaskSlot> tasks,
           std::vector<tunefleet::v1::SkippedTask> skipped,
           search::TaskScheduler scheduler, store::Store* store,
           LeaseScheduler* fleet, const base::Clock& clock,
           std::vector<tunefleet::v1::LatencyPoint> history = {},
           ModelRunFn measure_run = nullptr);
  ~ModelJob() override;

  int64_t id() const override { return row_.id; }
  const store::ModelJob& row() const { return row_; }
  // Its tasks, for starting their jobs (their order never changes; a
  // task's job is let go once the model job ended).
  const std::vector<ModelTaskSlot>& tasks() const { return tasks_; }

  // Cancel() cancels every task's job, and the model job ends cancelled
  // once they have ended; Interrupt() interrupts its tasks' jobs too,
  // leaving all unfinished in the store for the next server. Progress()
  // has every task's progress and the latency history. Once it ended it
  // holds its tasks' final progress only, not their jobs.

  // The progress without per-task progress and history (ListJobs).
  tunefleet::v1::JobProgress Summary();

 private:
  bool Step() override;
  // The first step's work: the model job running in the store. False
  // (and the model job failed) when the store refuses.
  bool SetUp();
  // One pass: reads the tasks' progress (when it changed), grants what
  // fits, publishes; sets reason_ once it should end. True once it ended
  // and every task has ended.
  bool Pass();
  // After a cancel or interrupt: tells the tasks once, then true (and the
  // end stored, unless interrupted) once every task has ended.
  bool Stop(bool interrupted);
  // Publishes the final progress, stores `state` and lets go of the
  // tasks' jobs. Returns true.
  bool End(tunefleet::v1::JobState state);
  // Once every task ended after its budget: starts the measurement (once),
  // and ends the job done once it is stored. True once it ended.
  bool MeasureThenEnd();
  // The waiting reason while the measurement runs.
  std::string MeasuringText() const;
  // A task's progress changed (its listener; the task's lock is held).
  void TaskChanged();
  bool AllTasksEnded() const;
  // Reads every task's progress into the task scheduler; returns them.
  std::vector<tunefleet::v1::JobProgress> Observe();
  // Groups the tasks into siblings_ (at construction).
  void FindSiblings();
  // Hands each task's best config to its siblings (tasks of the same
  // template and dims whose workloads differ in attributes only: an
  // epilogue, a pooling mode) that have measured nothing as fast
  // (Job::Suggest): a config's speed hardly depends on its epilogue, and a
  // sibling's search may not have found it within its own trials.
  void ShareBestConfigs(const std::vector<tunefleet::v1::JobProgress>& tasks);
  // Grants batches while the fleet of the key has room for more trials.
  void GrantWhatFits(const std::vector<tunefleet::v1::JobProgress>& tasks);
  // The progress from the tasks' progress (the lock held).
  void Publish(const std::vector<tunefleet::v1::JobProgress>& tasks)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Closes every task's job (each ends once its granted trials are
  // measured).
  void CloseTasks();
  // Keeps each task's final progress and lets go of its job (the memory).
  void ReleaseTasks();
  void Finish(tunefleet::v1::JobState state, const std::string& reason);
  bool PastDeadline() const;

  const store::ModelJob row_;
  std::vector<ModelTaskSlot> tasks_;
  const std::vector<tunefleet::v1::SkippedTask> skipped_;
  search::TaskScheduler scheduler_;  // the model job's steps only
  store::Store* const store_;
  LeaseScheduler* const fleet_;
  const base::Clock& clock_;
  std::vector<int> listener_ids_;  // per task, on its job
  // Per task, its siblings' indices (ShareBestConfigs), and the best
  // config it last shared with them.
  std::vector<std::vector<size_t>> siblings_;
  std::vector<std::string> shared_;
  // The steps' own state (one step at a time: no lock).
  bool set_up_ = false;
  bool failed_ = false;    // the store refused to start it
  bool stopping_ = false;  // its tasks were told to stop
  std::string reason_;     // why it ends, once it should
  // What the last pass saw: the tasks' progress versions and the key's
  // capacity. While neither changes there is nothing to read or grant.
  std::optional<std::pair<uint64_t, uint32_t>> seen_;
  absl::Time next_pass_ = absl::InfinitePast();
  // The end-to-end measurement: its thread (joined when destroyed) and its
  // outcome, set by that thread.
  const ModelRunFn measure_run_;
  std::thread measure_thread_;
  bool measure_started_ = false;  // the steps' own
  std::optional<tunefleet::v1::MeasuredLatency> measured_ ABSL_GUARDED_BY(mu_);
  bool measuring_ ABSL_GUARDED_BY(mu_) = false;  // its run is under way
};

}  // namespace tunefleet::server

#endif  // TUNEFLEET_SERVER_MODEL_JOB_H_
