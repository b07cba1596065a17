// What a job and a model job share: running as steps on the server's job
// executor (job_executor.h; no thread of its own), cancel and interrupt
// flags, and the progress watchers read (TuningService's WatchJob, GetJob,
// CancelJob), versioned so that a watcher wakes on each change.
//
// A step runs on a pool thread, never two at once for one job, and never
// blocks on another job: it does what the job's state allows now (take
// results, propose, grant) and returns. The next step comes when something
// wakes the job (Wake(): a result, a grant, a cancel) or a timer it set
// (WakeAfter(): its deadline, agents that may have connected).
#ifndef TUNEFLEET_SERVER_TRACKED_JOB_H_
#define TUNEFLEET_SERVER_TRACKED_JOB_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "server/job_executor.h"
#include "tunefleet/v1/tuning.pb.h"

namespace tunefleet::server {

// Thread-safe. Owned by shared_ptr (its steps hold one while they run).
class TrackedJob : public std::enable_shared_from_this<TrackedJob> {
 public:
  virtual ~TrackedJob() = default;

  virtual int64_t id() const = 0;

  // Runs its steps on `executor` (which must outlive the job's steps) from
  // now on; `on_end` (may be null) runs once, on the executor, after the
  // step that ended it (no lock of the job held).
  void Start(JobExecutor* executor, std::function<void()> on_end = nullptr);
  // Asks it to stop and end cancelled; its finished trials stay.
  void Cancel();
  // Asks it to stop and stay unfinished in the store (server shutdown), so
  // that the next server resumes it.
  void Interrupt();
  // Blocks until it has ended and its `on_end` has run (at once when it
  // was never started). Never call it from a step.
  void Join();
  // True once its last step ran.
  bool ended();

  tunefleet::v1::JobProgress Progress();
  // Grows with every change of the progress.
  uint64_t version();
  // Waits up to `timeout` for progress newer than `*version`; updates
  // `*version` and returns true with the new progress in `*out`.
  bool WaitForUpdate(uint64_t* version, absl::Duration timeout,
                     tunefleet::v1::JobProgress* out);

  // `listener` runs after every change of the progress, with the job's
  // lock held: it may only note the change (wake something, queue the
  // id), never call the job. Returns its id for RemoveListener().
  int AddListener(std::function<void()> listener);
  void RemoveListener(int id);

 protected:
  // One step (see above). Returns true once the job has ended (it is then
  // never called again).
  virtual bool Step() = 0;
  // A step soon.
  void Wake();
  // A step after `delay` at the latest.
  void WakeAfter(absl::Duration delay);

  // Marks a change of the progress: bumps the version and tells the
  // listeners.
  void Changed() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Ends it in `state`: writes the state and message through `store` (the
  // progress's message where `reason` is empty, e.g. an early stop's) and
  // publishes them, with the store's error appended if it failed.
  void Finish(tunefleet::v1::JobState state, const std::string& reason,
              const std::function<absl::Status(const std::string&)>& store);

  absl::Mutex mu_;
  bool cancelled_ ABSL_GUARDED_BY(mu_) = false;
  bool interrupted_ ABSL_GUARDED_BY(mu_) = false;
  tunefleet::v1::JobProgress progress_ ABSL_GUARDED_BY(mu_);
  uint64_t version_ ABSL_GUARDED_BY(mu_) = 0;

 private:
  // Cancel() and Interrupt(): marks it cancelled (and interrupted) and
  // wakes it.
  void Stop(bool interrupt);
  // Runs one step on the executor and what follows it (another step for
  // a wake during this one, or the end).
  void RunStep();
  void PostStep();

  std::map<int, std::function<void()>> listeners_ ABSL_GUARDED_BY(mu_);
  int next_listener_ ABSL_GUARDED_BY(mu_) = 0;

  // When steps run; its own lock, so that Wake() may be called anywhere.
  absl::Mutex run_mu_ ABSL_ACQUIRED_AFTER(mu_);
  JobExecutor* executor_ ABSL_GUARDED_BY(run_mu_) = nullptr;
  std::function<void()> on_end_ ABSL_GUARDED_BY(run_mu_);
  bool started_ ABSL_GUARDED_BY(run_mu_) = false;
  bool ended_ ABSL_GUARDED_BY(run_mu_) = false;
  bool finished_ ABSL_GUARDED_BY(run_mu_) = false;  // ended, on_end ran
  bool queued_ ABSL_GUARDED_BY(run_mu_) = false;    // a step posted or running
  bool again_ ABSL_GUARDED_BY(run_mu_) = false;     // woken during a step
  // The earliest timer set and not yet fired; InfiniteFuture: none.
  absl::Time timer_at_ ABSL_GUARDED_BY(run_mu_) = absl::InfiniteFuture();
};

}  // namespace tunefleet::server

#endif  // TUNEFLEET_SERVER_TRACKED_JOB_H_
