// The tuning-record database's schema: its tables (devices, workloads,
// templates, jobs, model jobs, trials; from v4 the per-job counts, per-job
// best and best-record tables that triggers keep; v5 the trials' CHECK
// constraints in a form SQLite checks cheaply) and the migrations that
// bring a file of any earlier version to the one this build writes. The version
// is SQLite's user_version; each migration runs in its own transaction.
#ifndef TUNEFLEET_STORE_SCHEMA_H_
#define TUNEFLEET_STORE_SCHEMA_H_

#include "absl/status/status.h"
#include "store/sqlite.h"

namespace tunefleet::store {

// The schema version this build writes.
inline constexpr int kSchemaVersion = 10;

// Brings `db` to kSchemaVersion (a new file gets every table). Errors:
// FAILED_PRECONDITION when the file's schema is newer than this build's;
// INTERNAL from SQLite.
absl::Status MigrateSchema(Database& db);

}  // namespace tunefleet::store

#endif  // TUNEFLEET_STORE_SCHEMA_H_
