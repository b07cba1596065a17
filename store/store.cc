#include "store/store.h"

#include <algorithm>
#include <chrono>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "base/status_macros.h"
#include "base/time.h"
#include "google/protobuf/util/json_util.h"
#include "proto/names.h"
#include "trial/trial_request.h"

namespace tunefleet::store {
namespace {

using tunefleet::v1::Measurement;

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
};

// Columns of a record query, shared by QueryRecords' two forms.
constexpr absl::string_view kRecordColumns =
    "t.id, t.job_id, j.device_key, w.op, w.shape, w.dtype, tp.name, "
    "tp.version, t.config, t.error, t.time_ns, t.gflops";
constexpr absl::string_view kRecordJoins =
    "FROM trials t JOIN jobs j ON t.job_id = j.id "
    "JOIN workloads w ON j.workload_id = w.id "
    "JOIN templates tp ON j.template_id = tp.id ";
constexpr absl::string_view kRecordFilter =
    "t.state = 'done' AND (?1 = '' OR w.op = ?1) AND "
    "(?2 = '' OR j.device_key = ?2) AND (?3 = 0 OR t.job_id = ?3) AND "
    "(?4 = '' OR tp.name = ?4)";

tunefleet::v1::Config ParseConfigText(const std::string& text) {
  tunefleet::v1::Config config;
  for (absl::string_view token : absl::StrSplit(text, ',', absl::SkipEmpty())) {
    std::pair<absl::string_view, absl::string_view> kv =
        absl::StrSplit(token, absl::MaxSplits('=', 1));
    int64_t value = 0;
    if (!absl::SimpleAtoi(kv.second, &value)) continue;
    auto* knob = config.add_knobs();
    knob->set_name(std::string(kv.first));
    knob->set_value(value);
  }
  return config;
}

tunefleet::v1::TuningRecord RecordFromRow(const Statement& s) {
  tunefleet::v1::TuningRecord r;
  r.set_trial_id(s.Int(0));
  r.set_job_id(s.Int(1));
  r.set_device_key(s.Text(2));
  auto workload = templates::Workload::Parse(s.Text(3), s.Text(4), s.Text(5));
  if (workload.ok()) {
    *r.mutable_workload() = trial::WorkloadToProto(*workload);
    r.set_workload_key(workload->Canonical());
  }
  r.set_template_name(s.Text(6));
  r.set_template_version(static_cast<int32_t>(s.Int(7)));
  *r.mutable_config() = ParseConfigText(s.Text(8));
  Measurement::Error error = Measurement::ERROR_UNSPECIFIED;
  Measurement::Error_Parse(s.Text(9), &error);
  r.set_error(error);
  r.set_time_ns(s.Double(10));
  r.set_gflops(s.Double(11));
  return r;
}

}  // namespace

absl::StatusOr<std::unique_ptr<Store>> Store::Open(const std::string& path) {
  TUNEFLEET_ASSIGN_OR_RETURN(Database db, Database::Open(path));
  TUNEFLEET_RETURN_IF_ERROR(
      db.Exec("PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; "
              "PRAGMA foreign_keys = ON;"));
  auto store = std::make_unique<Store>(PrivateTag{}, std::move(db));
  absl::MutexLock lock(&store->mu_);
  TUNEFLEET_RETURN_IF_ERROR(store->Migrate());
  return store;
}

absl::Status Store::Migrate() {
  TUNEFLEET_ASSIGN_OR_RETURN(Statement q, db_.Prepare("PRAGMA user_version"));
  TUNEFLEET_ASSIGN_OR_RETURN(bool row, q.Step());
  const int version = row ? static_cast<int>(q.Int(0)) : 0;
  if (version > kSchemaVersion) {
    return absl::FailedPreconditionError(absl::StrCat(
        "database schema version ", version,
        " is newer than this tunefleet's (", kSchemaVersion, "); upgrade"));
  }
  for (int v = version; v < kSchemaVersion; ++v) {
    Transaction txn(db_);
    TUNEFLEET_RETURN_IF_ERROR(txn.status());
    TUNEFLEET_RETURN_IF_ERROR(db_.Exec(kMigrations[v]));
    TUNEFLEET_RETURN_IF_ERROR(
        db_.Exec(absl::StrCat("PRAGMA user_version = ", v + 1)));
    TUNEFLEET_RETURN_IF_ERROR(txn.Commit());
  }
  return absl::OkStatus();
}

