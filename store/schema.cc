#include "store/schema.h"

#include <cstddef>
#include <iterator>
#include <string>
#include <string_view>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "base/status_macros.h"

namespace tunefleet::store {
namespace {

// Migration i takes the schema from version i to i + 1 (v4's is
// V4Migration(), v5's MigrateToV5(), v6's MigrateToV6(), v7's
// MigrateToV7(), v8's MigrateModelMeasurements(), v9's
// kDriverRevisionsMigration, v10's kDeviceBuffersColumns).
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

// v4: what `query` and `jobs` read, kept up to date by triggers in the
// transaction that records a result (whatever code writes it), and
// backfilled from the trials already there:
// - job_trial_counts: a job's finished trials per error code;
// - job_best: a job's fastest OK trial (ties: the lowest trial id);
// - best_records: the fastest OK trial per (device key, workload,
//   template name), ties to the lowest trial id, as QueryRecords'
//   best_only has always ranked them.
// A trial becomes done once (CompleteTrial and SetJobState only touch
// trials not yet done) and done rows are never deleted, so the triggers
// only ever add. jobs_by_template serves the transfer history read
// (Store::HistoryRecords): a template's jobs, then each job's done
// trials through trials_by_job. The triggers follow in V4Migration().
constexpr absl::string_view kV4Tables = R"sql(
CREATE TABLE job_trial_counts (
  job_id INTEGER NOT NULL,
  error TEXT NOT NULL,
  n INTEGER NOT NULL,
  PRIMARY KEY (job_id, error)) WITHOUT ROWID;
CREATE TABLE job_best (
  job_id INTEGER PRIMARY KEY,
  trial_id INTEGER NOT NULL,
  time_ns REAL NOT NULL);
CREATE TABLE best_records (
  device_key TEXT NOT NULL,
  workload_id INTEGER NOT NULL,
  template_name TEXT NOT NULL,
  trial_id INTEGER NOT NULL,
  time_ns REAL NOT NULL,
  PRIMARY KEY (device_key, workload_id, template_name)) WITHOUT ROWID;
CREATE INDEX jobs_by_template ON jobs (template_id);

INSERT INTO job_trial_counts (job_id, error, n)
  SELECT job_id, error, COUNT(*) FROM trials WHERE state = 'done'
  GROUP BY job_id, error;
INSERT INTO job_best (job_id, trial_id, time_ns)
  SELECT job_id, id, time_ns FROM (
    SELECT job_id, id, time_ns, ROW_NUMBER() OVER (
      PARTITION BY job_id ORDER BY time_ns, id) AS rank
    FROM trials WHERE state = 'done' AND error = 'OK')
  WHERE rank = 1;
INSERT INTO best_records (device_key, workload_id, template_name, trial_id,
                          time_ns)
  SELECT device_key, workload_id, name, trial_id, time_ns FROM (
    SELECT j.device_key, j.workload_id, tp.name, b.trial_id, b.time_ns,
      ROW_NUMBER() OVER (PARTITION BY j.device_key, j.workload_id, tp.name
                         ORDER BY b.time_ns, b.trial_id) AS rank
    FROM job_best b JOIN jobs j ON j.id = b.job_id
    JOIN templates tp ON tp.id = j.template_id)
  WHERE rank = 1;
)sql";

// What the v4 triggers do once a trial is done. SQLite cannot share a
// trigger body, so each body below is put into two triggers: one for a
// trial that becomes done (AFTER UPDATE OF state) and one for a trial
// inserted done.
constexpr absl::string_view kCountTriggerBody = R"sql(
  INSERT INTO job_trial_counts (job_id, error, n)
    VALUES (NEW.job_id, NEW.error, 1)
    ON CONFLICT (job_id, error) DO UPDATE SET n = n + 1;
)sql";
constexpr absl::string_view kBestTriggerBody = R"sql(
  INSERT INTO job_best (job_id, trial_id, time_ns)
    VALUES (NEW.job_id, NEW.id, NEW.time_ns)
    ON CONFLICT (job_id) DO UPDATE SET trial_id = excluded.trial_id,
      time_ns = excluded.time_ns
    WHERE excluded.time_ns < job_best.time_ns OR
      (excluded.time_ns = job_best.time_ns AND
       excluded.trial_id < job_best.trial_id);
  -- Only a trial that is now its job's best can be a better record: any
  -- other lost to one of its job's trials already offered here.
  INSERT INTO best_records (device_key, workload_id, template_name, trial_id,
                            time_ns)
    SELECT j.device_key, j.workload_id, tp.name, NEW.id, NEW.time_ns
    FROM jobs j JOIN templates tp ON tp.id = j.template_id
    WHERE j.id = NEW.job_id AND
      (SELECT trial_id FROM job_best WHERE job_id = NEW.job_id) = NEW.id
    ON CONFLICT (device_key, workload_id, template_name) DO UPDATE SET
      trial_id = excluded.trial_id, time_ns = excluded.time_ns
    WHERE excluded.time_ns < best_records.time_ns OR
      (excluded.time_ns = best_records.time_ns AND
       excluded.trial_id < best_records.trial_id);
)sql";

