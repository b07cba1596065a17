// Group commit of trial rows. Leases, requeues and results are queued and
// written by one writer thread, a batch per transaction
// (Store::WriteTrials), every `max_delay` or `max_batch` writes, whichever
// comes first. One commit (one WAL append and, at synchronous = NORMAL, no
// fsync) then carries many trials instead of one each.
//
// The rule for results: a result's callback runs only after the
// transaction holding it committed, with whether it was fresh; if the
// batch fails, every result of it gets the error and nothing of the batch
// is in the store. The server acknowledges a result to its agent (ends the
// lease and refills the agent) only from that callback, and requeues the
// trial on an error, so an acknowledged result is durable and a failed one
// is measured again.
//
// A full disk (the store's RESOURCE_EXHAUSTED, from SQLITE_FULL) is not a
// failure of the batch: the writer keeps it and retries it, waiting
// `full_disk_first_retry` and doubling up to `full_disk_max_retry`, until
// it commits or Stop() is called (then its callbacks get the error). So a
// result measured while the disk is full is neither lost nor measured
// again: it is acknowledged once space returns. Writes queued meanwhile
// wait behind it, in order.
//
// Leases and requeues are best effort, as Store::LeaseTrial and
// RequeueTrial are to the scheduler: a lease lost in a crash leaves the row
// pending, and a restarted server requeues pending and leased rows alike.
// (tunefleet-server writes no leases at all: a result carries its lease,
// TrialLease.) Writes of one trial apply in the order they were queued.
#ifndef TUNEFLEET_STORE_TRIAL_WRITER_H_
#define TUNEFLEET_STORE_TRIAL_WRITER_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include "absl/functional/any_invocable.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "store/store.h"
#include "store/trial_write.h"

namespace tunefleet::store {

class TrialWriter {
 public:
  struct Options {
    // The longest a queued write waits for its batch's commit to start.
    absl::Duration max_delay = absl::Milliseconds(2);
    // A batch commits as soon as it holds this many writes.
    size_t max_batch = 1024;
    // Retry delays of a batch refused for a full disk.
    absl::Duration full_disk_first_retry = absl::Milliseconds(50);
    absl::Duration full_disk_max_retry = absl::Seconds(2);
  };
  // Called on the writer's thread after the result's batch committed: true
  // when the result was recorded, false when the trial was already done (a
  // repeated result); or the batch's error. Must not call back into the
  // writer's Flush() or Stop().
  using OnCommitted = absl::AnyInvocable<void(absl::StatusOr<bool> fresh)>;

  // `store` must outlive the writer.
  explicit TrialWriter(Store* store) : TrialWriter(store, Options{}) {}
  TrialWriter(Store* store, Options options);
  // Stop().
  ~TrialWriter();
  TrialWriter(const TrialWriter&) = delete;
  TrialWriter& operator=(const TrialWriter&) = delete;

  // Queue a write. After Stop() they write at once, each in its own
  // transaction.
  void Lease(int64_t trial_id, std::string agent);
  // `attempt`: the trial's leases so far (0: the row's count is kept).
  void Requeue(int64_t trial_id, int attempt = 0);
  // `lease`: which lease measured it (TrialLease), written with the result.
  void Complete(int64_t trial_id, tunefleet::v1::Measurement measurement,
                double time_ns, double gflops, OnCommitted done,
                TrialLease lease = {});

  // Commits what is queued without waiting for max_delay; returns once
  // every write queued before the call is committed (or failed) and its
  // callback has run.
  void Flush();
  // Writes what is queued, runs its callbacks and ends the thread.
  void Stop();

  // Batches committed (or failed) so far, for tests and benches.
  int64_t batches() const;
  // Commits retried because the disk was full, for tests.
  int64_t full_disk_retries() const;

 private:
  void Loop();
  // Writes one batch and runs its callbacks (not under mu_).
  void WriteBatch(std::vector<TrialWrite> writes,
                  std::vector<OnCommitted> callbacks);
  void Push(TrialWrite write, OnCommitted done);
  // Store::WriteTrials, retried while it says the disk is full (unless
  // stopping).
  absl::StatusOr<std::vector<bool>> WriteHolding(
      const std::vector<TrialWrite>& writes);

  Store* const store_;
  const Options options_;
  mutable absl::Mutex mu_;
  std::vector<TrialWrite> queue_ ABSL_GUARDED_BY(mu_);
  // One per write of queue_: a result's callback, else empty.
  std::vector<OnCommitted> callbacks_ ABSL_GUARDED_BY(mu_);
  int64_t queued_ ABSL_GUARDED_BY(mu_) = 0;     // writes ever queued
  int64_t committed_ ABSL_GUARDED_BY(mu_) = 0;  // writes ever finished
  int64_t batches_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t full_disk_retries_ ABSL_GUARDED_BY(mu_) = 0;
  bool flush_ ABSL_GUARDED_BY(mu_) = false;  // Flush(): commit now
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  bool stopped_ ABSL_GUARDED_BY(mu_) = false;
  std::thread thread_;
};

}  // namespace tunefleet::store

#endif  // TUNEFLEET_STORE_TRIAL_WRITER_H_