absl::Status Store::UpsertDevice(const std::string& key,
                                 const tunefleet::v1::DeviceInfo& info) {
  std::string json;
  (void)google::protobuf::util::MessageToJsonString(info, &json);
  const int64_t now = base::NowMs();
  absl::MutexLock lock(&mu_);
  return db_.Run(
      "INSERT INTO devices (device_key, device_name, vendor, driver_version, "
      "info_json, first_seen_ms, last_seen_ms) "
      "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?6) ON CONFLICT (device_key) DO "
      "UPDATE SET device_name = ?2, vendor = ?3, driver_version = ?4, "
      "info_json = ?5, last_seen_ms = ?6",
      key, info.device_name(), info.vendor(), info.driver_version(), json, now);
}

absl::StatusOr<tunefleet::v1::DeviceInfo> Store::GetDevice(
    const std::string& key) {
  absl::MutexLock lock(&mu_);
  TUNEFLEET_ASSIGN_OR_RETURN(
      Statement s,
      db_.Prepare("SELECT info_json FROM devices WHERE device_key = ?1"));
  s.Bind(1, key);
  TUNEFLEET_ASSIGN_OR_RETURN(bool row, s.Step());
  if (!row) {
    return absl::NotFoundError(absl::StrCat("no device with key '", key, "'"));
  }
  tunefleet::v1::DeviceInfo info;
  (void)google::protobuf::util::JsonStringToMessage(s.Text(0), &info);
  return info;
}

absl::StatusOr<std::vector<std::pair<std::string, tunefleet::v1::DeviceInfo>>>
Store::ListDevices() {
  absl::MutexLock lock(&mu_);
  TUNEFLEET_ASSIGN_OR_RETURN(
      Statement s,
      db_.Prepare("SELECT device_key, info_json FROM devices ORDER BY 1"));
  std::vector<std::pair<std::string, tunefleet::v1::DeviceInfo>> out;
  TUNEFLEET_RETURN_IF_ERROR(s.ForEachRow([&out](const Statement& row) {
    tunefleet::v1::DeviceInfo info;
    (void)google::protobuf::util::JsonStringToMessage(row.Text(1), &info);
    out.emplace_back(row.Text(0), std::move(info));
  }));
  return out;
}

absl::StatusOr<int64_t> Store::UpsertWorkload(const templates::Workload& w) {
  TUNEFLEET_ASSIGN_OR_RETURN(
      Statement insert,
      db_.Prepare("INSERT OR IGNORE INTO workloads (op, shape, dtype, "
                  "canonical, hash) VALUES (?1, ?2, ?3, ?4, ?5)"));
  insert.Bind(1, w.op()).Bind(2, w.ShapeString()).Bind(3, w.dtype());
  insert.Bind(4, w.Canonical()).Bind(5, w.Hash());
  TUNEFLEET_RETURN_IF_ERROR(insert.Run());
  TUNEFLEET_ASSIGN_OR_RETURN(
      Statement q,
      db_.Prepare("SELECT id FROM workloads WHERE canonical = ?1"));
  q.Bind(1, w.Canonical());
  TUNEFLEET_ASSIGN_OR_RETURN(bool row, q.Step());
  if (!row) return absl::InternalError("workload row vanished");
  return q.Int(0);
}

