// Model jobs in the store: their rows, their task jobs and the trials the
// task scheduler granted each task (store.h).
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"
#include "base/time.h"
#include "contract/names.h"
#include "store/job_rows.h"
#include "store/store.h"

namespace tunefleet::store {

absl::StatusOr<int64_t> Store::NextJobId() {
  return FoundInt(
      db_.FirstInt("SELECT max(coalesce((SELECT max(id) FROM jobs), 0), "
                   "coalesce((SELECT max(id) FROM model_jobs), 0)) + 1"),
      "no next job id");
}

absl::StatusOr<int64_t> Store::CreateModelJob(const ModelJobParams& p,
                                              const std::string& request_json) {
  absl::MutexLock lock(&mu_);
  Transaction txn(db_);
  TUNEFLEET_RETURN_IF_ERROR(txn.status());
  TUNEFLEET_ASSIGN_OR_RETURN(const int64_t id, NextJobId());
  TUNEFLEET_ASSIGN_OR_RETURN(
      Statement s,
      db_.Prepare("INSERT INTO model_jobs (device_key, strategy, budget, "
                  "seed, priority, created_ms, deadline_ms, request_json, "
                  "state, id, model_name, task_scheduler) VALUES (?1, ?2, ?3, "
                  "?4, ?5, ?6, ?7, ?8, 'queued', ?9, ?10, ?11)"));
  BindSharedJobColumns(s, 1, p, request_json);  // ?1 to ?8
  s.Bind(9, id).Bind(10, p.model_name);
  s.Bind(11, contract::TaskSchedulerName(p.task_scheduler));
  TUNEFLEET_RETURN_IF_ERROR(s.Run());
  if (!p.onnx_model.empty()) {
    TUNEFLEET_ASSIGN_OR_RETURN(
        Statement m, db_.Prepare("INSERT INTO model_job_models (model_job_id, "
                                 "onnx, input_shapes) VALUES (?1, ?2, ?3)"));
    m.Bind(1, id).BindBlob(2, p.onnx_model);
    m.Bind(3, absl::StrJoin(p.input_shapes, "\n"));
    TUNEFLEET_RETURN_IF_ERROR(m.Run());
  }
  TUNEFLEET_RETURN_IF_ERROR(txn.Commit());
  return id;
}

absl::StatusOr<std::vector<ModelJob>> Store::SelectModelJobs(
    absl::string_view where, int64_t arg, int64_t limit) {
  constexpr absl::string_view kSelect =
      "SELECT id, model_name, task_scheduler, device_key, strategy, budget, "
      "seed, priority, state, message, request_json, created_ms, deadline_ms "
      "FROM model_jobs";
  TUNEFLEET_ASSIGN_OR_RETURN(
      Statement s,
      db_.Prepare(NewestFirstSql(kSelect, where, "id", limit), arg));
  return s.CollectRows([](const Statement& row) {
    ModelJob m;
    m.id = row.Int(0);
    m.model_name = row.Text(1);
    m.task_scheduler = contract::ParseTaskScheduler(row.Text(2))
                           .value_or(tunefleet::v1::TASK_SCHEDULER_UNSPECIFIED);
    ReadSharedJobColumns(row, 3, m);  // columns 3 to 12
    return m;
  });
}

absl::StatusOr<ModelJob> Store::GetModelJob(int64_t model_job_id) {
  absl::MutexLock lock(&mu_);
  TUNEFLEET_ASSIGN_OR_RETURN(std::vector<ModelJob> rows,
                             SelectModelJobs("id = ?1", model_job_id));
  if (rows.empty()) {
    return absl::NotFoundError(absl::StrCat("no model job ", model_job_id));
  }
  return std::move(rows.front());
}

absl::StatusOr<std::vector<ModelJob>> Store::ListModelJobs(int64_t limit,
                                                           int64_t before_id) {
  absl::MutexLock lock(&mu_);
  return SelectModelJobs("(?1 = 0 OR id < ?1)", before_id, limit);
}

absl::StatusOr<std::vector<ModelJob>> Store::UnfinishedModelJobs() {
  absl::MutexLock lock(&mu_);
  TUNEFLEET_ASSIGN_OR_RETURN(
      std::vector<ModelJob> rows,
      SelectModelJobs("state IN ('queued', 'running') AND ?1 = ?1", 0));
  std::reverse(rows.begin(), rows.end());  // oldest first
  return rows;
}

absl::StatusOr<std::vector<StoredJob>> Store::ModelTaskJobs(
    int64_t model_job_id) {
  absl::MutexLock lock(&mu_);
  TUNEFLEET_ASSIGN_OR_RETURN(std::vector<StoredJob> rows,
                             SelectJobs("j.model_job_id = ?1", model_job_id));
  std::sort(rows.begin(), rows.end(),
            [](const StoredJob& a, const StoredJob& b) {
              return a.task_index < b.task_index;
            });
  return rows;
}

absl::Status Store::SetModelJobState(int64_t model_job_id,
                                     tunefleet::v1::JobState state,
                                     const std::string& message) {
  const bool final = contract::IsFinalJobState(state);
  absl::MutexLock lock(&mu_);
  return db_.Run(
      "UPDATE model_jobs SET state = ?2, message = ?3, "
      "finished_ms = CASE WHEN ?4 THEN ?5 ELSE NULL END WHERE id = ?1",
      model_job_id, contract::JobStateName(state), message, int64_t{final},
      base::NowMs());
}

absl::Status Store::SetTaskGranted(int64_t job_id, int64_t granted) {
  absl::MutexLock lock(&mu_);
  return db_.Run("UPDATE jobs SET granted = ?2 WHERE id = ?1", job_id, granted);
}

}  // namespace tunefleet::store
