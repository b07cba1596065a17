// The server's levels for ServerMetrics, read from the scheduler and the
// store at scrape time. Compiled into tunefleet_server (it reads the
// LeaseScheduler), unlike the rest of metrics/.
#ifndef TUNEFLEET_SERVER_SERVER_SNAPSHOT_H_
#define TUNEFLEET_SERVER_SERVER_SNAPSHOT_H_

#include <string>

#include "metrics/server_metrics.h"
#include "server/lease_scheduler.h"
#include "store/store.h"

namespace tunefleet::server {

// Fills a Snapshot:
// - agents_by_key from LeaseScheduler::Agents();
// - jobs_by_state and model_jobs_by_state from the store's job rows
//   (Store::ListJobs and ListModelJobs: every row, O(jobs));
// - queued_trials and leases_in_flight from LeaseScheduler::QueuedCount() and
//   LeaseCount() (the scheduler's own queue and leases; reference runs
//   included);
// - trials_done_by_error summed over every job's and model job task's
//   Store::TallyJob (O(jobs) index reads on the per-job count table);
// - sqlite_bytes from the files at `db_path` (SqliteBytes).
// Best effort: a store error leaves the fields it would have filled at 0.
metrics::Snapshot CollectSnapshot(store::Store& store,
                                  LeaseScheduler& scheduler,
                                  const std::string& db_path);

}  // namespace tunefleet::server

#endif  // TUNEFLEET_SERVER_SERVER_SNAPSHOT_H_