absl::StatusOr<int64_t> Store::UpsertTemplate(
    const templates::KernelTemplate& t) {
  const std::string hash = t.SourceHash();
  TUNEFLEET_ASSIGN_OR_RETURN(
      Statement insert,
      db_.Prepare("INSERT OR IGNORE INTO templates (name, version, op, "
                  "source_hash, source) VALUES (?1, ?2, ?3, ?4, ?5)"));
  insert.Bind(1, t.name()).Bind(2, int64_t{t.version()}).Bind(3, t.op());
  insert.Bind(4, hash).Bind(5, t.source());
  TUNEFLEET_RETURN_IF_ERROR(insert.Run());
  TUNEFLEET_ASSIGN_OR_RETURN(
      Statement q,
      db_.Prepare("SELECT id FROM templates WHERE name = ?1 AND version = ?2 "
                  "AND source_hash = ?3"));
  q.Bind(1, t.name()).Bind(2, int64_t{t.version()}).Bind(3, hash);
  TUNEFLEET_ASSIGN_OR_RETURN(bool row, q.Step());
  if (!row) return absl::InternalError("template row vanished");
  return q.Int(0);
}

absl::StatusOr<int64_t> Store::CreateJob(const JobParams& spec,
                                         const std::string& request_json) {
  absl::MutexLock lock(&mu_);
  Transaction txn(db_);
  TUNEFLEET_RETURN_IF_ERROR(txn.status());
  TUNEFLEET_ASSIGN_OR_RETURN(int64_t workload_id,
                             UpsertWorkload(spec.workload));
  TUNEFLEET_ASSIGN_OR_RETURN(int64_t template_id, UpsertTemplate(*spec.tmpl));
  TUNEFLEET_ASSIGN_OR_RETURN(
      Statement s,
      db_.Prepare("INSERT INTO jobs (workload_id, template_id, device_key, "
                  "strategy, budget, seed, priority, state, created_ms, "
                  "request_json, deadline_ms) VALUES (?1, ?2, ?3, ?4, ?5, ?6, "
                  "?7, 'queued', ?8, ?9, ?10)"));
  s.Bind(1, workload_id).Bind(2, template_id).Bind(3, spec.device_key);
  s.Bind(4, proto::StrategyName(spec.strategy)).Bind(5, spec.budget);
  s.Bind(6, static_cast<int64_t>(spec.seed)).Bind(7, int64_t{spec.priority});
  const int64_t now = base::NowMs();
  s.Bind(8, now).Bind(9, request_json);
  if (spec.deadline_s > 0) {
    s.Bind(10, now + spec.deadline_s * 1000);
  } else {
    s.BindNull(10);
  }
  TUNEFLEET_RETURN_IF_ERROR(s.Run());
  const int64_t id = db_.LastInsertId();
  TUNEFLEET_RETURN_IF_ERROR(txn.Commit());
  return id;
}

absl::StatusOr<std::vector<Job>> Store::SelectJobs(absl::string_view where,
                                                   int64_t arg) {
  TUNEFLEET_ASSIGN_OR_RETURN(
      Statement s,
      db_.Prepare(absl::StrCat(
          "SELECT j.id, w.canonical, tp.name, tp.version, "
          "j.device_key, j.strategy, j.budget, j.seed, j.priority, "
          "j.state, j.message, j.reference_ns, j.request_json, "
          "j.created_ms, j.deadline_ms FROM jobs j "
          "JOIN workloads w ON j.workload_id = w.id "
          "JOIN templates tp ON j.template_id = tp.id WHERE ",
          where, " ORDER BY j.id DESC")));
  s.Bind(1, arg);
  std::vector<Job> out;
  TUNEFLEET_RETURN_IF_ERROR(s.ForEachRow([&out](const Statement& row) {
    Job j;
    j.id = row.Int(0);
    j.workload = row.Text(1);
    j.template_name = row.Text(2);
    j.template_version = static_cast<int>(row.Int(3));
    j.device_key = row.Text(4);
    j.strategy = proto::ParseStrategy(row.Text(5))
                     .value_or(tunefleet::v1::STRATEGY_UNSPECIFIED);
    j.budget = row.Int(6);
    j.seed = static_cast<uint64_t>(row.Int(7));
    j.priority = static_cast<int>(row.Int(8));
    j.state = proto::ParseJobState(row.Text(9))
                  .value_or(tunefleet::v1::JOB_STATE_UNSPECIFIED);
    j.message = row.Text(10);
    j.reference_ns = row.Double(11);
    j.request_json = row.Text(12);
    j.created_ms = row.Int(13);
    j.deadline_ms = row.IsNull(14) ? 0 : row.Int(14);
    out.push_back(std::move(j));
  }));
  return out;
}

