// One tuning job: a search strategy over the task's space, run as steps on
// the server's job executor (tracked_job.h). Each step takes the results
// that arrived, proposes configs, writes their trial rows and queues them
// on the scheduler; stored results (the TrialLedger writes them, then
// hands them in: OnStored) wake the next step. It publishes progress until the
// trial budget is spent, the space runs out, or it is cancelled.
#ifndef TUNEFLEET_SERVER_JOB_H_
#define TUNEFLEET_SERVER_JOB_H_

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "base/time.h"
#include "search/strategy.h"
#include "search_space/space.h"
#include "server/lease_scheduler.h"
#include "server/tracked_job.h"
#include "server/trial_ledger.h"
#include "server/work_group_limit.h"
#include "store/store.h"
#include "trial/trial_request.h"
#include "tunefleet/v1/tuning.pb.h"

namespace tunefleet::server {

// What a job tunes and how: the stored job's parameters and what only the
// running job needs.
struct JobSpec : store::JobParams {
  bool measure_reference = true;       // also time the naive reference once
  tunefleet::v1::TimingPolicy timing;  // how each trial is timed
  int64_t early_stop = 0;  // trials without improvement before stopping
  // Earlier tasks' results the model starts from (transfer learning).
  std::vector<search::HistoryGroup> history;
  // A task of a model job: its budget starts at `budget` (what was granted
  // before a restart; may be 0) and grows with Grant(); at its budget it
  // waits for more until Close().
  bool granted_budget = false;
  // Trials the strategy may expect in all (search/strategy.h budget_hint);
  // 0: `budget`.
  int64_t budget_hint = 0;
  // A re-validation job (docs/DRIVER_DRIFT.md): measures exactly these
  // configs (space indices), in this order, instead of its strategy's
  // proposals; empty: a search.
  std::vector<uint64_t> configs;
  // Non-empty: its trials lease only to agents of the key reporting this
  // DeviceInfo.driver_version (QueuedTrial::driver_version).
  std::string driver_version;
};

// Where a job starts from: nothing (a new job) or the trial rows a stopped
// server left (a resumed one): finished trials are kept and replayed to the
// strategy, pending ones queued again under their ids.
struct JobResume {
  std::vector<store::Trial> trials;
  bool reference_measured = false;
};

// Thread-safe: OnStored() comes from agent streams and the writer, Progress()
// and WaitForUpdate() from watchers, Cancel() and Interrupt() from anyone.
// Results, grants and a cancel wake its next step; while it waits for
// agents (budget left, no room on the fleet) or has a deadline, a step
// also runs every 200 ms of real time, checking the deadline against
// `clock`.
class Job : public TrackedJob {
 public:
  // The job ends at spec.deadline_ms (Unix ms of `clock`; 0: never).
  // `store`, `scheduler` and `clock` must outlive the job. Its results are
  // written by the TrialLedger, not by the job.
  Job(int64_t id, JobSpec spec, tunefleet::v1::DeviceInfo device,
      std::unique_ptr<search_space::SearchSpace> space, store::Store* store,
      LeaseScheduler* scheduler, const base::Clock& clock,
      JobResume resume = {});
  ~Job() override;

  int64_t id() const override { return id_; }
  // The id under which the job's naive reference kernel is measured; never
  // a trial row (those ids are positive).
  int64_t reference_trial_id() const { return -id_; }
  const JobSpec& spec() const { return spec_; }
  uint64_t space_size() const { return space_size_; }

  // Cancel(): stops proposing, drops queued trials, ends the job as
  // cancelled. Interrupt(): ends the job's steps but leaves it unfinished
  // in the store; the next server resumes it. Its strategy (the largest
  // part of its memory) is released when it ends.

  // A model job's task (spec.granted_budget): `trials` more to measure.
  void Grant(int64_t trials);
  // A model job's task: no more grants; it ends once its budget is spent.
  void Close();
  // One of its trials went back to the queue (its agent was lost).
  void CountRequeued();
  // A model job's task: `config` (a sibling task's best config: same
  // template, same dims, another epilogue) is measured before the
  // strategy's next picks, within the task's budget, when it is a valid
  // config of this task's space and was never proposed here; otherwise
  // (a knob or value this template lacks, a config invalid for this
  // workload or device, proposed already) the next step drops it.
  void Suggest(const tunefleet::v1::Config& config);

  // The row to store for a result (already checked, where it entered:
  // TrialLedger) of one of this job's trials: its median time and GFLOP/s
  // (the template's FLOPs per ns) when OK. The TrialLedger writes it and
  // hands the job what was stored (OnStored).
  ResultRow Row(const tunefleet::v1::Measurement& m) const;
  // A result the store took (TrialLedger): queues it for the job's next
  // step when `result.fresh` (a repeated result counts once), and wakes it.
  void OnStored(const StoredResult& result);
  // The job's reference run's result (reference_trial_id()): its time
  // stored as the job's reference (best effort) when OK, else logged.
  void OnReference(const tunefleet::v1::Measurement& m);

