#include "server/job_executor.h"

#include <utility>

#include "absl/time/clock.h"

namespace tunefleet::server {

JobExecutor::JobExecutor(int threads) {
  if (threads < 1) threads = 1;
  threads_.reserve(static_cast<size_t>(threads));
  for (int i = 0; i < threads; ++i) {
    threads_.emplace_back([this] { Loop(); });
  }
}

JobExecutor::~JobExecutor() { Stop(); }

void JobExecutor::Post(absl::AnyInvocable<void()> work) {
  absl::MutexLock lock(&mu_);
  if (stopping_) return;
  ready_.push_back(std::move(work));
}

void JobExecutor::PostAfter(absl::Duration delay,
                            absl::AnyInvocable<void()> work) {
  absl::MutexLock lock(&mu_);
  if (stopping_) return;
  const absl::Time at = absl::Now() + delay;
  if (timers_.empty() || at < timers_.top().at) ++earliest_changed_;
  timers_.push(Timer{at, next_seq_++, std::move(work)});
}

void JobExecutor::TakeDueTimers(absl::Time now) {
  while (!timers_.empty() && timers_.top().at <= now) {
    ready_.push_back(std::move(timers_.top().work));
    timers_.pop();
  }
}

void JobExecutor::Loop() {
  while (true) {
    absl::AnyInvocable<void()> work;
    {
      absl::MutexLock lock(&mu_);
      while (true) {
        if (stopping_) return;
        TakeDueTimers(absl::Now());
        if (!ready_.empty()) break;
        const uint64_t seen = earliest_changed_;
        auto wake = [this, seen]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
          return stopping_ || !ready_.empty() || earliest_changed_ != seen;
        };
        if (timers_.empty()) {
          mu_.Await(absl::Condition(&wake));
        } else {
          mu_.AwaitWithDeadline(absl::Condition(&wake), timers_.top().at);
        }
      }
      work = std::move(ready_.front());
      ready_.pop_front();
    }
    work();
  }
}

void JobExecutor::Stop() {
  std::deque<absl::AnyInvocable<void()>> dropped;
  decltype(timers_) dropped_timers;
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
    dropped.swap(ready_);
    dropped_timers.swap(timers_);
  }
  for (std::thread& t : threads_) {
    if (t.joinable()) t.join();
  }
  // What the work held (jobs) goes here, outside the lock.
}

}  // namespace tunefleet::server