absl::StatusOr<Job> Store::GetJob(int64_t job_id) {
  absl::MutexLock lock(&mu_);
  TUNEFLEET_ASSIGN_OR_RETURN(std::vector<Job> rows,
                             SelectJobs("j.id = ?1", job_id));
  if (rows.empty()) return absl::NotFoundError(absl::StrCat("no job ", job_id));
  return std::move(rows.front());
}

absl::StatusOr<std::vector<Job>> Store::ListJobs(int64_t limit) {
  absl::MutexLock lock(&mu_);
  TUNEFLEET_ASSIGN_OR_RETURN(std::vector<Job> rows, SelectJobs("?1 = ?1", 0));
  if (limit > 0 && rows.size() > static_cast<size_t>(limit)) {
    rows.resize(static_cast<size_t>(limit));
  }
  return rows;
}

absl::StatusOr<std::vector<Job>> Store::UnfinishedJobs() {
  absl::MutexLock lock(&mu_);
  TUNEFLEET_ASSIGN_OR_RETURN(
      std::vector<Job> rows,
      SelectJobs("j.state IN ('queued', 'running') AND ?1 = ?1", 0));
  std::reverse(rows.begin(), rows.end());  // oldest first
  return rows;
}

absl::StatusOr<std::vector<Trial>> Store::JobTrials(int64_t job_id) {
  absl::MutexLock lock(&mu_);
  TUNEFLEET_ASSIGN_OR_RETURN(
      Statement s,
      db_.Prepare("SELECT id, config_index, state, error, time_ns, attempt "
                  "FROM trials WHERE job_id = ?1 ORDER BY id"));
  s.Bind(1, job_id);
  std::vector<Trial> out;
  TUNEFLEET_RETURN_IF_ERROR(s.ForEachRow([&out](const Statement& row) {
    Trial t;
    t.id = row.Int(0);
    t.config_index = static_cast<uint64_t>(row.Int(1));
    t.state = proto::ParseTrialState(row.Text(2))
                  .value_or(tunefleet::v1::TRIAL_STATE_UNSPECIFIED);
    if (!row.IsNull(3)) {
      tunefleet::v1::Measurement::Error_Parse(row.Text(3), &t.error);
    }
    t.time_ns = row.IsNull(4) ? 0 : row.Double(4);
    t.attempt = static_cast<int>(row.Int(5));
    out.push_back(std::move(t));
  }));
  return out;
}

absl::Status Store::SetJobReference(int64_t job_id, double reference_ns) {
  absl::MutexLock lock(&mu_);
  return db_.Run("UPDATE jobs SET reference_ns = ?2 WHERE id = ?1", job_id,
                 reference_ns);
}

absl::Status Store::SetJobState(int64_t job_id, tunefleet::v1::JobState state,
                                const std::string& message) {
  const bool final = proto::IsFinalJobState(state);
  absl::MutexLock lock(&mu_);
  Transaction txn(db_);
  TUNEFLEET_RETURN_IF_ERROR(txn.status());
  TUNEFLEET_RETURN_IF_ERROR(
      db_.Run("UPDATE jobs SET state = ?2, message = ?3, "
              "finished_ms = CASE WHEN ?4 THEN ?5 ELSE NULL END WHERE id = ?1",
              job_id, proto::JobStateName(state), message, int64_t{final},
              base::NowMs()));
  if (final) {
    // A finished job leaves no trial without a result: those never
    // measured are recorded as CANCELLED.
    TUNEFLEET_RETURN_IF_ERROR(
        db_.Run("UPDATE trials SET state = 'done', error = 'CANCELLED', "
                "error_message = 'job ended before this trial ran', "
                "done_ms = ?2 WHERE job_id = ?1 AND state != 'done'",
                job_id, base::NowMs()));
  }
  return txn.Commit();
}

