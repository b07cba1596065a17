// Hands queued trials to the connected agents of their device key, keeping
// every agent busy up to its capacity (refilled RefillBatch() requests at a
// time), highest job priority first. Each handed-out trial is a lease held
// by one agent until a deadline; when the agent goes away, falls silent, or
// the deadline passes, the lease returns to the front of the queue for
// another agent of the key. A trial whose lease was lost kMaxAttempts
// times is given up.
#ifndef TUNEFLEET_SERVER_LEASE_SCHEDULER_H_
#define TUNEFLEET_SERVER_LEASE_SCHEDULER_H_

#include <algorithm>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "base/time.h"
#include "server/agent_session.h"
#include "server/trial_queue.h"
#include "store/store.h"
#include "store/trial_writer.h"
#include "trial/trial_request.h"
#include "tunefleet/v1/common.pb.h"
#include "tunefleet/v1/tuning.pb.h"

namespace tunefleet::server {

// Leases a trial may lose before it is given up (DEVICE_LOST): a config
// that takes down its agent every time must not stall the job.
inline constexpr int kMaxAttempts = 5;
// Added to a trial's own timeout (which counts only its kernels running)
// in its lease deadline: a worker restart and the build, within the
// agent's own limits for them (60 s and 120 s by default,
// device_agent/worker.h), and the result's trip back.
inline constexpr int64_t kLeaseSlackMs = 190000;

// Requests an agent holding `capacity` at once is refilled with at a time:
// it gets more work only once this many of its slots are free, and then
// that many requests in one message (its answers come back as one result
// batch too). Half its capacity: an agent pipelining 16 requests is
// refilled 8 at a time while 8 are still queued on it, so a fast
// (short-kernel) fleet sends one message per 8 requests each way
// (bench/fleet_load: 16% less server CPU per trial than refills of a
// quarter); an agent of capacity 1 to 3 gets each request as a slot frees.
inline uint32_t RefillBatch(uint32_t capacity) {
  return std::max(1u, capacity / 2);
}

// What a result is stored with: its trial's job and the lease that
// measured it (the store keeps no lease of its own).
struct ResultOf {
  int64_t job_id = 0;
  store::TrialLease lease;
};

// A trial held by an agent.
struct Lease {
  QueuedTrial trial;
  std::string agent_id;
  int64_t deadline_ms = 0;  // Unix ms of the scheduler's clock
};

// Trials whose leases were lost: back in the queue, or given up after
// kMaxAttempts.
struct LostLeases {
  std::vector<QueuedTrial> requeued;
  std::vector<QueuedTrial> abandoned;
};

// Thread-safe. Sends happen outside the scheduler's lock. Lease deadlines
// and agents' silence are measured against `clock`; it, `store` and
// `writer` must outlive the scheduler.
//
// Leases live here, in memory: a trial row stays pending while leased and
// learns its agent, attempt and lease time with its result (ResultJob()
// hands them to the result's write). A restarted server requeues every
// unfinished row, so a lease written at dispatch would buy nothing there.
// With `write_leases` each lease is written to its row too (pending ->
// leased, the agent named): the embedded fleet's, whose killed command's
// jobs InterruptAbandonedJobs finds by the agents their trials name.
//
// Writes to the store (a lease, a trial back to pending with its attempts)
// are best effort: a failed write leaves the row as it was and the queue
// goes on. With a `writer` they are queued on it (group commit,
// store/trial_writer.h) instead of one transaction each.
class LeaseScheduler {
 public:
  explicit LeaseScheduler(store::Store* store,
                          const base::Clock& clock = base::RealClock(),
                          store::TrialWriter* writer = nullptr,
                          bool write_leases = false)
      : store_(store),
        writer_(writer),
        clock_(clock),
        write_leases_(write_leases) {}

  // The clock deadlines and last-seen times are read from; AgentSession
  // times (connect, Touch) must come from it too.
  const base::Clock& clock() const { return clock_; }

  void AddAgent(std::shared_ptr<AgentSession> agent);
  // Closes the session and returns its leases to the queue.
  LostLeases RemoveAgent(const std::string& agent_id);
  // Agents last heard from more than `silent_ms` ago by the clock. The
  // caller disconnects them; their calls then RemoveAgent().
  std::vector<std::shared_ptr<AgentSession>> SilentAgents(int64_t silent_ms);
  // Leases whose deadline the clock has passed go back to the queue (or
  // are given up).
  LostLeases ExpireLeases();

