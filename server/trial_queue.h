// The trials of one device key waiting for an agent (LeaseScheduler's queue):
// the highest job priority first, the oldest first within a priority; a
// trial whose lease was lost goes back to the front of its priority.
#ifndef TUNEFLEET_SERVER_TRIAL_QUEUE_H_
#define TUNEFLEET_SERVER_TRIAL_QUEUE_H_

#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "trial/trial_request.h"
#include "tunefleet/v1/common.pb.h"

namespace tunefleet::server {

// A trial waiting for an agent.
struct QueuedTrial {
  int64_t trial_id = 0;
  int64_t job_id = 0;
  int priority = 0;
  std::string device_key;
  // Its launches may name their sources by hash alone, the texts then in
  // `sources` (trial::LeanRequest); the agent's session fills them in
  // where the agent lacks them.
  std::shared_ptr<const tunefleet::v1::MeasureRequest> request;
  int attempt = 0;                                    // leases so far
  std::shared_ptr<const trial::SourceTexts> sources;  // may be null
  // The latest lease's agent name and start (Unix ms of the scheduler's
  // clock); empty and 0 before the first.
  std::string agent;
  int64_t leased_ms = 0;
  // Empty: any agent of the key; else only an agent reporting this
  // DeviceInfo.driver_version (a re-validation job's trials,
  // docs/DRIVER_DRIFT.md).
  std::string driver_version;
};

// One deque per priority, so the next trial is found in O(log priorities)
// however many lower-priority trials wait before it (several jobs each
// queue up to the whole fleet's capacity). Not thread-safe: the
// scheduler's lock guards it.
class TrialQueue {
 public:
  bool empty() const { return size_ == 0; }
  size_t size() const { return size_; }

  // A new trial: behind the others of its priority.
  void PushBack(QueuedTrial trial);
  // A trial back from a lost lease: ahead of the others of its priority.
  void PushFront(QueuedTrial trial);
  // Removes and returns the next trial: the oldest of the highest priority.
  // The queue must not be empty.
  QueuedTrial PopNext();

  // The queued trial `trial_id`, or null (a scan: for late results only).
  const QueuedTrial* Find(int64_t trial_id) const;
  // Removes and returns the queued trial `trial_id`; nullopt when it is not
  // queued.
  std::optional<QueuedTrial> Take(int64_t trial_id);
  // Drops every queued trial of `job_id`.
  void EraseJob(int64_t job_id);

 private:
  std::map<int, std::deque<QueuedTrial>, std::greater<>> levels_;
  size_t size_ = 0;
};

}  // namespace tunefleet::server

#endif  // TUNEFLEET_SERVER_TRIAL_QUEUE_H_