// "CREATE TRIGGER `name` `event` WHEN `when` BEGIN `body` END;", laid out
// as the v4 migration has always written it (sqlite_master keeps each
// trigger's text, so migrated and fresh files must get the same bytes).
std::string Trigger(absl::string_view name, absl::string_view event,
                    absl::string_view when, absl::string_view body) {
  return absl::StrCat("CREATE TRIGGER ", name, " ", event, "\nWHEN ", when,
                      "\nBEGIN", body, "END;\n");
}

// The v4 migration: kV4Tables, then the count and best triggers for both
// ways a trial becomes done.
std::string V4Migration() {
  constexpr absl::string_view kUpdated = "AFTER UPDATE OF state ON trials";
  constexpr absl::string_view kInserted = "AFTER INSERT ON trials";
  return absl::StrCat(
      kV4Tables, "\n",
      Trigger("trials_done_count", kUpdated,
              "NEW.state = 'done' AND OLD.state != 'done'", kCountTriggerBody),
      Trigger("trials_inserted_done_count", kInserted, "NEW.state = 'done'",
              kCountTriggerBody),
      Trigger("trials_done_best", kUpdated,
              "NEW.state = 'done' AND NEW.error = 'OK'", kBestTriggerBody),
      Trigger("trials_inserted_done_best", kInserted,
              "NEW.state = 'done' AND NEW.error = 'OK'", kBestTriggerBody));
}

// v5: the trials table's CHECK constraints on state and error test
// equalities joined by OR instead of IN lists. SQLite checks an IN list of
// more than two values through a temporary b-tree that it builds (opens,
// fills, closes) for every row checked -- every trial inserted and every
// result -- which was a third of a result's UPDATE. Same rules, same file
// format: the table's stored definition is rewritten in place, as SQLite
// documents for constraint changes that leave the content as it is
// (https://sqlite.org/lang_altertable.html#otheralter).
struct CheckRewrite {
  std::string_view from;
  std::string_view to;
};
constexpr CheckRewrite kV5Checks[] = {
    {"CHECK (state IN ('pending', 'leased', 'done'))",
     "CHECK (state = 'pending' OR state = 'leased' OR state = 'done')"},
    {R"sql(CHECK (error IS NULL OR error IN ('OK', 'INVALID_CONFIG',
    'COMPILE_ERROR', 'RUNTIME_ERROR', 'WRONG_ANSWER', 'TIMEOUT',
    'DEVICE_LOST', 'CANCELLED')))sql",
     R"sql(CHECK (error IS NULL OR error = 'OK' OR
    error = 'INVALID_CONFIG' OR error = 'COMPILE_ERROR' OR
    error = 'RUNTIME_ERROR' OR error = 'WRONG_ANSWER' OR error = 'TIMEOUT' OR
    error = 'DEVICE_LOST' OR error = 'CANCELLED'))sql"},
};