absl::StatusOr<std::vector<int64_t>> Store::InsertTrials(
    int64_t job_id, const std::vector<NewTrial>& trials) {
  absl::MutexLock lock(&mu_);
  Transaction txn(db_);
  TUNEFLEET_RETURN_IF_ERROR(txn.status());
  std::vector<int64_t> ids;
  const int64_t now = base::NowMs();
  for (const NewTrial& t : trials) {
    TUNEFLEET_ASSIGN_OR_RETURN(
        Statement s,
        db_.Prepare("INSERT INTO trials (job_id, config_index, config, state, "
                    "created_ms) VALUES (?1, ?2, ?3, 'pending', ?4)"));
    s.Bind(1, job_id).Bind(2, static_cast<int64_t>(t.config_index));
    s.Bind(3, t.config).Bind(4, now);
    TUNEFLEET_RETURN_IF_ERROR(s.Run());
    ids.push_back(db_.LastInsertId());
  }
  TUNEFLEET_RETURN_IF_ERROR(txn.Commit());
  return ids;
}

absl::Status Store::LeaseTrial(int64_t trial_id, const std::string& agent) {
  absl::MutexLock lock(&mu_);
  return db_.Run(
      "UPDATE trials SET state = 'leased', agent = ?2, attempt = attempt + 1, "
      "leased_ms = ?3 WHERE id = ?1 AND state = 'pending'",
      trial_id, agent, base::NowMs());
}

absl::Status Store::RequeueTrial(int64_t trial_id) {
  absl::MutexLock lock(&mu_);
  return db_.Run(
      "UPDATE trials SET state = 'pending', agent = NULL "
      "WHERE id = ?1 AND state = 'leased'",
      trial_id);
}

absl::Status Store::RequeueLeased(int64_t job_id) {
  absl::MutexLock lock(&mu_);
  return db_.Run(
      "UPDATE trials SET state = 'pending', agent = NULL "
      "WHERE job_id = ?1 AND state = 'leased'",
      job_id);
}

absl::StatusOr<bool> Store::CompleteTrial(int64_t trial_id,
                                          const Measurement& m, double time_ns,
                                          double gflops) {
  const std::string times = absl::StrCat(
      "[",
      absl::StrJoin(
          m.times_ns(), ",",
          [](std::string* out, double t) { absl::StrAppend(out, t); }),
      "]");
  absl::MutexLock lock(&mu_);
  Transaction txn(db_);
  TUNEFLEET_RETURN_IF_ERROR(txn.status());
  TUNEFLEET_ASSIGN_OR_RETURN(
      Statement s,
      db_.Prepare("UPDATE trials SET state = 'done', error = ?2, "
                  "error_message = ?3, times_ns = ?4, time_ns = ?5, "
                  "gflops = ?6, number = ?7, compile_ms = ?8, "
                  "max_rel_error = ?9, done_ms = ?10 "
                  "WHERE id = ?1 AND state != 'done'"));
  s.Bind(1, trial_id).Bind(2, Measurement::Error_Name(m.error()));
  s.Bind(3, m.error_message()).Bind(4, times);
  if (m.error() == Measurement::OK) {
    s.Bind(5, time_ns).Bind(6, gflops);
  } else {
    s.BindNull(5).BindNull(6);
  }
  s.Bind(7, int64_t{m.number()}).Bind(8, m.compile_ms());
  s.Bind(9, m.max_rel_error()).Bind(10, base::NowMs());
  TUNEFLEET_RETURN_IF_ERROR(s.Run());
  const bool changed = db_.Changes() == 1;
  TUNEFLEET_RETURN_IF_ERROR(txn.Commit());
  return changed;
}

absl::StatusOr<JobTally> Store::TallyJob(int64_t job_id) {
  JobTally tally;
  {
    absl::MutexLock lock(&mu_);
    TUNEFLEET_ASSIGN_OR_RETURN(
        Statement s,
        db_.Prepare("SELECT error, COUNT(*) FROM trials WHERE job_id = ?1 "
                    "AND state = 'done' GROUP BY error"));
    s.Bind(1, job_id);
    TUNEFLEET_RETURN_IF_ERROR(s.ForEachRow([&tally](const Statement& row) {
      tally.errors[row.Text(0)] = static_cast<uint32_t>(row.Int(1));
      tally.done += row.Int(1);
    }));
  }
  RecordFilter filter;
  filter.job_id = job_id;
  filter.best_only = true;
  TUNEFLEET_ASSIGN_OR_RETURN(std::vector<tunefleet::v1::TuningRecord> best,
                             QueryRecords(filter));
  if (!best.empty()) tally.best = best.front();
  return tally;
}

