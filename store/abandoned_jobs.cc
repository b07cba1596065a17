// Store::InterruptAbandonedJobs: jobs left unfinished by a process that
// died (store/store.h).
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "base/status_macros.h"
#include "base/time.h"
#include "contract/names.h"
#include "store/store.h"

namespace tunefleet::store {
namespace {

// A trial of job `j` leased to or measured by an agent named ?1...
constexpr char kTrialOfPrefixedAgent[] =
    "EXISTS (SELECT 1 FROM trials t WHERE t.job_id = j.id AND "
    "substr(t.agent, 1, length(?1)) = ?1)";

}  // namespace

absl::StatusOr<int> Store::InterruptAbandonedJobs(
    absl::string_view agent_prefix, const std::string& message) {
  if (agent_prefix.empty()) {
    return absl::InvalidArgumentError("an agent name prefix is required");
  }
  absl::MutexLock lock(&mu_);
  // Another opener may be the process running these jobs.
  if (!openers_.TrySole()) return 0;
  auto interrupt =
      [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) -> absl::StatusOr<int> {
    const std::string prefix(agent_prefix);
    std::vector<int64_t> jobs, model_jobs;
    TUNEFLEET_ASSIGN_OR_RETURN(
        Statement own,
        db_.Prepare(absl::StrCat("SELECT j.id FROM jobs j WHERE j.state IN "
                                 "('queued', 'running') AND "
                                 "j.model_job_id IS NULL AND ",
                                 kTrialOfPrefixedAgent),
                    prefix));
    TUNEFLEET_RETURN_IF_ERROR(own.ForEachRow(
        [&jobs](const Statement& row) { jobs.push_back(row.Int(0)); }));
    TUNEFLEET_ASSIGN_OR_RETURN(
        Statement models,
        db_.Prepare(absl::StrCat("SELECT m.id FROM model_jobs m WHERE m.state "
                                 "IN ('queued', 'running') AND EXISTS "
                                 "(SELECT 1 FROM jobs j WHERE j.model_job_id "
                                 "= m.id AND ",
                                 kTrialOfPrefixedAgent, ")"),
                    prefix));
    TUNEFLEET_RETURN_IF_ERROR(
        models.ForEachRow([&model_jobs](const Statement& row) {
          model_jobs.push_back(row.Int(0));
        }));
    Transaction txn(db_);
    TUNEFLEET_RETURN_IF_ERROR(txn.status());
    for (const int64_t model_job_id : model_jobs) {
      TUNEFLEET_ASSIGN_OR_RETURN(
          Statement tasks,
          db_.Prepare("SELECT id FROM jobs WHERE model_job_id = ?1 AND state "
                      "IN ('queued', 'running')",
                      model_job_id));
      TUNEFLEET_RETURN_IF_ERROR(tasks.ForEachRow(
          [&jobs](const Statement& row) { jobs.push_back(row.Int(0)); }));
      // As SetModelJobState.
      TUNEFLEET_RETURN_IF_ERROR(db_.Run(
          "UPDATE model_jobs SET state = ?2, message = ?3, finished_ms = ?4 "
          "WHERE id = ?1",
          model_job_id, contract::JobStateName(tunefleet::v1::JOB_STATE_FAILED),
          message, base::NowMs()));
    }
    for (const int64_t job_id : jobs) {
      TUNEFLEET_RETURN_IF_ERROR(
          SetJobStateLocked(job_id, tunefleet::v1::JOB_STATE_FAILED, message));
    }
    TUNEFLEET_RETURN_IF_ERROR(txn.Commit());
    return static_cast<int>(jobs.size() + model_jobs.size());
  };
  absl::StatusOr<int> marked = interrupt();
  openers_.EndSole();
  return marked;
}

}  // namespace tunefleet::store
