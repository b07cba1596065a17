// Jobs' progress (JobProgress) as the store has them, for whoever reads a
// database: the dashboard's StoreDataSource (dashboard/store_source.h), the
// server for jobs not running in it (server/job_manager.h), `tunefleet jobs
// --db`. And a model job's progress (JobProgress with `model` set) from its
// stored row, its tasks' progress and a task scheduler that has seen them:
// one builder for a running model job (server::ModelJob) and a stored one
// (StoredModelProgress).
#ifndef TUNEFLEET_PROGRESS_STORED_PROGRESS_H_
#define TUNEFLEET_PROGRESS_STORED_PROGRESS_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "absl/status/statusor.h"
#include "search/task_scheduler.h"
#include "store/store.h"
#include "tunefleet/v1/tuning.pb.h"

namespace tunefleet::progress {

// A stored job's progress from its row and trial tally (a job not running
// in a server here). Errors: the store's.
absl::StatusOr<tunefleet::v1::JobProgress> StoredProgress(
    store::Store& store, const store::StoredJob& row);

// The progress of job (or model job, `model`) `id` where the caller knows
// it without the store (a live job's); nullopt: read it from the store.
using KnownProgress = std::function<std::optional<tunefleet::v1::JobProgress>(
    int64_t id, bool model)>;

// Jobs and model jobs newest first, as stored (for `tunefleet jobs --db`):
// at most `limit` (0: all) with ids below `before_id` (0: any); model jobs
// with `model` set but without per-task progress. Where `known` (may be
// null) has a job's progress, that is listed instead (and the store's
// tally of its trials not read). Errors: the store's.
absl::StatusOr<std::vector<tunefleet::v1::JobProgress>> StoredJobList(
    store::Store& store, int64_t limit, int64_t before_id = 0,
    const KnownProgress& known = nullptr);

// A tuned task of a model job: where it is in the request, and its job's
// progress.
struct ModelTaskView {
  int task_index = 0;
  uint32_t weight = 1;
  const tunefleet::v1::JobProgress* job = nullptr;
};

// What the task scheduler reads from a task's job progress. A task's job
// that ended says why in `ended_reason`.
search::TaskResults ResultsOf(const tunefleet::v1::JobProgress& job);

// The scheduler's view of a request's task: its canonical workload, op (the
// similarity tag), weight and FLOPs per run from its template. Errors:
// INVALID_ARGUMENT for a workload or template unknown here.
absl::StatusOr<search::SchedulerTask> SchedulerTaskOf(
    const tunefleet::v1::ModelTask& task);

// The scheduler's options for a stored model job and its request.
search::TaskSchedulerOptions SchedulerOptionsOf(
    const store::ModelJob& row,
    const tunefleet::v1::SubmitModelJobRequest& request);

// The model job's progress; `scheduler` has been Update()d with every
// task's results, in `tasks` order. `with_tasks`: also every task's
// progress (task_progress); `history` goes to latency_history.
tunefleet::v1::JobProgress ModelJobProgress(
    const store::ModelJob& row, const std::vector<ModelTaskView>& tasks,
    const search::TaskScheduler& scheduler,
    const std::vector<tunefleet::v1::SkippedTask>& skipped,
    const std::vector<tunefleet::v1::LatencyPoint>& history, bool with_tasks);

// A stored model job's progress (not running in a server here), from its
// task jobs' rows and trial tallies. Errors: the store's; DATA_LOSS when
// its stored request does not parse.
absl::StatusOr<tunefleet::v1::JobProgress> StoredModelProgress(
    store::Store& store, const store::ModelJob& row, bool with_tasks);

}  // namespace tunefleet::progress

#endif  // TUNEFLEET_PROGRESS_STORED_PROGRESS_H_