 private:
  // A stored result waiting for the job's next step.
  struct Result {
    int64_t trial_id;
    tunefleet::v1::Measurement::Error error;
    double time_ns;  // median per-round time when OK, else 0
    uint64_t kernel_work_group_limit;  // reported by the agent; 0: none
  };
  bool Step() override;
  // The first step's work: the job running in the store, its strategy
  // (with a resumed job's trials replayed), its reference queued.
  absl::Status SetUp();
  // One pass: takes the results, then proposes and dispatches what the
  // budget and the fleet allow. Sets *ended (and returns the job's error,
  // if any) once it ends.
  absl::Status Advance(bool* ended);
  // The last step's work: drops its queued trials and its strategy, and
  // stores how it ended (unless interrupted). Returns true.
  bool End(const absl::Status& status);
  // The job's search strategy over its space; for a resumed job, with the
  // stored trials replayed (Replay()).
  absl::StatusOr<std::unique_ptr<search::GuidedStrategy>> MakeStrategy();
  // Queues the naive reference kernel's measurement, ahead of the job's
  // trials (one priority higher).
  void EnqueueReference();
  // Turns the results that arrived into measurements and progress. False
  // once cancelled.
  bool Collect(std::vector<search::Observation>* measurements,
               size_t* outstanding);
  // Counts one finished trial (time_ns when OK) into the progress; returns
  // it as the strategy sees it.
  search::Observation Count(int64_t trial_id, uint64_t index,
                            tunefleet::v1::Measurement::Error error,
                            double time_ns) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void SetBest(int64_t trial_id, uint64_t index, double time_ns)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  int64_t Done();
  // Why the job ends, for Finish() (the lock not held).
  void SetMessage(const std::string& message);
  // The trial budget now (grows with Grant()), and whether more may come.
  int64_t Budget(bool* open);
  // True (and the reason in the progress message) once early_stop trials
  // passed without improvement.
  bool StoppedEarly(int64_t done);
  // Writes trial rows for these configs and queues them, kDispatchChunk at
  // a time: agents start on the first chunk while the next is written.
  absl::Status Dispatch(const std::vector<uint64_t>& indices);
  // Work-items in one work-group of the config at `index` (the product of
  // its launch's local sizes; 1 where it leaves them to the driver).
  uint64_t GroupSize(uint64_t index) const;
  // The proposals whose work-group is within the limit learned from the
  // task's results (work_group_limit_); the others are skipped without a
  // trial, counted in the progress and observed by the strategy as
  // failures.
  std::vector<uint64_t> WithinWorkGroupLimit(std::vector<uint64_t> indices);
  static constexpr size_t kDispatchChunk = 1024;
  // Replays the resumed trials: finished ones into `strategy` and the
  // progress, unfinished ones into the queue again.
  void Replay(search::SearchStrategy* strategy);
  // True (and the reason in the progress message) past the deadline.
  bool PastDeadline();

  const int64_t id_;
  // Not const: SetUp() moves the transfer history into the strategy.
  JobSpec spec_;
  const tunefleet::v1::DeviceInfo device_;
  // Released by End() (after the strategy, which reads it).
  std::unique_ptr<search_space::SearchSpace> space_;
  const uint64_t space_size_;
  // What every trial request of the job shares, built once, by the first
  // step that queues trials (a model job's task may wait long for its
  // first grant, or never get one); released by End().
  const trial::MeasureRequestBuilder& Requests();
  std::unique_ptr<const trial::MeasureRequestBuilder> requests_;
  store::Store* const store_;
  LeaseScheduler* const scheduler_;
  const base::Clock& clock_;
  JobResume resume_;  // consumed by Replay()
  // The steps' own state (one step at a time: no lock).
  bool set_up_ = false;
  bool exhausted_ = false;  // every valid config has been proposed
  size_t next_config_ = 0;  // spec_.configs proposed so far
  // spec_.configs' proposals in place of the strategy's: the next `n` not
  // proposed yet (a resumed job's stored trials count as proposed).
  std::vector<uint64_t> ProposeListed(size_t n);
  std::unique_ptr<search::GuidedStrategy> strategy_;
  // The task's kernels' work-group limit, learned from its results.
  WorkGroupLimit work_group_limit_;
  // Proposals skipped for it since the last one dispatched; at
  // kMaxSkippedInARow the job ends as if its space ran out.
  size_t skipped_in_a_row_ = 0;
  static constexpr size_t kMaxSkippedInARow = 4096;
  // Suggest()'s configs for the next step's strategy.
  std::vector<tunefleet::v1::Config> suggested_ ABSL_GUARDED_BY(mu_);
  // The valid config of the space `config` names; nullopt when it names
  // none.
  std::optional<uint64_t> IndexOf(const tunefleet::v1::Config& config) const;
  int64_t budget_ ABSL_GUARDED_BY(mu_) = 0;
  bool closed_ ABSL_GUARDED_BY(mu_) = false;  // no more grants
  std::vector<Result> inbox_ ABSL_GUARDED_BY(mu_);
  std::map<int64_t, uint64_t> outstanding_
      ABSL_GUARDED_BY(mu_);                       // trial -> index
  int64_t improved_at_ ABSL_GUARDED_BY(mu_) = 0;  // trials when best last fell
};

}  // namespace tunefleet::server

#endif  // TUNEFLEET_SERVER_JOB_H_
