#include "server/lease_scheduler.h"

#include <algorithm>

#include "base/time.h"
#include "trial/trial_request.h"

namespace tunefleet::server {

void LeaseScheduler::AddAgent(std::shared_ptr<AgentSession> agent) {
  std::vector<Dispatch> out;
  {
    absl::MutexLock lock(&mu_);
    const std::string key = agent->key();
    const std::string id = agent->id();
    capacity_[key] += agent->capacity();
    free_[key].insert(FreeSlot{0, id});
    agents_[id] = AgentSlot{std::move(agent), 0};
    out = Assign(key);
  }
  Send(std::move(out));
}

template <typename Pred>
LostLeases LeaseScheduler::Reclaim(Pred lost, std::vector<Dispatch>* out) {
  LostLeases result;
  std::vector<std::string> keys;
  for (auto l = leases_.begin(); l != leases_.end();) {
    if (!lost(l->second)) {
      ++l;
      continue;
    }
    if (auto a = agents_.find(l->second.agent_id); a != agents_.end()) {
      SetLeased(a->second, a->second.leased - 1);
    }
    QueuedTrial trial = std::move(l->second.trial);
    keys.push_back(trial.device_key);
    if (trial.attempt >= kMaxAttempts) {
      result.abandoned.push_back(std::move(trial));
    } else {
      result.requeued.push_back(trial);
      TrialQueue& queue = queues_[trial.device_key];
      queue.PushFront(std::move(trial));
    }
    l = EraseLease(l);
  }
  std::sort(keys.begin(), keys.end());
  keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
  for (const std::string& key : keys) {
    std::vector<Dispatch> d = Assign(key);
    std::move(d.begin(), d.end(), std::back_inserter(*out));
  }
  return result;
}

void LeaseScheduler::StoreRequeued(const LostLeases& lost) {
  for (const QueuedTrial& t : lost.requeued) {
    if (t.trial_id <= 0) continue;
    if (writer_ != nullptr) {
      writer_->Requeue(t.trial_id, t.attempt);
    } else {
      (void)store_->RequeueTrial(t.trial_id, t.attempt);
    }
  }
}

LostLeases LeaseScheduler::RemoveAgent(const std::string& agent_id) {
  std::vector<Dispatch> out;
  LostLeases lost;
  {
    absl::MutexLock lock(&mu_);
    auto it = agents_.find(agent_id);
    if (it == agents_.end()) return lost;
    AgentSession& session = *it->second.session;
    session.Close();
    free_[session.key()].erase(FreeSlot{it->second.leased, agent_id});
    capacity_[session.key()] -= session.capacity();
    agents_.erase(it);
    lost = Reclaim(
        [&agent_id](const Lease& l) { return l.agent_id == agent_id; }, &out);
  }
  StoreRequeued(lost);
  Send(std::move(out));
  return lost;
}

std::vector<std::shared_ptr<AgentSession>> LeaseScheduler::SilentAgents(
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

LostLeases LeaseScheduler::ExpireLeases() {
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

void LeaseScheduler::Enqueue(std::vector<QueuedTrial> trials) {
  std::vector<Dispatch> out;
  {
    absl::MutexLock lock(&mu_);
    std::vector<std::string> keys;
    for (QueuedTrial& t : trials) {
      keys.push_back(t.device_key);
      TrialQueue& queue = queues_[t.device_key];
      queue.PushBack(std::move(t));
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

std::optional<Lease> LeaseScheduler::EndLease(int64_t trial_id) {
  std::optional<Lease> lease;
  std::vector<Dispatch> out;
  {
    absl::MutexLock lock(&mu_);
    auto it = leases_.find(trial_id);
    if (it == leases_.end()) {
      // A late result for a requeued trial: take it, drop the queued copy.
      for (auto& [key, queue] : queues_) {
        if (std::optional<QueuedTrial> q = queue.Take(trial_id)) {
          return Lease{std::move(*q), "", 0};
        }
      }
      return std::nullopt;
    }
    lease = std::move(it->second);
    EraseLease(it);
    if (auto a = agents_.find(lease->agent_id); a != agents_.end()) {
      SetLeased(a->second, a->second.leased - 1);
    }
    out = Assign(lease->trial.device_key);
  }
  Send(std::move(out));
  return lease;
}

std::optional<ResultOf> LeaseScheduler::ResultJob(int64_t trial_id) {
  std::optional<ResultOf> of;
  std::shared_ptr<const tunefleet::v1::MeasureRequest> request;
  std::shared_ptr<const trial::SourceTexts> sources;
  auto result_of = [&](const QueuedTrial& t) {
    of = ResultOf{t.job_id, store::TrialLease{t.agent, t.attempt, t.leased_ms}};
    request = t.request;
    sources = t.sources;
  };
  {
    absl::MutexLock lock(&mu_);
    if (auto it = leases_.find(trial_id); it != leases_.end()) {
      result_of(it->second.trial);
    } else {
      for (const auto& [key, queue] : queues_) {
        if (const QueuedTrial* t = queue.Find(trial_id)) {
          result_of(*t);
          break;
        }
      }
    }
  }
  // The provenance hash of the program the agent built, outside the lock.
  if (of && request != nullptr) {
    of->lease.kernel_sha256 =
        trial::KernelSha256(request->kernel(), sources.get());
  }
  return of;
}

LostLeases LeaseScheduler::RequeueLease(int64_t trial_id) {
  std::vector<Dispatch> out;
  LostLeases lost;
  {
    absl::MutexLock lock(&mu_);
    lost = Reclaim(
        [trial_id](const Lease& l) { return l.trial.trial_id == trial_id; },
        &out);
  }
  StoreRequeued(lost);
  Send(std::move(out));
  return lost;
}

bool LeaseScheduler::ResendWithSources(int64_t trial_id,
                                       const std::string& agent_id) {
  std::shared_ptr<AgentSession> session;
  QueuedTrial trial;
  {
    absl::MutexLock lock(&mu_);
    auto lease = leases_.find(trial_id);
    if (lease == leases_.end() || lease->second.agent_id != agent_id) {
      return false;
    }
    auto agent = agents_.find(agent_id);
    if (agent == agents_.end()) return false;
    session = agent->second.session;
    trial = lease->second.trial;
  }
  session->ForgetSources(*trial.request);
  tunefleet::v1::ServerMessage message;
  tunefleet::v1::MeasureRequest* request =
      message.mutable_batch()->add_requests();
  *request = *trial.request;
  request->set_attempt(static_cast<uint32_t>(trial.attempt));
  // A failed send: the agent is going away and its leases are requeued.
  session->SendBatch(std::move(message), {trial.sources.get()});
  return true;
}

LeaseScheduler::Holding LeaseScheduler::Where(int64_t trial_id) {
  absl::MutexLock lock(&mu_);
  if (leases_.count(trial_id) > 0) return Holding::kLeased;
  for (const auto& [key, queue] : queues_) {
    if (queue.Find(trial_id) != nullptr) return Holding::kQueued;
  }
  return Holding::kNone;
}

void LeaseScheduler::CancelJob(int64_t job_id) {
  absl::MutexLock lock(&mu_);
  for (auto& [key, queue] : queues_) queue.EraseJob(job_id);
}

void LeaseScheduler::StoreLeaseAttempts() {
  LostLeases held;
  {
    absl::MutexLock lock(&mu_);
    for (const auto& [trial_id, lease] : leases_) {
      held.requeued.push_back(lease.trial);
    }
  }
  StoreRequeued(held);
}

uint32_t LeaseScheduler::Capacity(const std::string& key) {
  absl::MutexLock lock(&mu_);
  auto it = capacity_.find(key);
  return it == capacity_.end() ? 0 : it->second;
}

void LeaseScheduler::SetInFlightTrials(tunefleet::v1::JobProgress* progress) {
  progress->clear_in_flight_trial_ids();
  for (int64_t id : LeasedTrials(progress->job_id())) {
    progress->add_in_flight_trial_ids(id);
  }
  for (const auto& task : progress->model().task_progress()) {
    for (int64_t id : LeasedTrials(task.job().job_id())) {
      progress->add_in_flight_trial_ids(id);
    }
  }
}

std::vector<int64_t> LeaseScheduler::LeasedTrials(int64_t job_id) {
  absl::MutexLock lock(&mu_);
  std::vector<int64_t> out;
  auto it = leased_by_job_.find(job_id);
  if (it == leased_by_job_.end()) return out;
  // Ordered by id; the job's reference run has a negative one.
  std::copy(it->second.upper_bound(0), it->second.end(),
            std::back_inserter(out));
  return out;
}

size_t LeaseScheduler::QueuedCount() {
  absl::MutexLock lock(&mu_);
  size_t n = 0;
  for (const auto& [key, queue] : queues_) n += queue.size();
  return n;
}

size_t LeaseScheduler::LeaseCount() {
  absl::MutexLock lock(&mu_);
  return leases_.size();
}

std::vector<std::shared_ptr<AgentSession>> LeaseScheduler::Agents() {
  absl::MutexLock lock(&mu_);
  std::vector<std::shared_ptr<AgentSession>> out;
  for (const auto& [id, slot] : agents_) out.push_back(slot.session);
  return out;
}

std::map<std::string, uint32_t> LeaseScheduler::LeasesByAgent() {
  absl::MutexLock lock(&mu_);
  std::map<std::string, uint32_t> out;
  for (const auto& [id, slot] : agents_) out[id] = slot.leased;
  return out;
}

void LeaseScheduler::AddLease(Lease lease) {
  const int64_t trial_id = lease.trial.trial_id;
  leased_by_job_[lease.trial.job_id].insert(trial_id);
  leases_[trial_id] = std::move(lease);
}

std::map<int64_t, Lease>::iterator LeaseScheduler::EraseLease(
    std::map<int64_t, Lease>::iterator it) {
  auto job = leased_by_job_.find(it->second.trial.job_id);
  if (job != leased_by_job_.end()) {
    job->second.erase(it->first);
    if (job->second.empty()) leased_by_job_.erase(job);
  }
  return leases_.erase(it);
}

void LeaseScheduler::SetLeased(AgentSlot& slot, uint32_t leased) {
  std::set<FreeSlot>& free = free_[slot.session->key()];
  free.erase(FreeSlot{slot.leased, slot.session->id()});
  slot.leased = leased;
  const uint32_t capacity = slot.session->capacity();
  if (leased < capacity && capacity - leased >= RefillBatch(capacity)) {
    free.insert(FreeSlot{leased, slot.session->id()});
  }
}

std::vector<LeaseScheduler::Dispatch> LeaseScheduler::Assign(
    const std::string& key) {
  std::vector<Dispatch> out;
  TrialQueue& queue = queues_[key];
  std::set<FreeSlot>& free_slots = free_[key];
  AgentSlot* free = nullptr;
  uint32_t refill = 0;  // requests `free` still gets in this round
  const auto lease_to = [this, &out](AgentSlot& slot, QueuedTrial next) {
    SetLeased(slot, slot.leased + 1);
    ++next.attempt;
    next.agent = slot.session->name();
    const int64_t now_ms = clock_.NowMs();
    next.leased_ms = now_ms;
    // The agent measures its leases one after another: this one may wait
    // behind the others it holds.
    const double timeout_ms = next.request->timing().timeout_ms() > 0
                                  ? next.request->timing().timeout_ms()
                                  : 120000.0;
    const int64_t deadline =
        now_ms +
        slot.leased * (static_cast<int64_t>(timeout_ms) + kLeaseSlackMs);
    AddLease(Lease{next, slot.session->id(), deadline});
    out.push_back(Dispatch{slot.session, std::move(next)});
  };
  // Trials bound to a driver no free agent of the key reports: back to
  // the queue, in their order, once this round is over.
  std::vector<QueuedTrial> held;
  while (!queue.empty() && (refill > 0 || !free_slots.empty())) {
    if (refill == 0) {
      // The least loaded agent of the key ready for a refill (lowest id
      // first) gets RefillBatch() requests, or what is queued.
      free = &agents_.at(free_slots.begin()->second);
      const uint32_t capacity = free->session->capacity();
      refill = std::min(capacity - free->leased, RefillBatch(capacity));
    }
    // The oldest trial of the highest priority.
    QueuedTrial next = queue.PopNext();
    if (!next.driver_version.empty() &&
        free->session->device().driver_version() != next.driver_version) {
      // The least loaded free agent with that driver takes it, if any.
      AgentSlot* match = nullptr;
      for (const FreeSlot& slot : free_slots) {
        AgentSlot& candidate = agents_.at(slot.second);
        if (candidate.session->device().driver_version() ==
            next.driver_version) {
          match = &candidate;
          break;
        }
      }
      if (match == nullptr) {
        held.push_back(std::move(next));
      } else {
        lease_to(*match, std::move(next));
      }
      continue;
    }
    --refill;
    lease_to(*free, std::move(next));
  }
  for (auto it = held.rbegin(); it != held.rend(); ++it) {
    queue.PushFront(std::move(*it));
  }
  return out;
}

void LeaseScheduler::Send(std::vector<Dispatch> dispatches) {
  // One message (and one stream write) per agent, not per trial.
  struct Batch {
    std::shared_ptr<AgentSession> session;
    tunefleet::v1::ServerMessage message;
    std::vector<const trial::SourceTexts*> sources;  // per request
  };
  std::vector<Batch> batches;
  std::map<AgentSession*, size_t> index;
  for (Dispatch& d : dispatches) {
    if (write_leases_ && d.trial.trial_id > 0) {
      if (writer_ != nullptr) {
        writer_->Lease(d.trial.trial_id, d.session->name());
      } else {
        (void)store_->LeaseTrial(d.trial.trial_id, d.session->name());
      }
    }
    auto [it, first] = index.try_emplace(d.session.get(), batches.size());
    if (first) batches.push_back(Batch{d.session, {}, {}});
    Batch& batch = batches[it->second];
    tunefleet::v1::MeasureRequest* request =
        batch.message.mutable_batch()->add_requests();
    *request = *d.trial.request;
    request->set_attempt(static_cast<uint32_t>(d.trial.attempt));
    // `dispatches` keeps the texts alive until the batches are sent.
    batch.sources.push_back(d.trial.sources.get());
  }
  for (Batch& batch : batches) {
    // A failed send means the agent is going away: its call will
    // RemoveAgent() and requeue these leases.
    batch.session->SendBatch(std::move(batch.message), batch.sources);
  }
}

}  // namespace tunefleet::server
