// TrialLedger: the one owner of a trial's life in the server once it is
// queued: results received, committed to the store, acknowledged to the
// agent, leases requeued or lost, trials given up. Jobs see a trial only
// through it, and only as the store holds it (TrialJobs::OnStored).
//
// States of one trial (QUEUED and LEASED are held by the LeaseScheduler,
// COMMITTING by the ledger; the others are gone from memory, in the store):
//
//       Enqueue, AddAgent, a freed slot (LeaseScheduler::Assign)
//   +--------+ -------------------------------------> +--------+ --+ (f)
//   | QUEUED |                                        | LEASED |   |
//   +--------+ <-- (b) lost: ExpireLeases, AgentGone  +--------+ <-+
//     |    ^       (attempt < kMaxAttempts)                |
//     |    |                                               | (a) Receive
//     |    +------ (e) commit failed: RequeueLease ---+    v
//     |                                               +------------+
//     +---- (a) Receive: a late result for a -------> | COMMITTING |
//           requeued trial (its queued copy)          +------------+
//                                                            | (c) committed
//                                                            v
//   LEASED -- (d) lost at attempt kMaxAttempts: ----> +-----------+ OnStored
//             a DEVICE_LOST row committed, no ack     |  STORED   | -----> job
//                                                     | (& ACKED) |
//                                                     +-----------+
//
// A lease lost while its result is COMMITTING is requeued as in (b); the
// commit's (c) then ends the queued copy (or (e) the new lease).
//
// The transitions (`lost` counted in ServerMetrics::LeasesLost here and
// nowhere else, once per trial):
// (a) Receive(), an agent's result for a trial leased (by any agent) or
//     queued after a lost lease. Checked once, here, where the result
//     enters (validation::CheckedMeasurement: a malformed one is stored as
//     RUNTIME_ERROR); written: the trial row done with the lease that
//     measured it (Store::CompleteTrial, or the TrialWriter's group commit).
//     A reference run (trial id < 0, no row) is stored by its job
//     (TrialJobs::OnReference) and acknowledged at once; a result for a job
//     that is not live is acknowledged without a write. Errors: NOT_FOUND
//     for a trial neither leased nor queued (unknown, acknowledged already,
//     cancelled, given up): nothing written, nothing acknowledged;
//     ALREADY_EXISTS for a repeat of a result still committing: not written
//     again, acknowledged with the first.
// (c) the commit's callback with OK: the lease ends (LeaseScheduler::
//     EndLease, which refills the agent) -- the acknowledgement, only after
//     the row is durable -- and then the job gets what was stored
//     (TrialJobs::OnStored; `fresh` false when the row was done already).
// (e) the commit's callback with an error (logged): not acknowledged; the
//     lease goes back to the front of the queue as if lost
//     (LeaseScheduler::RequeueLease; a lost lease, (b)/(d)), so another
//     agent measures it again.
// (b) a lost lease: ExpireLeases() (its deadline passed on the clock),
//     AgentGone() (the agent's stream ended, or it fell silent and was
//     disconnected). Written: the row back to pending with its attempts
//     (LeaseScheduler, best effort); the job counts it
//     (TrialJobs::OnRequeued). No error.
// (d) a lease lost for the kMaxAttempts-th time: the trial is given up:
//     written: its row done as DEVICE_LOST (as (a) writes a result); the
//     job gets the stored row (OnStored). A failed write is logged only.
// (f) SOURCE_UNKNOWN: not a result; the lease's agent is sent the request
//     again with its sources in full (LeaseScheduler::ResendWithSources),
//     no write. FAILED_PRECONDITION when the sender does not hold the
//     lease (a stale answer).
//
// Thread-safe. `leases`, `jobs`, `store`, `writer` and `metrics` must
// outlive the ledger; a writer's callbacks reach the ledger, so the writer
// is stopped (TrialWriter::Stop) before the ledger goes.
#ifndef TUNEFLEET_SERVER_TRIAL_LEDGER_H_
#define TUNEFLEET_SERVER_TRIAL_LEDGER_H_

#include <cstdint>
#include <optional>
#include <set>
#include <string>

#include "absl/functional/any_invocable.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "base/time.h"
#include "metrics/server_metrics.h"
#include "server/lease_scheduler.h"
#include "store/store.h"
#include "store/trial_writer.h"
#include "tunefleet/v1/tuning.pb.h"