absl::StatusOr<std::vector<tunefleet::v1::TuningRecord>> Store::QueryRecords(
    const RecordFilter& filter) {
  const std::string sql =
      filter.best_only
          ? absl::StrCat(
                "SELECT * FROM (SELECT ", kRecordColumns,
                ", ROW_NUMBER() OVER (PARTITION BY j.device_key, w.id, "
                "tp.name ORDER BY t.time_ns, t.id) AS rank ",
                kRecordJoins, "WHERE ", kRecordFilter,
                " AND t.error = 'OK') WHERE rank = 1 ORDER BY 3, 4, 5")
          : absl::StrCat("SELECT ", kRecordColumns, " ", kRecordJoins, "WHERE ",
                         kRecordFilter, " ORDER BY t.id");
  absl::MutexLock lock(&mu_);
  TUNEFLEET_ASSIGN_OR_RETURN(Statement s, db_.Prepare(sql));
  s.Bind(1, filter.op).Bind(2, filter.device_key).Bind(3, filter.job_id);
  s.Bind(4, filter.template_name);
  std::vector<tunefleet::v1::TuningRecord> out;
  TUNEFLEET_RETURN_IF_ERROR(s.ForEachRow(
      [&out](const Statement& row) { out.push_back(RecordFromRow(row)); }));
  return out;
}

absl::StatusOr<std::optional<double>> Store::ReferenceTime(
    const std::string& device_key, const std::string& workload,
    const std::string& template_name) {
  absl::MutexLock lock(&mu_);
  TUNEFLEET_ASSIGN_OR_RETURN(
      Statement s,
      db_.Prepare("SELECT MIN(j.reference_ns) FROM jobs j "
                  "JOIN workloads w ON j.workload_id = w.id "
                  "JOIN templates tp ON j.template_id = tp.id "
                  "WHERE j.device_key = ?1 AND w.canonical = ?2 AND "
                  "tp.name = ?3 AND j.reference_ns > 0"));
  s.Bind(1, device_key).Bind(2, workload).Bind(3, template_name);
  TUNEFLEET_ASSIGN_OR_RETURN(bool row, s.Step());
  if (!row || s.IsNull(0)) return std::optional<double>();
  return std::optional<double>(s.Double(0));
}

absl::StatusOr<std::string> Store::TemplateSource(const std::string& name,
                                                  int version) {
  absl::MutexLock lock(&mu_);
  TUNEFLEET_ASSIGN_OR_RETURN(
      Statement s,
      db_.Prepare("SELECT source FROM templates WHERE name = ?1 AND "
                  "version = ?2 ORDER BY id DESC LIMIT 1"));
  s.Bind(1, name).Bind(2, int64_t{version});
  TUNEFLEET_ASSIGN_OR_RETURN(bool row, s.Step());
  if (!row) {
    return absl::NotFoundError(
        absl::StrCat("no stored source for template ", name, " v", version));
  }
  return s.Text(0);
}

absl::StatusOr<std::map<tunefleet::v1::TrialState, int64_t>> Store::TrialStates(
    int64_t job_id) {
  absl::MutexLock lock(&mu_);
  TUNEFLEET_ASSIGN_OR_RETURN(
      Statement s, db_.Prepare("SELECT state, COUNT(*) FROM trials WHERE "
                               "job_id = ?1 GROUP BY state"));
  s.Bind(1, job_id);
  std::map<tunefleet::v1::TrialState, int64_t> out;
  TUNEFLEET_RETURN_IF_ERROR(s.ForEachRow([&out](const Statement& row) {
    out[proto::ParseTrialState(row.Text(0))
            .value_or(tunefleet::v1::TRIAL_STATE_UNSPECIFIED)] = row.Int(1);
  }));
  return out;
}

}  // namespace tunefleet::store
