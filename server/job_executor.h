// The server's fixed pool of threads for the work of jobs: every job and
// model job runs as a series of steps posted here (tracked_job.h), woken
// by its events (results, grants, a cancel) or a timer, never a thread of
// its own. The server's thread count is therefore the pool's size, however
// many jobs, tasks or watchers there are (docs/SERVER_LIMITS.md).
#ifndef TUNEFLEET_SERVER_JOB_EXECUTOR_H_
#define TUNEFLEET_SERVER_JOB_EXECUTOR_H_

#include <cstdint>
#include <deque>
#include <queue>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/functional/any_invocable.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace tunefleet::server {

// Thread-safe. Work runs first in, first out on `threads` threads; a
// timer's work joins the queue once its time (real time) has come. Work
// must not block on other work of the pool (it may wait for the store or
// the scheduler's lock, never for another job).
class JobExecutor {
 public:
  // `threads` >= 1.
  explicit JobExecutor(int threads);
  // Stop().
  ~JobExecutor();
  JobExecutor(const JobExecutor&) = delete;
  JobExecutor& operator=(const JobExecutor&) = delete;

  int threads() const { return static_cast<int>(threads_.size()); }

  // Runs `work` on a pool thread as soon as one is free.
  void Post(absl::AnyInvocable<void()> work);
  // Runs `work` on a pool thread once `delay` has passed.
  void PostAfter(absl::Duration delay, absl::AnyInvocable<void()> work);

  // Lets running work finish, drops what is queued and every timer, and
  // joins the threads; later posts are dropped. Idempotent.
  void Stop();

 private:
  struct Timer {
    absl::Time at;
    uint64_t seq;  // keeps timers of the same time in posting order
    mutable absl::AnyInvocable<void()> work;
    bool operator>(const Timer& o) const {
      return at != o.at ? at > o.at : seq > o.seq;
    }
  };
  void Loop();
  // Moves the timers whose time has come to the ready queue.
  void TakeDueTimers(absl::Time now) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  absl::Mutex mu_;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::deque<absl::AnyInvocable<void()>> ready_ ABSL_GUARDED_BY(mu_);
  std::priority_queue<Timer, std::vector<Timer>, std::greater<Timer>> timers_
      ABSL_GUARDED_BY(mu_);
  uint64_t next_seq_ ABSL_GUARDED_BY(mu_) = 0;
  // Grows when a timer becomes the earliest: waiting threads wake to wait
  // for it instead.
  uint64_t earliest_changed_ ABSL_GUARDED_BY(mu_) = 0;
  std::vector<std::thread> threads_;
};

}  // namespace tunefleet::server

#endif  // TUNEFLEET_SERVER_JOB_EXECUTOR_H_
