#include "server/server_snapshot.h"

#include <vector>

#include "contract/names.h"

namespace tunefleet::server {
namespace {

// Adds the job's done trials by error code to `out`.
void CountTrials(store::Store& store, const store::StoredJob& job,
                 metrics::Snapshot* out) {
  if (auto tally = store.TallyJob(job.id); tally.ok()) {
    for (const auto& [error, n] : tally->errors) {
      out->trials_done_by_error[error] += n;
    }
  }
}

}  // namespace

metrics::Snapshot CollectSnapshot(store::Store& store,
                                  LeaseScheduler& scheduler,
                                  const std::string& db_path) {
  metrics::Snapshot out;
  for (const auto& agent : scheduler.Agents())
    ++out.agents_by_key[agent->key()];
  out.queued_trials = static_cast<int64_t>(scheduler.QueuedCount());
  out.leases_in_flight = static_cast<int64_t>(scheduler.LeaseCount());
  if (auto jobs = store.ListJobs(0); jobs.ok()) {
    for (const store::StoredJob& job : *jobs) {
      ++out.jobs_by_state[contract::JobStateName(job.state)];
      CountTrials(store, job, &out);
    }
  }
  if (auto models = store.ListModelJobs(0); models.ok()) {
    for (const store::ModelJob& model : *models) {
      ++out.model_jobs_by_state[contract::JobStateName(model.state)];
      auto tasks = store.ModelTaskJobs(model.id);
      if (!tasks.ok()) continue;
      for (const store::StoredJob& task : *tasks)
        CountTrials(store, task, &out);
    }
  }
  out.sqlite_bytes = metrics::SqliteBytes(db_path);
  return out;
}

}  // namespace tunefleet::server
