#include "store/store.h"

#include <algorithm>
#include <limits>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "base/time.h"
#include "contract/names.h"
#include "google/protobuf/util/json_util.h"
#include "store/job_rows.h"
#include "store/schema.h"

namespace tunefleet::store {

absl::StatusOr<std::unique_ptr<Store>> Store::Open(const std::string& path) {
  // The lock first: from the moment the database is open, others see an
  // opener.
  TUNEFLEET_ASSIGN_OR_RETURN(OpenersLock openers, OpenersLock::Acquire(path));
  TUNEFLEET_ASSIGN_OR_RETURN(Database db, Database::Open(path));
  TUNEFLEET_RETURN_IF_ERROR(
      db.Exec("PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; "
              "PRAGMA foreign_keys = ON;"));
  auto store = std::make_unique<Store>(base::PassKey<Store>(), std::move(db));
  absl::MutexLock lock(&store->mu_);
  store->openers_ = std::move(openers);
  TUNEFLEET_RETURN_IF_ERROR(MigrateSchema(store->db_));
  return store;
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
      db_.Prepare("SELECT info_json FROM devices WHERE device_key = ?1", key));
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
  TUNEFLEET_RETURN_IF_ERROR(
      db_.Run("INSERT OR IGNORE INTO workloads (op, shape, dtype, "
              "canonical, hash) VALUES (?1, ?2, ?3, ?4, ?5)",
              w.op(), w.ShapeString(), templates::DtypeName(w.dtype()),
              w.Canonical(), w.Hash()));
  return FoundInt(db_.FirstInt("SELECT id FROM workloads WHERE canonical = ?1",
                               w.Canonical()),
                  "workload row vanished");
}

absl::StatusOr<int64_t> Store::UpsertTemplate(
    const templates::KernelTemplate& t) {
  const std::string hash = t.SourceHash();
  TUNEFLEET_RETURN_IF_ERROR(
      db_.Run("INSERT OR IGNORE INTO templates (name, version, op, "
              "source_hash, source) VALUES (?1, ?2, ?3, ?4, ?5)",
              t.name(), int64_t{t.version()}, t.op(), hash, t.source()));
  return FoundInt(
      db_.FirstInt("SELECT id FROM templates WHERE name = ?1 AND version = ?2 "
                   "AND source_hash = ?3",
                   t.name(), int64_t{t.version()}, hash),
      "template row vanished");
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
      db_.Prepare("INSERT INTO jobs (device_key, strategy, budget, seed, "
                  "priority, created_ms, deadline_ms, request_json, state, "
                  "workload_id, template_id, id, model_job_id, task_index, "
                  "space_size) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, "
                  "'queued', ?9, ?10, ?11, ?12, ?13, ?14)"));
  BindSharedJobColumns(s, 1, spec, request_json);  // ?1 to ?8
  s.Bind(9, workload_id).Bind(10, template_id);
  TUNEFLEET_ASSIGN_OR_RETURN(const int64_t id, NextJobId());
  s.Bind(11, id);
  if (spec.model_job_id > 0) {
    s.Bind(12, spec.model_job_id).Bind(13, int64_t{spec.task_index});
  } else {
    s.BindNull(12).BindNull(13);
  }
  s.Bind(14, static_cast<int64_t>(spec.space_size));
  TUNEFLEET_RETURN_IF_ERROR(s.Run());
  TUNEFLEET_RETURN_IF_ERROR(txn.Commit());
  return id;
}

absl::StatusOr<std::vector<StoredJob>> Store::SelectJobs(
    absl::string_view where, int64_t arg, int64_t limit) {
  constexpr absl::string_view kSelect =
      "SELECT j.id, w.canonical, tp.name, tp.version, "
      "j.device_key, j.strategy, j.budget, j.seed, j.priority, j.state, "
      "j.message, j.request_json, j.created_ms, j.deadline_ms, "
      "j.reference_ns, j.model_job_id, j.task_index, j.granted, "
      "j.space_size FROM jobs j "
      "JOIN workloads w ON j.workload_id = w.id "
      "JOIN templates tp ON j.template_id = tp.id";
  TUNEFLEET_ASSIGN_OR_RETURN(
      Statement s,
      db_.Prepare(NewestFirstSql(kSelect, where, "j.id", limit), arg));
  return s.CollectRows([](const Statement& row) {
    StoredJob j;
    j.id = row.Int(0);
    j.workload = row.Text(1);
    j.template_name = row.Text(2);
    j.template_version = static_cast<int>(row.Int(3));
    ReadSharedJobColumns(row, 4, j);  // columns 4 to 13
    j.reference_ns = row.Double(14);
    j.model_job_id = row.IntOr(15, 0);
    j.task_index = static_cast<int>(row.IntOr(16, -1));
    j.granted = row.Int(17);
    j.space_size = static_cast<uint64_t>(row.Int(18));
    return j;
  });
}

absl::StatusOr<StoredJob> Store::GetJob(int64_t job_id) {
  absl::MutexLock lock(&mu_);
  TUNEFLEET_ASSIGN_OR_RETURN(std::vector<StoredJob> rows,
                             SelectJobs("j.id = ?1", job_id));
  if (rows.empty()) return absl::NotFoundError(absl::StrCat("no job ", job_id));
  return std::move(rows.front());
}

absl::StatusOr<std::vector<StoredJob>> Store::ListJobs(int64_t limit,
                                                       int64_t before_id) {
  absl::MutexLock lock(&mu_);
  // A seek on the primary key, newest first, stopping at `limit`: "+" keeps
  // SQLite from choosing jobs_by_model_job (and sorting every job) for the
  // model_job_id test.
  return SelectJobs(
      "j.id < ?1 AND +j.model_job_id IS NULL",
      before_id > 0 ? before_id : std::numeric_limits<int64_t>::max(), limit);
}

absl::StatusOr<std::vector<StoredJob>> Store::UnfinishedJobs() {
  absl::MutexLock lock(&mu_);
  TUNEFLEET_ASSIGN_OR_RETURN(
      std::vector<StoredJob> rows,
      SelectJobs("j.state IN ('queued', 'running') AND ?1 = ?1 AND "
                 "j.model_job_id IS NULL",
                 0));
  std::reverse(rows.begin(), rows.end());  // oldest first
  return rows;
}

absl::Status Store::SetJobReference(int64_t job_id, double reference_ns) {
  absl::MutexLock lock(&mu_);
  return db_.Run("UPDATE jobs SET reference_ns = ?2 WHERE id = ?1", job_id,
                 reference_ns);
}

absl::Status Store::SetJobState(int64_t job_id, tunefleet::v1::JobState state,
                                const std::string& message) {
  absl::MutexLock lock(&mu_);
  Transaction txn(db_);
  TUNEFLEET_RETURN_IF_ERROR(txn.status());
  TUNEFLEET_RETURN_IF_ERROR(SetJobStateLocked(job_id, state, message));
  return txn.Commit();
}

void Store::ReleaseMemory() {
  absl::MutexLock lock(&mu_);
  sqlite3_db_release_memory(db_.get());
}

absl::Status Store::SetJobStateLocked(int64_t job_id,
                                      tunefleet::v1::JobState state,
                                      const std::string& message) {
  const bool final = contract::IsFinalJobState(state);
  TUNEFLEET_RETURN_IF_ERROR(
      db_.Run("UPDATE jobs SET state = ?2, message = ?3, "
              "finished_ms = CASE WHEN ?4 THEN ?5 ELSE NULL END WHERE id = ?1",
              job_id, contract::JobStateName(state), message, int64_t{final},
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
  return absl::OkStatus();
}

}  // namespace tunefleet::store