  // Queues trials and dispatches what free agents can take.
  void Enqueue(std::vector<QueuedTrial> trials);
  // Ends the lease on a trial (whoever holds it) and refills that agent. A
  // late result for a trial that was requeued but not yet handed out again
  // also counts: the queued copy is dropped. nullopt when the trial is
  // neither leased nor queued: a stale or repeated result.
  std::optional<Lease> EndLease(int64_t trial_id);
  // The job of a trial that a result may still end (leased, or requeued
  // and queued: EndLease() would take it) and the lease to store with the
  // result (its latest); nullopt for a stale or repeated result. Ends
  // nothing: the server ends the lease once the result is stored.
  std::optional<ResultOf> ResultJob(int64_t trial_id);
  // A result that could not be stored: its lease (whoever holds it) goes
  // back to the front of the queue as if lost (given up after
  // kMaxAttempts), so another agent measures it again.
  LostLeases RequeueLease(int64_t trial_id);
  // The agent holding `trial_id`'s lease lacked a source the request named
  // by hash (Measurement.SOURCE_UNKNOWN): sends it the request again with
  // its sources in full, under the same lease and attempt (no store write,
  // no lost lease). false when `agent_id` does not hold that lease (a
  // stale answer): nothing is sent.
  bool ResendWithSources(int64_t trial_id, const std::string& agent_id);
  // Where a trial is now: held by an agent, waiting in a queue (new, or
  // after a lost lease), or neither (never queued, ended, cancelled or
  // given up).
  enum class Holding { kNone, kQueued, kLeased };
  Holding Where(int64_t trial_id);
  // Drops a job's queued trials; its leased ones finish normally.
  void CancelJob(int64_t job_id);
  // Writes the attempt count of every lease held now to its trial row (as
  // a requeue does: the row pending, attempts kept), for a server that
  // stops with leases out: the next one goes on counting from them.
  // Leases stay held; a result still ending one is stored as usual.
  void StoreLeaseAttempts();

  // Sum of the capacities of the connected agents of a key.
  uint32_t Capacity(const std::string& key);
  // The job's trials held by agents now (trial rows only, not its
  // reference run), by id.
  std::vector<int64_t> LeasedTrials(int64_t job_id);
  // Replaces progress->in_flight_trial_ids with the leased trials of the
  // job and, for a model job, of its tasks.
  void SetInFlightTrials(tunefleet::v1::JobProgress* progress);
  // Trials waiting for an agent, over every key (reference runs included).
  size_t QueuedCount();
  // Trials held by agents now (reference runs included).
  size_t LeaseCount();
  // Connected agents, for ListDevices.
  std::vector<std::shared_ptr<AgentSession>> Agents();
  // Leases held now per connected agent, by agent id (AgentSession::id()),
  // reference runs included.
  std::map<std::string, uint32_t> LeasesByAgent();

 private:
  struct AgentSlot {
    std::shared_ptr<AgentSession> session;
    uint32_t leased = 0;
  };
  // An agent with at least RefillBatch() free slots, ordered least loaded
  // first, then by id (the order Assign() picks in).
  using FreeSlot = std::pair<uint32_t, std::string>;  // (leased, agent id)
  struct Dispatch {
    std::shared_ptr<AgentSession> session;
    QueuedTrial trial;
  };
  // Sets an agent's lease count, keeping free_ in step.
  void SetLeased(AgentSlot& slot, uint32_t leased)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Matches queued trials of `key` to free agents; returns what to send.
  std::vector<Dispatch> Assign(const std::string& key)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Holds `lease` (leases_ and the job's entry in leased_by_job_).
  void AddLease(Lease lease) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Ends the lease at `it`; returns the next one. Reads only the lease's
  // trial and job ids, which a caller that moved the lease out first
  // leaves in place (a move copies integers).
  std::map<int64_t, Lease>::iterator EraseLease(
      std::map<int64_t, Lease>::iterator it) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Takes the leases matching `lost` back: requeued at the front of their
  // key's queue, or abandoned after kMaxAttempts; refills agents.
  template <typename Pred>
  LostLeases Reclaim(Pred lost, std::vector<Dispatch>* out)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void Send(std::vector<Dispatch> dispatches);
  // Writes the requeued trials' rows back to pending.
  void StoreRequeued(const LostLeases& lost);

  store::Store* const store_;
  store::TrialWriter* const writer_;  // may be null: write at once
  const base::Clock& clock_;
  const bool write_leases_;
  absl::Mutex mu_;
  std::map<std::string, AgentSlot> agents_ ABSL_GUARDED_BY(mu_);
  // Per device key: its agents ready for a refill (RefillBatch() free
  // slots), and the sum of its agents' capacities (so that Assign() and
  // Capacity() do not scan every agent: O(log agents) per trial).
  std::map<std::string, std::set<FreeSlot>> free_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, uint32_t> capacity_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, TrialQueue> queues_ ABSL_GUARDED_BY(mu_);
  std::map<int64_t, Lease> leases_ ABSL_GUARDED_BY(mu_);
  // The trial ids of leases_ per job, so that a job's in-flight list
  // (every watched progress message) does not scan every lease.
  std::map<int64_t, std::set<int64_t>> leased_by_job_ ABSL_GUARDED_BY(mu_);
};

}  // namespace tunefleet::server

#endif  // TUNEFLEET_SERVER_LEASE_SCHEDULER_H_
