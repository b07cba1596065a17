// Store: trial rows, their leases and results.
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"
#include "base/time.h"
#include "base/version.h"
#include "contract/names.h"
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
    t.state = contract::ParseTrialState(row.Text(2))
                  .value_or(tunefleet::v1::TRIAL_STATE_UNSPECIFIED);
    if (!row.IsNull(3)) {
      tunefleet::v1::Measurement::Error_Parse(row.Text(3), &t.error);
    }
    t.time_ns = row.DoubleOr(4, 0);
    t.attempt = static_cast<int>(row.Int(5));
    out.push_back(t);
  }));
  return out;
}

namespace {

constexpr absl::string_view kInsertTrial =
    "INSERT INTO trials (job_id, config_index, config, state, created_ms) "
    "VALUES (?1, ?2, ?3, 'pending', ?4)";
constexpr absl::string_view kLeaseTrial =
    "UPDATE trials SET state = 'leased', agent = ?2, attempt = attempt + 1, "
    "leased_ms = ?3 WHERE id = ?1 AND state = 'pending'";
// A row the server never wrote a lease to (it keeps leases in memory) is
// pending already: then only its attempt count changes.
constexpr absl::string_view kRequeueTrial =
    "UPDATE trials SET state = 'pending', agent = NULL, "
    "attempt = MAX(attempt, ?2) WHERE id = ?1 AND state != 'done'";
// The lease that measured it (TrialLease) comes with the result; NULL and 0
// keep what a written lease left.
constexpr absl::string_view kCompleteTrial =
    "UPDATE trials SET state = 'done', error = ?2, "
    "error_message = ?3, times_ns = ?4, time_ns = ?5, "
    "gflops = ?6, number = ?7, compile_ms = ?8, "
    "max_rel_error = ?9, done_ms = ?10, agent = COALESCE(?11, agent), "
    "attempt = MAX(attempt, ?12), leased_ms = COALESCE(?13, leased_ms), "
    "driver_version = COALESCE(?14, driver_version), "
    "kernel_sha256 = COALESCE(?15, kernel_sha256), tunefleet_version = ?16 "
    "WHERE id = ?1 AND state != 'done'";

// Runs one write on `db` (inside the caller's transaction, if any);
// returns whether it changed the row.
absl::StatusOr<bool> ApplyWrite(Database& db, const TrialWrite& w) {
  switch (w.kind) {
    case TrialWrite::Kind::kLease:
      TUNEFLEET_RETURN_IF_ERROR(
          db.RunCached(kLeaseTrial, w.trial_id, w.agent, base::NowMs()));
      return db.Changes() == 1;
    case TrialWrite::Kind::kRequeue:
      TUNEFLEET_RETURN_IF_ERROR(
          db.RunCached(kRequeueTrial, w.trial_id, int64_t{w.lease.attempt}));
      return db.Changes() == 1;
    case TrialWrite::Kind::kComplete:
      break;
  }
  const Measurement& m = w.measurement;
  const std::string times = absl::StrCat(
      "[",
      absl::StrJoin(
          m.times_ns(), ",",
          [](std::string* out, double t) { absl::StrAppend(out, t); }),
      "]");
  TUNEFLEET_ASSIGN_OR_RETURN(Statement * s, db.Cached(kCompleteTrial));
  s->Bind(1, w.trial_id).Bind(2, Measurement::Error_Name(m.error()));
  s->Bind(3, m.error_message()).Bind(4, times);
  if (m.error() == Measurement::OK) {
    s->Bind(5, w.time_ns).Bind(6, w.gflops);
  } else {
    s->BindNull(5).BindNull(6);
  }
  s->Bind(7, int64_t{m.number()}).Bind(8, m.compile_ms());
  s->Bind(9, m.max_rel_error()).Bind(10, base::NowMs());
  const TrialLease& lease = w.lease;
  s->BindTextOrNull(11, lease.agent);
  s->Bind(12, int64_t{lease.attempt});
  s->BindPositiveOrNull(13, lease.leased_ms);
  s->BindTextOrNull(14, lease.driver_version);
  s->BindTextOrNull(15, lease.kernel_sha256);
  s->Bind(16, base::kVersion);
  absl::Status run = s->Run();
  s->Reset();
  TUNEFLEET_RETURN_IF_ERROR(run);
  return db.Changes() == 1;
}

}  // namespace

absl::StatusOr<std::vector<int64_t>> Store::InsertTrials(
    int64_t job_id, const std::vector<NewTrial>& trials) {
  absl::MutexLock lock(&mu_);
  Transaction txn(db_);
  TUNEFLEET_RETURN_IF_ERROR(txn.status());
  std::vector<int64_t> ids;
  ids.reserve(trials.size());
  const int64_t now = base::NowMs();
  for (const NewTrial& t : trials) {
    TUNEFLEET_RETURN_IF_ERROR(
        db_.RunCached(kInsertTrial, job_id,
                      static_cast<int64_t>(t.config_index), t.config, now));
    ids.push_back(db_.LastInsertId());
  }
  TUNEFLEET_RETURN_IF_ERROR(txn.Commit());
  return ids;
}

absl::Status Store::LeaseTrial(int64_t trial_id, const std::string& agent) {
  absl::MutexLock lock(&mu_);
  return db_.RunCached(kLeaseTrial, trial_id, agent, base::NowMs());
}

absl::Status Store::RequeueTrial(int64_t trial_id, int attempt) {
  absl::MutexLock lock(&mu_);
  return db_.RunCached(kRequeueTrial, trial_id, int64_t{attempt});
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
                                          double gflops,
                                          const TrialLease& lease) {
  TrialWrite w;
  w.kind = TrialWrite::Kind::kComplete;
  w.trial_id = trial_id;
  w.lease = lease;
  w.measurement = m;
  w.time_ns = time_ns;
  w.gflops = gflops;
  absl::MutexLock lock(&mu_);
  Transaction txn(db_);
  TUNEFLEET_RETURN_IF_ERROR(txn.status());
  TUNEFLEET_ASSIGN_OR_RETURN(const bool changed, ApplyWrite(db_, w));
  TUNEFLEET_RETURN_IF_ERROR(txn.Commit());
  return changed;
}

absl::StatusOr<std::vector<bool>> Store::WriteTrials(
    const std::vector<TrialWrite>& writes) {
  absl::MutexLock lock(&mu_);
  Transaction txn(db_);
  TUNEFLEET_RETURN_IF_ERROR(txn.status());
  std::vector<bool> changed;
  changed.reserve(writes.size());
  for (const TrialWrite& w : writes) {
    TUNEFLEET_ASSIGN_OR_RETURN(const bool c, ApplyWrite(db_, w));
    changed.push_back(c);
  }
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
    out[contract::ParseTrialState(row.Text(0))
            .value_or(tunefleet::v1::TRIAL_STATE_UNSPECIFIED)] = row.Int(1);
  }));
  return out;
}

}  // namespace tunefleet::store