namespace tunefleet::server {

// A trial row as the ledger writes it: computed by the trial's job (the
// template's FLOP count).
struct ResultRow {
  tunefleet::v1::Measurement measurement;
  double time_ns = 0;  // median per-round time, ns; 0 unless OK
  double gflops = 0;   // GFLOP/s at time_ns; 0 unless OK
};

// A result the store committed, as its job receives it.
struct StoredResult {
  int64_t job_id = 0;
  int64_t trial_id = 0;
  tunefleet::v1::Measurement::Error error =
      tunefleet::v1::Measurement::ERROR_UNSPECIFIED;
  double time_ns = 0;  // as stored: the median per-round time when OK, ns
  // False when the row was done already (a repeat, kept as it was).
  bool fresh = false;
  // The result's Measurement.kernel_work_group_limit (work-items; 0: not
  // reported): what the job learns its kernels' limit from
  // (server/work_group_limit.h).
  uint64_t kernel_work_group_limit = 0;
};

// What the ledger needs of the jobs (JobManager implements it). Called
// without the ledger's lock held, from agent streams, the reaper and the
// writer's thread.
class TrialJobs {
 public:
  virtual ~TrialJobs() = default;
  // The row to write for result `m` (already checked) of job `job_id`'s
  // trial; nullopt when the job is not live (the result is then
  // acknowledged and not written, as it always was for an ended job).
  virtual std::optional<ResultRow> RowFor(
      int64_t job_id, int64_t trial_id,
      const tunefleet::v1::Measurement& m) = 0;
  // A job's reference run (trial_id < 0; no trial row): its job stores the
  // reference time itself (Store::SetJobReference, best effort).
  virtual void OnReference(int64_t job_id, int64_t trial_id,
                           const tunefleet::v1::Measurement& m) = 0;
  // A result (or a given-up trial's DEVICE_LOST) is in the store.
  virtual void OnStored(const StoredResult& result) = 0;
  // A lease of the job's was lost and the trial queued again.
  virtual void OnRequeued(int64_t job_id, int64_t trial_id) = 0;
};

class TrialLedger {
 public:
  // Where a trial is in its life now (the diagram above).
  enum class State {
    kNone,        // not in memory: never queued, stored, cancelled, given up
    kQueued,      // waiting for an agent (new, or after a lost lease)
    kLeased,      // held by an agent
    kCommitting,  // its result is being written; not acknowledged yet
  };
  // Called once the store answered a Commit(): OK, or the write's error.
  using Committed = absl::AnyInvocable<void(absl::Status)>;

  // With a `writer`, rows are written by its group commit (callbacks on
  // its thread); without, each in its own transaction on the caller's
  // thread. `metrics` may be null.
  TrialLedger(LeaseScheduler* leases, TrialJobs* jobs, store::Store* store,
              store::TrialWriter* writer = nullptr,
              metrics::ServerMetrics* metrics = nullptr)
      : leases_(leases),
        jobs_(jobs),
        store_(store),
        writer_(writer),
        metrics_(metrics) {}
  TrialLedger(const TrialLedger&) = delete;
  TrialLedger& operator=(const TrialLedger&) = delete;

  // The clock lease deadlines are read from (the scheduler's).
  const base::Clock& clock() const { return leases_->clock(); }

  // (a)/(f): an agent's result. `agent_id` (AgentSession::id()) and
  // `driver_version` (the driver the agent reports, stored with the
  // result) name the sender. Errors as (a) and (f) above.
  absl::Status Receive(const tunefleet::v1::Measurement& m,
                       const std::string& agent_id,
                       const std::string& driver_version);
  // (b)/(d): the agent's stream ended (or it was dropped as silent): its
  // session is closed and its leases lost. Returns them.
  LostLeases AgentGone(const std::string& agent_id);
  // (b)/(d): the leases whose deadline the clock has passed are lost.
  // Returns them.
  LostLeases ExpireLeases();

  // (a)'s write by itself: checks `m`, writes it as job `job_id`'s result
  // for `trial_id` with `lease`, then runs `done` (before the job sees the
  // stored result). For a trial the caller knows to be its job's (Receive,
  // a given-up trial; tests storing a result with no lease). `done` may be
  // null.
  void Commit(int64_t job_id, int64_t trial_id,
              const tunefleet::v1::Measurement& m, store::TrialLease lease,
              Committed done);

  State StateOf(int64_t trial_id);

 private:
  // (b)/(d) for leases the scheduler took back: metrics, the jobs, the
  // given-up trials' rows.
  void Lost(const LostLeases& lost);
  // The commit of a result Receive() took ended.
  void Acknowledge(int64_t trial_id, const absl::Status& stored);

  LeaseScheduler* const leases_;
  TrialJobs* const jobs_;
  store::Store* const store_;
  store::TrialWriter* const writer_;       // may be null
  metrics::ServerMetrics* const metrics_;  // may be null
  absl::Mutex mu_;
  // Trials whose result Receive() is committing (not acknowledged yet).
  std::set<int64_t> committing_ ABSL_GUARDED_BY(mu_);
};

}  // namespace tunefleet::server

#endif  // TUNEFLEET_SERVER_TRIAL_LEDGER_H_
