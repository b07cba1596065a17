#include "server/trial_ledger.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "logging/log.h"
#include "validation/validation.h"

namespace tunefleet::server {

using tunefleet::v1::Measurement;

absl::Status TrialLedger::Receive(const Measurement& m,
                                  const std::string& agent_id,
                                  const std::string& driver_version) {
  const int64_t trial_id = m.trial_id();
  if (m.error() == Measurement::SOURCE_UNKNOWN) {
    // (f) Not a measurement: the agent lacks a source sent earlier by hash.
    if (!leases_->ResendWithSources(trial_id, agent_id)) {
      return absl::FailedPreconditionError(
          absl::StrCat("SOURCE_UNKNOWN for trial ", trial_id, " from ",
                       agent_id, ", which does not hold its lease"));
    }
    return absl::OkStatus();
  }
  std::optional<ResultOf> of = leases_->ResultJob(trial_id);
  if (!of) {
    return absl::NotFoundError(
        absl::StrCat("trial ", trial_id,
                     " is neither leased nor queued (a stale or "
                     "repeated result): dropped"));
  }
  {
    absl::MutexLock lock(&mu_);
    if (!committing_.insert(trial_id).second) {
      return absl::AlreadyExistsError(
          absl::StrCat("a result for trial ", trial_id,
                       " is being stored: this repeat is not written again"));
    }
  }
  of->lease.driver_version = driver_version;
  Commit(
      of->job_id, trial_id, m, std::move(of->lease),
      [this, trial_id](absl::Status stored) { Acknowledge(trial_id, stored); });
  return absl::OkStatus();
}

void TrialLedger::Acknowledge(int64_t trial_id, const absl::Status& stored) {
  {
    absl::MutexLock lock(&mu_);
    committing_.erase(trial_id);
  }
  if (stored.ok()) {
    // (c) Durable: the lease ends and its agent is refilled.
    leases_->EndLease(trial_id);
    return;
  }
  // (e) Not stored: measured again by another lease.
  Lost(leases_->RequeueLease(trial_id));
}

void TrialLedger::Commit(int64_t job_id, int64_t trial_id, const Measurement& m,
                         store::TrialLease lease, Committed done) {
  auto finish = [&done](absl::Status s) {
    if (done) done(std::move(s));
  };
  // The one check of an agent's result: a malformed one (NaN or negative
  // times, an OK without a median time, an unknown error code) is recorded
  // as RUNTIME_ERROR.
  Measurement checked = validation::CheckedMeasurement(m);
  if (trial_id < 0) {
    // A reference run: no trial row; its job keeps the time.
    jobs_->OnReference(job_id, trial_id, checked);
    finish(absl::OkStatus());
    return;
  }
  std::optional<ResultRow> row = jobs_->RowFor(job_id, trial_id, checked);
  if (!row) {
    finish(absl::OkStatus());  // its job ended: nothing takes it
    return;
  }
  const Measurement::Error error = row->measurement.error();
  const double time_ns = row->time_ns;
  const uint64_t kernel_limit = row->measurement.kernel_work_group_limit();
  auto committed = [this, job_id, trial_id, error, time_ns, kernel_limit,
                    done =
                        std::move(done)](absl::StatusOr<bool> fresh) mutable {
    // The acknowledgement (the lease ended) comes before the job counts
    // the result, so a job seen done has no trial still in flight.
    if (done) done(fresh.status());
    if (!fresh.ok()) {
      logging::Error("[server] job {}: storing trial {}: {}", job_id, trial_id,
                     std::string(fresh.status().message()));
      return;
    }
    jobs_->OnStored(StoredResult{job_id, trial_id, error,
                                 error == Measurement::OK ? time_ns : 0.0,
                                 *fresh, kernel_limit});
  };
  if (writer_ != nullptr) {
    writer_->Complete(trial_id, std::move(row->measurement), row->time_ns,
                      row->gflops, std::move(committed), std::move(lease));
    return;
  }
  committed(store_->CompleteTrial(trial_id, row->measurement, row->time_ns,
                                  row->gflops, lease));
}

LostLeases TrialLedger::AgentGone(const std::string& agent_id) {
  LostLeases lost = leases_->RemoveAgent(agent_id);
  Lost(lost);
  return lost;
}

LostLeases TrialLedger::ExpireLeases() {
  LostLeases lost = leases_->ExpireLeases();
  Lost(lost);
  return lost;
}

void TrialLedger::Lost(const LostLeases& lost) {
  if (metrics_ != nullptr) {
    metrics_->LeasesLost(static_cast<int64_t>(lost.requeued.size()),
                         static_cast<int64_t>(lost.abandoned.size()));
  }
  for (const QueuedTrial& t : lost.requeued) {
    jobs_->OnRequeued(t.job_id, t.trial_id);
  }
  for (const QueuedTrial& t : lost.abandoned) {
    // (d) Given up: stored as DEVICE_LOST; no agent to acknowledge.
    Measurement m;
    m.set_error(Measurement::DEVICE_LOST);
    m.set_error_message(
        absl::StrCat("the agents measuring this trial were lost ", t.attempt,
                     " times; given up"));
    Commit(t.job_id, t.trial_id, m,
           store::TrialLease{t.agent, t.attempt, t.leased_ms}, nullptr);
  }
}

TrialLedger::State TrialLedger::StateOf(int64_t trial_id) {
  {
    absl::MutexLock lock(&mu_);
    if (committing_.count(trial_id) > 0) return State::kCommitting;
  }
  switch (leases_->Where(trial_id)) {
    case LeaseScheduler::Holding::kLeased:
      return State::kLeased;
    case LeaseScheduler::Holding::kQueued:
      return State::kQueued;
    case LeaseScheduler::Holding::kNone:
      break;
  }
  return State::kNone;
}

}  // namespace tunefleet::server
