// Store: trial rows, their leases and results.
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"
#include "base/time.h"
#include "proto/names.h"
#include "store/store.h"

namespace tunefleet::store {

using tunefleet::v1::Measurement;

absl::StatusOr<std::vector<Trial>> Store::JobTrials(int64_t job_id) {
  absl::MutexLock lock(&mu_);
  TUNEFLEET_ASSIGN_OR_RETURN(
      Statement s,
      db_.Prepare("SELECT id, config_index, state, error, time_ns, attempt "
                  "FROM trials WHERE job_id = ?1 ORDER BY id",
                  job_id));
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
    out.push_back(t);
  }));
  return out;
}

absl::StatusOr<std::vector<int64_t>> Store::InsertTrials(
    int64_t job_id, const std::vector<NewTrial>& trials) {
  absl::MutexLock lock(&mu_);
  Transaction txn(db_);
  TUNEFLEET_RETURN_IF_ERROR(txn.status());
  std::vector<int64_t> ids;
  const int64_t now = base::NowMs();
  for (const NewTrial& t : trials) {
    TUNEFLEET_RETURN_IF_ERROR(
        db_.Run("INSERT INTO trials (job_id, config_index, config, state, "
                "created_ms) VALUES (?1, ?2, ?3, 'pending', ?4)",
                job_id, static_cast<int64_t>(t.config_index), t.config, now));
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

absl::StatusOr<std::map<tunefleet::v1::TrialState, int64_t>> Store::TrialStates(
    int64_t job_id) {
  absl::MutexLock lock(&mu_);
  TUNEFLEET_ASSIGN_OR_RETURN(
      Statement s, db_.Prepare("SELECT state, COUNT(*) FROM trials WHERE "
                               "job_id = ?1 GROUP BY state",
                               job_id));
  std::map<tunefleet::v1::TrialState, int64_t> out;
  TUNEFLEET_RETURN_IF_ERROR(s.ForEachRow([&out](const Statement& row) {
    out[proto::ParseTrialState(row.Text(0))
            .value_or(tunefleet::v1::TRIAL_STATE_UNSPECIFIED)] = row.Int(1);
  }));
  return out;
}

}  // namespace tunefleet::store
