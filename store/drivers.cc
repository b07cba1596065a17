// A device key's driver revisions and the re-validation of its records on a
// new driver (schema v9: device_drivers, revalidations,
// revalidation_outcomes; docs/DRIVER_DRIFT.md).
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "base/status_macros.h"
#include "base/time.h"
#include "store/store.h"

namespace tunefleet::store {

absl::StatusOr<int> Store::NoteDriver(const std::string& key,
                                      const std::string& driver, bool* added) {
  *added = false;
  absl::MutexLock lock(&mu_);
  Transaction txn(db_);
  TUNEFLEET_RETURN_IF_ERROR(txn.status());
  TUNEFLEET_ASSIGN_OR_RETURN(
      std::optional<int64_t> known,
      db_.FirstInt("SELECT revision FROM device_drivers WHERE "
                   "device_key = ?1 AND driver_version = ?2",
                   key, driver));
  if (known) return static_cast<int>(*known);
  TUNEFLEET_ASSIGN_OR_RETURN(
      std::optional<int64_t> next,
      db_.FirstInt("SELECT COALESCE(MAX(revision), 0) + 1 FROM "
                   "device_drivers WHERE device_key = ?1",
                   key));
  const int revision = static_cast<int>(next.value_or(1));
  TUNEFLEET_RETURN_IF_ERROR(
      db_.Run("INSERT INTO device_drivers (device_key, driver_version, "
              "revision, first_seen_ms) VALUES (?1, ?2, ?3, ?4)",
              key, driver, int64_t{revision}, base::NowMs()));
  TUNEFLEET_RETURN_IF_ERROR(txn.Commit());
  *added = true;
  return revision;
}

absl::StatusOr<std::vector<tunefleet::v1::DriverRevision>>
Store::DriverRevisions(const std::string& key) {
  absl::MutexLock lock(&mu_);
  std::vector<tunefleet::v1::DriverRevision> out;
  std::map<int64_t, size_t> at;  // revision -> index in `out`
  {
    TUNEFLEET_ASSIGN_OR_RETURN(
        Statement q,
        db_.Prepare("SELECT revision, driver_version, first_seen_ms FROM "
                    "device_drivers WHERE device_key = ?1 ORDER BY revision",
                    key));
    TUNEFLEET_RETURN_IF_ERROR(q.ForEachRow([&](const Statement& row) {
      at[row.Int(0)] = out.size();
      tunefleet::v1::DriverRevision& r = out.emplace_back();
      r.set_revision(static_cast<uint32_t>(row.Int(0)));
      r.set_driver_version(row.Text(1));
      r.set_first_seen_unix_ms(row.Int(2));
    }));
  }
  {
    TUNEFLEET_ASSIGN_OR_RETURN(
        Statement q, db_.Prepare("SELECT revision, outcome, COUNT(*) FROM "
                                 "revalidation_outcomes WHERE device_key = ?1 "
                                 "GROUP BY revision, outcome",
                                 key));
    TUNEFLEET_RETURN_IF_ERROR(q.ForEachRow([&](const Statement& row) {
      auto it = at.find(row.Int(0));
      if (it == at.end()) return;
      tunefleet::v1::DriverRevision& r = out[it->second];
      const std::string outcome = row.Text(1);
      const auto n = static_cast<uint32_t>(row.Int(2));
      if (outcome == "same") r.set_revalidated_same(n);
      if (outcome == "slower") r.set_revalidated_slower(n);
      if (outcome == "wrong") r.set_revalidated_wrong(n);
      if (outcome == "failed") r.set_revalidated_failed(n);
      if (outcome == "pending") r.set_revalidation_pending(n);
    }));
  }
  {
    TUNEFLEET_ASSIGN_OR_RETURN(
        Statement q,
        db_.Prepare("SELECT DISTINCT revision, job_id FROM revalidations "
                    "WHERE device_key = ?1 ORDER BY revision, job_id",
                    key));
    TUNEFLEET_RETURN_IF_ERROR(q.ForEachRow([&](const Statement& row) {
      auto it = at.find(row.Int(0));
      if (it != at.end()) out[it->second].add_revalidation_job_ids(row.Int(1));
    }));
  }
  return out;
}

absl::StatusOr<std::vector<RevalidationTask>> Store::RevalidationTasks(
    const std::string& key, int per_task) {
  absl::MutexLock lock(&mu_);
  // Per task and config, its fastest OK trial (SQLite takes the bare
  // columns of a MIN() aggregate from the row holding the minimum).
  TUNEFLEET_ASSIGN_OR_RETURN(
      Statement q,
      db_.Prepare(
          "SELECT w.canonical, tp.name, t.config, MIN(t.time_ns), t.id, "
          "t.config_index, j.request_json FROM trials t "
          "JOIN jobs j ON j.id = t.job_id "
          "JOIN workloads w ON w.id = j.workload_id "
          "JOIN templates tp ON tp.id = j.template_id "
          "WHERE j.device_key = ?1 AND t.state = 'done' AND t.error = 'OK' "
          "AND j.id NOT IN (SELECT job_id FROM revalidations) "
          "GROUP BY w.canonical, tp.name, t.config "
          "ORDER BY w.canonical, tp.name, MIN(t.time_ns), t.id",
          key));
  std::vector<RevalidationTask> out;
  TUNEFLEET_RETURN_IF_ERROR(q.ForEachRow([&](const Statement& row) {
    const std::string workload = row.Text(0), name = row.Text(1);
    if (out.empty() || out.back().workload_key != workload ||
        out.back().template_name != name) {
      out.push_back(RevalidationTask{workload, name, row.Text(6), {}});
    }
    if (static_cast<int>(out.back().targets.size()) >= per_task) return;
    out.back().targets.push_back(
        RevalidationTarget{row.Int(4), static_cast<uint64_t>(row.Int(5)),
                           row.Text(2), row.Double(3)});
  }));
  std::erase_if(out, [](const RevalidationTask& t) {
    return t.request_json.empty() || t.targets.empty();
  });
  return out;
}

absl::Status Store::AddRevalidations(
    const std::string& key, int revision, int64_t job_id,
    const std::vector<RevalidationTarget>& targets) {
  absl::MutexLock lock(&mu_);
  Transaction txn(db_);
  TUNEFLEET_RETURN_IF_ERROR(txn.status());
  for (const RevalidationTarget& t : targets) {
    TUNEFLEET_RETURN_IF_ERROR(db_.Run(
        "INSERT OR IGNORE INTO revalidations (device_key, revision, job_id, "
        "source_trial_id, config_index, source_time_ns) "
        "VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
        key, int64_t{revision}, job_id, t.source_trial_id,
        static_cast<int64_t>(t.config_index), t.time_ns));
  }
  return txn.Commit();
}

absl::StatusOr<std::optional<Store::JobRevalidation>> Store::RevalidationOfJob(
    int64_t job_id) {
  absl::MutexLock lock(&mu_);
  TUNEFLEET_ASSIGN_OR_RETURN(
      Statement q,
      db_.Prepare(
          "SELECT d.driver_version, r.config_index FROM revalidations r "
          "JOIN device_drivers d ON d.device_key = r.device_key "
          "AND d.revision = r.revision WHERE r.job_id = ?1 "
          "ORDER BY r.config_index",
          job_id));
  std::optional<JobRevalidation> out;
  TUNEFLEET_RETURN_IF_ERROR(q.ForEachRow([&](const Statement& row) {
    if (!out) out.emplace(JobRevalidation{row.Text(0), {}});
    out->config_indices.push_back(static_cast<uint64_t>(row.Int(1)));
  }));
  return out;
}

}  // namespace tunefleet::store
