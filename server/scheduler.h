// Hands queued trials to the connected agents of their device key, keeping
// every agent busy up to its capacity, highest job priority first. Each
// handed-out trial is a lease held by one agent; when the agent goes away
// its leases return to the front of the queue (DESIGN.md, lease).
#ifndef TUNEFLEET_SERVER_SCHEDULER_H_
#define TUNEFLEET_SERVER_SCHEDULER_H_

#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "proto/common.pb.h"
#include "server/agent_session.h"
#include "server/store.h"

namespace tunefleet::server {

// A trial waiting for an agent.
struct QueuedTrial {
  int64_t trial_id = 0;
  int64_t job_id = 0;
  int priority = 0;
  std::string device_key;
  std::shared_ptr<const tunefleet::v1::MeasureRequest> request;
};

// A trial held by an agent.
struct Lease {
  QueuedTrial trial;
  std::string agent_id;
};

// Thread-safe. Sends happen outside the scheduler's lock.
class Scheduler {
 public:
  explicit Scheduler(Store* store) : store_(store) {}

  void AddAgent(std::shared_ptr<AgentSession> agent);
  // Closes the session and requeues its leases. Returns how many.
  int RemoveAgent(const std::string& agent_id);

  // Queues trials and dispatches what free agents can take.
  void Enqueue(std::vector<QueuedTrial> trials);
  // Ends the lease on a trial (whoever holds it) and refills that agent.
  // nullopt when no lease exists: a stale or repeated result.
  std::optional<Lease> EndLease(int64_t trial_id);
  // Drops a job's queued trials; its leased ones finish normally.
  void CancelJob(int64_t job_id);

  // Sum of the capacities of the connected agents of a key.
  uint32_t Capacity(const std::string& key);
  // Connected agents, for ListDevices.
  std::vector<std::shared_ptr<AgentSession>> Agents();
  // Trials queued (not leased) for a key.
  size_t Queued(const std::string& key);

 private:
  struct AgentSlot {
    std::shared_ptr<AgentSession> session;
    uint32_t leased = 0;
  };
  struct Dispatch {
    std::shared_ptr<AgentSession> session;
    QueuedTrial trial;
  };
  // Matches queued trials of `key` to free agents; returns what to send.
  std::vector<Dispatch> Assign(const std::string& key)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void Send(std::vector<Dispatch> dispatches);

  Store* store_;
  absl::Mutex mu_;
  std::map<std::string, AgentSlot> agents_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, std::deque<QueuedTrial>> queues_ ABSL_GUARDED_BY(mu_);
  std::map<int64_t, Lease> leases_ ABSL_GUARDED_BY(mu_);
};

}  // namespace tunefleet::server

#endif  // TUNEFLEET_SERVER_SCHEDULER_H_