// Migration 4 -> 5, inside the caller's transaction. A definition already
// in the v5 form stays as it is.
absl::Status MigrateToV5(Database& db) {
  std::string sql;
  int64_t schema_version = 0;
  {  // Statements end before the schema is written.
    TUNEFLEET_ASSIGN_OR_RETURN(
        Statement q, db.Prepare("SELECT sql FROM sqlite_master WHERE type = "
                                "'table' AND name = 'trials'"));
    TUNEFLEET_ASSIGN_OR_RETURN(bool row, q.Step());
    if (!row) return absl::InternalError("the trials table is missing");
    sql = q.Text(0);
    TUNEFLEET_ASSIGN_OR_RETURN(Statement v,
                               db.Prepare("PRAGMA schema_version"));
    TUNEFLEET_ASSIGN_OR_RETURN(row, v.Step());
    if (row) schema_version = v.Int(0);
  }
  std::string rewritten = sql;
  for (const CheckRewrite& c : kV5Checks) {
    const size_t at = rewritten.find(c.from);
    if (at != std::string::npos) {
      rewritten.replace(at, c.from.size(), c.to);
    } else if (rewritten.find(c.to) == std::string::npos) {
      return absl::FailedPreconditionError(
          absl::StrCat("the trials table's definition is not tunefleet's: no ",
                       absl::string_view(c.from.data(), c.from.size())));
    }
  }
  if (rewritten == sql) return absl::OkStatus();
  TUNEFLEET_RETURN_IF_ERROR(db.Exec("PRAGMA writable_schema = ON"));
  absl::Status updated = db.Run(
      "UPDATE sqlite_master SET sql = ?1 WHERE type = 'table' AND "
      "name = 'trials'",
      rewritten);
  if (updated.ok()) {
    // Tells every connection (this one too) to read the schema again.
    updated =
        db.Exec(absl::StrCat("PRAGMA schema_version = ", schema_version + 1));
  }
  absl::Status off = db.Exec("PRAGMA writable_schema = OFF");
  TUNEFLEET_RETURN_IF_ERROR(updated);
  return off;
}

// v6: a job's search space size (valid configs of its task on its device),
// so that a job read from the file shows the size its server showed; 0 for
// jobs written before v6. A table that has the column already (a file
// whose version was set back) stays as it is.
absl::Status MigrateToV6(Database& db) {
  bool has_column = false;
  {
    TUNEFLEET_ASSIGN_OR_RETURN(Statement q,
                               db.Prepare("SELECT name FROM "
                                          "pragma_table_info('jobs')"));
    TUNEFLEET_RETURN_IF_ERROR(q.ForEachRow([&has_column](const Statement& row) {
      has_column |= row.Text(0) == "space_size";
    }));
  }
  if (has_column) return absl::OkStatus();
  return db.Exec(
      "ALTER TABLE jobs ADD COLUMN space_size INTEGER NOT NULL DEFAULT 0;");
}

// v7 (issue 39): the provenance of every measurement and the identities
// that make a record bundle's import idempotent (docs/BUNDLES.md):
// - trials.driver_version: CL_DRIVER_VERSION of the agent that measured it;
// - trials.kernel_sha256: SHA-256 (hex) of what the agent built
//   (store::KernelSha256: source, build options, library routine);
// - trials.tunefleet_version: the version of the server that stored it;
// - trials.measurement_id / jobs.origin_id: for a row imported from a
//   bundle, the content identity it had there (store/exchange.h); NULL for
//   rows measured here, whose identity is computed from their content.
// Rows written before v7 keep NULL provenance. Self-contained: it adds
// columns and indexes only, and a file that has them already (its version
// set back) keeps them.
constexpr const char* kV7Columns[][2] = {
    {"trials", "driver_version TEXT"},    {"trials", "kernel_sha256 TEXT"},
    {"trials", "tunefleet_version TEXT"}, {"trials", "measurement_id TEXT"},
    {"jobs", "origin_id TEXT"},
};

// Adds each {table, "name TYPE ..."} column its table lacks; a column
// already there (a file whose version was set back) is kept as it is.
template <size_t N>
absl::Status AddMissingColumns(Database& db,
                               const char* const (&columns)[N][2]) {
  for (const auto& [table, column] : columns) {
    const std::string name(column, std::string_view(column).find(' '));
    bool has_column = false;
    {
      TUNEFLEET_ASSIGN_OR_RETURN(
          Statement q, db.Prepare(absl::StrCat("SELECT name FROM pragma_table_"
                                               "info('",
                                               table, "')")));
      TUNEFLEET_RETURN_IF_ERROR(q.ForEachRow(
          [&](const Statement& row) { has_column |= row.Text(0) == name; }));
    }
    if (has_column) continue;
    TUNEFLEET_RETURN_IF_ERROR(
        db.Exec(absl::StrCat("ALTER TABLE ", table, " ADD COLUMN ", column)));
  }
  return absl::OkStatus();
}

