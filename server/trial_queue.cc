#include "server/trial_queue.h"

#include <algorithm>
#include <utility>

namespace tunefleet::server {

void TrialQueue::PushBack(QueuedTrial trial) {
  const int priority = trial.priority;
  levels_[priority].push_back(std::move(trial));
  ++size_;
}

void TrialQueue::PushFront(QueuedTrial trial) {
  const int priority = trial.priority;
  levels_[priority].push_front(std::move(trial));
  ++size_;
}

QueuedTrial TrialQueue::PopNext() {
  auto level = levels_.begin();
  QueuedTrial next = std::move(level->second.front());
  level->second.pop_front();
  if (level->second.empty()) levels_.erase(level);
  --size_;
  return next;
}

const QueuedTrial* TrialQueue::Find(int64_t trial_id) const {
  for (const auto& [priority, trials] : levels_) {
    for (const QueuedTrial& t : trials) {
      if (t.trial_id == trial_id) return &t;
    }
  }
  return nullptr;
}

std::optional<QueuedTrial> TrialQueue::Take(int64_t trial_id) {
  for (auto level = levels_.begin(); level != levels_.end(); ++level) {
    std::deque<QueuedTrial>& trials = level->second;
    auto it = std::find_if(
        trials.begin(), trials.end(),
        [trial_id](const QueuedTrial& t) { return t.trial_id == trial_id; });
    if (it == trials.end()) continue;
    QueuedTrial taken = std::move(*it);
    trials.erase(it);
    if (trials.empty()) levels_.erase(level);
    --size_;
    return taken;
  }
  return std::nullopt;
}

void TrialQueue::EraseJob(int64_t job_id) {
  for (auto level = levels_.begin(); level != levels_.end();) {
    size_ -= std::erase_if(level->second, [job_id](const QueuedTrial& t) {
      return t.job_id == job_id;
    });
    level = level->second.empty() ? levels_.erase(level) : std::next(level);
  }
}

}  // namespace tunefleet::server
