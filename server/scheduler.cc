#include "server/scheduler.h"

#include <algorithm>

#include "base/time.h"

namespace tunefleet::server {

void Scheduler::AddAgent(std::shared_ptr<AgentSession> agent) {
  std::vector<Dispatch> out;
  {
    absl::MutexLock lock(&mu_);
    const std::string key = agent->key();
    const std::string id = agent->id();
    agents_[id] = AgentSlot{std::move(agent), 0};
    out = Assign(key);
  }
  Send(std::move(out));
}

template <typename Pred>
LostLeases Scheduler::Reclaim(Pred lost, std::vector<Dispatch>* out) {
  LostLeases result;
  std::vector<std::string> keys;
  for (auto l = leases_.begin(); l != leases_.end();) {
    if (!lost(l->second)) {
      ++l;
      continue;
    }
    if (auto a = agents_.find(l->second.agent_id); a != agents_.end()) {
      --a->second.leased;
    }
    QueuedTrial trial = std::move(l->second.trial);
    keys.push_back(trial.device_key);
    if (trial.attempt >= kMaxAttempts) {
      result.abandoned.push_back(std::move(trial));
    } else {
      result.requeued.push_back(trial);
      queues_[trial.device_key].push_front(std::move(trial));
    }
    l = leases_.erase(l);
  }
  std::sort(keys.begin(), keys.end());
  keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
  for (const std::string& key : keys) {
    std::vector<Dispatch> d = Assign(key);
    std::move(d.begin(), d.end(), std::back_inserter(*out));
  }
  return result;
}

void Scheduler::StoreRequeued(const LostLeases& lost) {
  for (const QueuedTrial& t : lost.requeued) {
    if (t.trial_id > 0) (void)store_->RequeueTrial(t.trial_id);
  }
}

LostLeases Scheduler::RemoveAgent(const std::string& agent_id) {
  std::vector<Dispatch> out;
  LostLeases lost;
  {
    absl::MutexLock lock(&mu_);
    auto it = agents_.find(agent_id);
    if (it == agents_.end()) return lost;
    it->second.session->Close();
    agents_.erase(it);
    lost = Reclaim(
        [&agent_id](const Lease& l) { return l.agent_id == agent_id; }, &out);
  }
  StoreRequeued(lost);
  Send(std::move(out));
  return lost;
}

std::vector<std::shared_ptr<AgentSession>> Scheduler::SilentAgents(
    int64_t silent_ms) {
  const int64_t silent_since_ms = clock_.NowMs() - silent_ms;
  absl::MutexLock lock(&mu_);
  std::vector<std::shared_ptr<AgentSession>> out;
  for (const auto& [id, slot] : agents_) {
    if (slot.session->last_seen_ms() < silent_since_ms) {
      out.push_back(slot.session);
    }
  }
  return out;
}

LostLeases Scheduler::ExpireLeases() {
  const int64_t now_ms = clock_.NowMs();
  std::vector<Dispatch> out;
  LostLeases lost;
  {
    absl::MutexLock lock(&mu_);
    lost = Reclaim([now_ms](const Lease& l) { return l.deadline_ms < now_ms; },
                   &out);
  }
  StoreRequeued(lost);
  Send(std::move(out));
  return lost;
}

void Scheduler::Enqueue(std::vector<QueuedTrial> trials) {
  std::vector<Dispatch> out;
  {
    absl::MutexLock lock(&mu_);
    std::vector<std::string> keys;
    for (QueuedTrial& t : trials) {
      keys.push_back(t.device_key);
      queues_[t.device_key].push_back(std::move(t));
    }
    std::sort(keys.begin(), keys.end());
    keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
    for (const std::string& key : keys) {
      std::vector<Dispatch> d = Assign(key);
      std::move(d.begin(), d.end(), std::back_inserter(out));
    }
  }
  Send(std::move(out));
}

std::optional<Lease> Scheduler::EndLease(int64_t trial_id) {
  std::optional<Lease> lease;
  std::vector<Dispatch> out;
  {
    absl::MutexLock lock(&mu_);
    auto it = leases_.find(trial_id);
    if (it == leases_.end()) {
      // A late result for a requeued trial: take it, drop the queued copy.
      for (auto& [key, queue] : queues_) {
        auto q = std::find_if(queue.begin(), queue.end(),
                              [trial_id](const QueuedTrial& t) {
                                return t.trial_id == trial_id;
                              });
        if (q != queue.end()) {
          Lease late{std::move(*q), "", 0};
          queue.erase(q);
          return late;
        }
      }
      return std::nullopt;
    }
    lease = std::move(it->second);
    leases_.erase(it);
    if (auto a = agents_.find(lease->agent_id); a != agents_.end()) {
      --a->second.leased;
    }
    out = Assign(lease->trial.device_key);
  }
  Send(std::move(out));
  return lease;
}

void Scheduler::CancelJob(int64_t job_id) {
  absl::MutexLock lock(&mu_);
  for (auto& [key, queue] : queues_) {
    std::erase_if(
        queue, [job_id](const QueuedTrial& t) { return t.job_id == job_id; });
  }
}

uint32_t Scheduler::Capacity(const std::string& key) {
  absl::MutexLock lock(&mu_);
  uint32_t total = 0;
  for (const auto& [id, slot] : agents_) {
    if (slot.session->key() == key) total += slot.session->capacity();
  }
  return total;
}

std::vector<int64_t> Scheduler::LeasedTrials(int64_t job_id) {
  absl::MutexLock lock(&mu_);
  std::vector<int64_t> out;
  for (const auto& [trial_id, lease] : leases_) {
    if (lease.trial.job_id == job_id && trial_id > 0) out.push_back(trial_id);
  }
  return out;  // leases_ is ordered by trial id
}

std::vector<std::shared_ptr<AgentSession>> Scheduler::Agents() {
  absl::MutexLock lock(&mu_);
  std::vector<std::shared_ptr<AgentSession>> out;
  for (const auto& [id, slot] : agents_) out.push_back(slot.session);
  return out;
}

std::vector<Scheduler::Dispatch> Scheduler::Assign(const std::string& key) {
  std::vector<Dispatch> out;
  std::deque<QueuedTrial>& queue = queues_[key];
  while (!queue.empty()) {
    // The least loaded agent of the key with a free slot.
    AgentSlot* free = nullptr;
    for (auto& [id, slot] : agents_) {
      if (slot.session->key() != key ||
          slot.leased >= slot.session->capacity()) {
        continue;
      }
      if (free == nullptr || slot.leased < free->leased) free = &slot;
    }
    if (free == nullptr) break;
    // The oldest trial of the highest priority.
    auto next =
        std::max_element(queue.begin(), queue.end(),
                         [](const QueuedTrial& a, const QueuedTrial& b) {
                           return a.priority < b.priority;
                         });
    ++free->leased;
    ++next->attempt;
    // The agent measures its leases one after another: this one may wait
    // behind the others it holds.
    const double timeout_ms = next->request->timing().timeout_ms() > 0
                                  ? next->request->timing().timeout_ms()
                                  : 120000.0;
    const int64_t deadline =
        clock_.NowMs() +
        free->leased * (static_cast<int64_t>(timeout_ms) + kLeaseSlackMs);
    leases_[next->trial_id] = Lease{*next, free->session->id(), deadline};
    out.push_back(Dispatch{free->session, std::move(*next)});
    queue.erase(next);
  }
  return out;
}

void Scheduler::Send(std::vector<Dispatch> dispatches) {
  for (Dispatch& d : dispatches) {
    if (d.trial.trial_id > 0) {
      (void)store_->LeaseTrial(d.trial.trial_id, d.session->name());
    }
    tunefleet::v1::ServerMessage message;
    tunefleet::v1::MeasureRequest* request =
        message.mutable_batch()->add_requests();
    *request = *d.trial.request;
    request->set_attempt(static_cast<uint32_t>(d.trial.attempt));
    // A failed send means the agent is going away: its call will
    // RemoveAgent() and requeue this lease.
    d.session->Send(message);
  }
}

}  // namespace tunefleet::server