absl::Status MigrateToV7(Database& db) {
  TUNEFLEET_RETURN_IF_ERROR(AddMissingColumns(db, kV7Columns));
  return db.Exec(
      "CREATE UNIQUE INDEX IF NOT EXISTS trials_by_measurement_id ON trials "
      "(measurement_id) WHERE measurement_id IS NOT NULL;\n"
      "CREATE UNIQUE INDEX IF NOT EXISTS jobs_by_origin_id ON jobs "
      "(origin_id) WHERE origin_id IS NOT NULL;");
}

// v8: a model job's end-to-end measurement (docs/TUNING.md, "Measured
// latency"): the ONNX bytes its request carried (kept out of request_json),
// its latency history (the estimate each time it changed), the measured
// latency of its tuned plan and per-layer measured times. Self-contained:
// new tables only, created if missing.
absl::Status MigrateModelMeasurements(Database& db) {
  return db.Exec(R"sql(
CREATE TABLE IF NOT EXISTS model_job_models (
  model_job_id INTEGER PRIMARY KEY REFERENCES model_jobs(id),
  onnx BLOB NOT NULL,
  input_shapes TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS model_job_latency (
  model_job_id INTEGER NOT NULL REFERENCES model_jobs(id),
  seq INTEGER NOT NULL,
  trials_done INTEGER NOT NULL,
  latency_ns REAL NOT NULL,
  PRIMARY KEY (model_job_id, seq));
CREATE TABLE IF NOT EXISTS model_job_measurements (
  model_job_id INTEGER PRIMARY KEY REFERENCES model_jobs(id),
  missing_reason TEXT NOT NULL,
  median_ns REAL NOT NULL,
  p10_ns REAL NOT NULL,
  p90_ns REAL NOT NULL,
  runs INTEGER NOT NULL,
  estimate_ns REAL NOT NULL,
  agent_name TEXT NOT NULL,
  device_name TEXT NOT NULL,
  record TEXT NOT NULL,
  commands_per_run INTEGER NOT NULL,
  measured_ms INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS model_job_layers (
  model_job_id INTEGER NOT NULL REFERENCES model_jobs(id),
  layer_index INTEGER NOT NULL,
  label TEXT NOT NULL,
  workload TEXT NOT NULL,
  entry TEXT NOT NULL,
  measured_ns REAL NOT NULL,
  estimate_ns REAL NOT NULL,
  PRIMARY KEY (model_job_id, layer_index));
)sql");
}

// v9: driver revisions of a device key and the re-validation of its best
// records on each new driver (docs/DRIVER_DRIFT.md):
// - device_drivers: every driver version a key's agents reported, numbered
//   in the order first seen (revision 1: the first); seeded with each
//   stored device's driver;
// - revalidations: a record (its trial, config and time) re-measured by a
//   re-validation job on revision `revision`;
// - revalidation_outcomes: each such row with its outcome on the new
//   driver, from the job's trial of the same config: 'same' (OK, at most
//   kRevalidationSlowerRatio = 1.10 x the record's time), 'slower' (OK,
//   slower than that; `slowdown` = new time / record's time), 'wrong'
//   (WRONG_ANSWER), 'failed' (any other error, or the job ended without
//   measuring it), 'pending' (not measured yet).
// A file whose version was set back and that has them keeps them.
constexpr const char* kDriverRevisionsMigration = R"sql(
CREATE TABLE IF NOT EXISTS device_drivers (
  device_key TEXT NOT NULL,
  driver_version TEXT NOT NULL,
  revision INTEGER NOT NULL CHECK (revision > 0),
  first_seen_ms INTEGER NOT NULL,
  PRIMARY KEY (device_key, driver_version),
  UNIQUE (device_key, revision));
INSERT OR IGNORE INTO device_drivers (device_key, driver_version, revision,
                            first_seen_ms)
  SELECT device_key, driver_version, 1, first_seen_ms FROM devices;
CREATE TABLE IF NOT EXISTS revalidations (
  device_key TEXT NOT NULL,
  revision INTEGER NOT NULL,
  job_id INTEGER NOT NULL REFERENCES jobs(id),
  source_trial_id INTEGER NOT NULL REFERENCES trials(id),
  config_index INTEGER NOT NULL,
  source_time_ns REAL NOT NULL CHECK (source_time_ns > 0),
  PRIMARY KEY (device_key, revision, source_trial_id));
CREATE INDEX IF NOT EXISTS revalidations_by_job ON revalidations (job_id, config_index);
CREATE VIEW IF NOT EXISTS revalidation_outcomes AS
  SELECT r.device_key, r.revision, r.job_id, r.source_trial_id,
         r.config_index, r.source_time_ns, t.id AS trial_id,
         t.time_ns AS time_ns,
         CASE WHEN t.state = 'done' AND t.error = 'OK'
                   AND t.time_ns <= r.source_time_ns * 1.10 THEN 'same'
              WHEN t.state = 'done' AND t.error = 'OK' THEN 'slower'
              WHEN t.state = 'done' AND t.error = 'WRONG_ANSWER' THEN 'wrong'
              WHEN t.state = 'done' THEN 'failed'
              WHEN j.state IN ('done', 'failed', 'cancelled') THEN 'failed'
              ELSE 'pending' END AS outcome,
         CASE WHEN t.state = 'done' AND t.error = 'OK'
              THEN t.time_ns / r.source_time_ns END AS slowdown
  FROM revalidations r
  JOIN jobs j ON j.id = r.job_id
  LEFT JOIN trials t ON t.job_id = r.job_id
                    AND t.config_index = r.config_index;
)sql";

// v10 (issue 36): a model job's measured latency with the inputs and
// outputs in device buffers (MeasuredLatency.device_buffers_*: median,
// p10, p90 in ns, and the runs), beside the host-array figures. Rows
// measured before v10 read 0 (not measured). Self-contained: it adds
// columns only, and a file that has them already keeps them.
constexpr const char* kDeviceBuffersColumns[][2] = {
    {"model_job_measurements",
     "device_buffers_median_ns REAL NOT NULL DEFAULT 0"},
    {"model_job_measurements", "device_buffers_p10_ns REAL NOT NULL DEFAULT 0"},
    {"model_job_measurements", "device_buffers_p90_ns REAL NOT NULL DEFAULT 0"},
    {"model_job_measurements",
     "device_buffers_runs INTEGER NOT NULL DEFAULT 0"},
};

static_assert(std::size(kMigrations) + 7 == kSchemaVersion);

// Runs migration `v` (from version v to v + 1) inside the caller's
// transaction.
absl::Status Migrate(Database& db, int v) {
  if (v < static_cast<int>(std::size(kMigrations))) {
    return db.Exec(kMigrations[v]);
  }
  if (v == static_cast<int>(std::size(kMigrations))) {
    return db.Exec(V4Migration());
  }
  if (v == static_cast<int>(std::size(kMigrations)) + 1) {
    return MigrateToV5(db);
  }
  if (v == static_cast<int>(std::size(kMigrations)) + 2) {
    return MigrateToV6(db);
  }
  if (v == static_cast<int>(std::size(kMigrations)) + 3) {
    return MigrateToV7(db);
  }
  if (v == static_cast<int>(std::size(kMigrations)) + 4) {
    return MigrateModelMeasurements(db);
  }
  if (v == static_cast<int>(std::size(kMigrations)) + 5) {
    return db.Exec(kDriverRevisionsMigration);
  }
  return AddMissingColumns(db, kDeviceBuffersColumns);
}

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
    TUNEFLEET_RETURN_IF_ERROR(Migrate(db, v));
    TUNEFLEET_RETURN_IF_ERROR(
        db.Exec(absl::StrCat("PRAGMA user_version = ", v + 1)));
    TUNEFLEET_RETURN_IF_ERROR(txn.Commit());
  }
  return absl::OkStatus();
}

}  // namespace tunefleet::store
