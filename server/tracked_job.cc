#include "server/tracked_job.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"

namespace tunefleet::server {

void TrackedJob::Start(JobExecutor* executor, std::function<void()> on_end) {
  {
    absl::MutexLock lock(&run_mu_);
    if (started_) return;
    executor_ = executor;
    on_end_ = std::move(on_end);
    started_ = true;
  }
  Wake();
}

void TrackedJob::Wake() {
  {
    absl::MutexLock lock(&run_mu_);
    if (!started_ || ended_) return;
    if (queued_) {
      again_ = true;
      return;
    }
    queued_ = true;
  }
  PostStep();
}

void TrackedJob::PostStep() {
  JobExecutor* executor;
  {
    absl::MutexLock lock(&run_mu_);
    executor = executor_;
  }
  executor->Post([self = shared_from_this()] { self->RunStep(); });
}

void TrackedJob::WakeAfter(absl::Duration delay) {
  const absl::Time at = absl::Now() + delay;
  JobExecutor* executor;
  {
    absl::MutexLock lock(&run_mu_);
    if (!started_ || ended_ || timer_at_ <= at) return;
    timer_at_ = at;
    executor = executor_;
  }
  executor->PostAfter(delay, [weak = weak_from_this(), at] {
    std::shared_ptr<TrackedJob> self = weak.lock();
    if (self == nullptr) return;
    {
      absl::MutexLock lock(&self->run_mu_);
      if (self->timer_at_ == at) self->timer_at_ = absl::InfiniteFuture();
    }
    self->Wake();
  });
}

void TrackedJob::RunStep() {
  {
    absl::MutexLock lock(&run_mu_);
    again_ = false;  // what woke it so far, this step sees
  }
  const bool ended = Step();
  std::function<void()> on_end;
  {
    absl::MutexLock lock(&run_mu_);
    if (!ended) {
      if (!again_) {
        queued_ = false;
        return;
      }
    } else {
      ended_ = true;
      queued_ = false;
      on_end.swap(on_end_);
    }
  }
  if (!ended) {
    PostStep();  // woken while it ran
    return;
  }
  {
    // The listeners learn that it ended (ended() is true now), e.g. a
    // model job waiting for its tasks.
    absl::MutexLock lock(&mu_);
    for (const auto& [id, listener] : listeners_) listener();
  }
  if (on_end) on_end();
  absl::MutexLock lock(&run_mu_);
  finished_ = true;
}

void TrackedJob::Join() {
  absl::MutexLock lock(&run_mu_);
  auto done = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(run_mu_) {
    return finished_ || !started_;
  };
  run_mu_.Await(absl::Condition(&done));
}

bool TrackedJob::ended() {
  absl::MutexLock lock(&run_mu_);
  return ended_;
}

void TrackedJob::Cancel() { Stop(/*interrupt=*/false); }

void TrackedJob::Interrupt() { Stop(/*interrupt=*/true); }

void TrackedJob::Stop(bool interrupt) {
  {
    absl::MutexLock lock(&mu_);
    cancelled_ = true;
    if (interrupt) interrupted_ = true;
  }
  Wake();
}

tunefleet::v1::JobProgress TrackedJob::Progress() {
  absl::MutexLock lock(&mu_);
  return progress_;
}

uint64_t TrackedJob::version() {
  absl::MutexLock lock(&mu_);
  return version_;
}

bool TrackedJob::WaitForUpdate(uint64_t* version, absl::Duration timeout,
                               tunefleet::v1::JobProgress* out) {
  absl::MutexLock lock(&mu_);
  const uint64_t seen = *version;
  auto changed = [this, seen]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return version_ != seen;
  };
  if (!mu_.AwaitWithTimeout(absl::Condition(&changed), timeout)) return false;
  *version = version_;
  *out = progress_;
  return true;
}

int TrackedJob::AddListener(std::function<void()> listener) {
  absl::MutexLock lock(&mu_);
  const int id = next_listener_++;
  listeners_[id] = std::move(listener);
  return id;
}

void TrackedJob::RemoveListener(int id) {
  std::function<void()> removed;  // destroyed outside the lock
  absl::MutexLock lock(&mu_);
  auto it = listeners_.find(id);
  if (it == listeners_.end()) return;
  removed.swap(it->second);
  listeners_.erase(it);
}

void TrackedJob::Changed() {
  ++version_;
  for (const auto& [id, listener] : listeners_) listener();
}

void TrackedJob::Finish(
    tunefleet::v1::JobState state, const std::string& reason,
    const std::function<absl::Status(const std::string&)>& store) {
  std::string message = reason;
  {
    absl::MutexLock lock(&mu_);
    if (message.empty()) message = progress_.message();
  }
  absl::Status s = store(message);
  absl::MutexLock lock(&mu_);
  progress_.set_state(state);
  progress_.set_message(
      s.ok() ? message : absl::StrCat(message, "; store: ", s.message()));
  Changed();
}

}  // namespace tunefleet::server
