// Re-validation of a device key's records on a new driver
// (docs/DRIVER_DRIFT.md): when an agent joins a key with a driver version
// the key never had, the key gains a driver revision, and the best configs
// of each of its tasks are measured again (and verified) on that driver by
// one re-validation job per task (JobManager::SubmitRevalidation), whose
// outcomes the store's revalidation_outcomes view reads.
#ifndef TUNEFLEET_SERVER_REVALIDATION_H_
#define TUNEFLEET_SERVER_REVALIDATION_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "server/job_manager.h"
#include "store/store.h"

namespace tunefleet::server {

// Configs re-measured per task (workload, template) by default: the
// fastest ones (tunefleet-server --revalidate-top).
inline constexpr int kDefaultRevalidateTop = 3;

// Starts the re-validation of `key`'s records on driver `driver_version`
// (its revision `revision`): for each task of the key with OK records, a
// job that re-measures its `top` fastest distinct configs on agents
// reporting that driver. Tasks that cannot be re-validated (their
// template gone or changed) are skipped, with the reason in the log (warn).
// Returns the jobs' ids (none when the key has no records). Errors: the
// store's.
absl::StatusOr<std::vector<int64_t>> StartRevalidation(
    store::Store& store, JobManager& jobs, const std::string& key,
    const std::string& driver_version, int revision, int top);

}  // namespace tunefleet::server

#endif  // TUNEFLEET_SERVER_REVALIDATION_H_
