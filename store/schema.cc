#include "store/schema.h"

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"

namespace tunefleet::store {
namespace {

// Migration i takes the schema from version i to i + 1.
constexpr const char* kMigrations[] = {
    R"sql(
CREATE TABLE devices (
  device_key TEXT PRIMARY KEY,
  device_name TEXT NOT NULL,
  vendor TEXT NOT NULL,
  driver_version TEXT NOT NULL,
  info_json TEXT NOT NULL,
  first_seen_ms INTEGER NOT NULL,
  last_seen_ms INTEGER NOT NULL);
CREATE TABLE workloads (
  id INTEGER PRIMARY KEY,
  op TEXT NOT NULL,
  shape TEXT NOT NULL,
  dtype TEXT NOT NULL,
  canonical TEXT NOT NULL UNIQUE,
  hash TEXT NOT NULL);
CREATE TABLE templates (
  id INTEGER PRIMARY KEY,
  name TEXT NOT NULL,
  version INTEGER NOT NULL,
  op TEXT NOT NULL,
  source_hash TEXT NOT NULL,
  source TEXT NOT NULL,
  UNIQUE (name, version, source_hash));
CREATE TABLE jobs (
  id INTEGER PRIMARY KEY,
  workload_id INTEGER NOT NULL REFERENCES workloads(id),
  template_id INTEGER NOT NULL REFERENCES templates(id),
  device_key TEXT NOT NULL,
  strategy TEXT NOT NULL,
  budget INTEGER NOT NULL CHECK (budget > 0),
  seed INTEGER NOT NULL,
  priority INTEGER NOT NULL DEFAULT 0,
  state TEXT NOT NULL
    CHECK (state IN ('queued', 'running', 'done', 'failed', 'cancelled')),
  message TEXT NOT NULL DEFAULT '',
  reference_ns REAL,
  created_ms INTEGER NOT NULL,
  finished_ms INTEGER);
CREATE TABLE trials (
  id INTEGER PRIMARY KEY,
  job_id INTEGER NOT NULL REFERENCES jobs(id),
  config_index INTEGER NOT NULL,
  config TEXT NOT NULL,
  state TEXT NOT NULL CHECK (state IN ('pending', 'leased', 'done')),
  agent TEXT,
  attempt INTEGER NOT NULL DEFAULT 0,
  error TEXT CHECK (error IS NULL OR error IN ('OK', 'INVALID_CONFIG',
    'COMPILE_ERROR', 'RUNTIME_ERROR', 'WRONG_ANSWER', 'TIMEOUT',
    'DEVICE_LOST', 'CANCELLED')),
  error_message TEXT,
  times_ns TEXT,
  time_ns REAL,
  gflops REAL,
  number INTEGER,
  compile_ms REAL,
  max_rel_error REAL,
  created_ms INTEGER NOT NULL,
  leased_ms INTEGER,
  done_ms INTEGER,
  UNIQUE (job_id, config_index),
  CHECK (state != 'done' OR error IS NOT NULL),
  CHECK (error != 'OK' OR time_ns > 0));
CREATE INDEX trials_by_job ON trials (job_id, state);
)sql",
    // v2: what a job was asked for (its SubmitJobRequest as JSON) and its
    // deadline, so that a restarted server can resume it.
    R"sql(
ALTER TABLE jobs ADD COLUMN request_json TEXT NOT NULL DEFAULT '';
ALTER TABLE jobs ADD COLUMN deadline_ms INTEGER;
)sql",
    // v3: model jobs (one budget over a model's tasks); each task is a job
    // row that names its model job, its place in the request, and the
    // trials the task scheduler has granted it. Job ids and model job ids
    // are drawn from one sequence (Store::NextJobId).
    R"sql(
CREATE TABLE model_jobs (
  id INTEGER PRIMARY KEY,
  model_name TEXT NOT NULL,
  device_key TEXT NOT NULL,
  strategy TEXT NOT NULL,
  task_scheduler TEXT NOT NULL,
  budget INTEGER NOT NULL CHECK (budget > 0),
  seed INTEGER NOT NULL,
  priority INTEGER NOT NULL DEFAULT 0,
  state TEXT NOT NULL
    CHECK (state IN ('queued', 'running', 'done', 'failed', 'cancelled')),
  message TEXT NOT NULL DEFAULT '',
  request_json TEXT NOT NULL,
  created_ms INTEGER NOT NULL,
  deadline_ms INTEGER,
  finished_ms INTEGER);
ALTER TABLE jobs ADD COLUMN model_job_id INTEGER REFERENCES model_jobs(id);
ALTER TABLE jobs ADD COLUMN task_index INTEGER;
ALTER TABLE jobs ADD COLUMN granted INTEGER NOT NULL DEFAULT 0;
CREATE INDEX jobs_by_model_job ON jobs (model_job_id, task_index);
)sql",
};

}  // namespace

absl::Status MigrateSchema(Database& db) {
  TUNEFLEET_ASSIGN_OR_RETURN(Statement q, db.Prepare("PRAGMA user_version"));
  TUNEFLEET_ASSIGN_OR_RETURN(bool row, q.Step());
  const int version = row ? static_cast<int>(q.Int(0)) : 0;
  if (version > kSchemaVersion) {
    return absl::FailedPreconditionError(absl::StrCat(
        "database schema version ", version,
        " is newer than this tunefleet's (", kSchemaVersion, "); upgrade"));
  }
  for (int v = version; v < kSchemaVersion; ++v) {
    Transaction txn(db);
    TUNEFLEET_RETURN_IF_ERROR(txn.status());
    TUNEFLEET_RETURN_IF_ERROR(db.Exec(kMigrations[v]));
    TUNEFLEET_RETURN_IF_ERROR(
        db.Exec(absl::StrCat("PRAGMA user_version = ", v + 1)));
    TUNEFLEET_RETURN_IF_ERROR(txn.Commit());
  }
  return absl::OkStatus();
}

}  // namespace tunefleet::store
