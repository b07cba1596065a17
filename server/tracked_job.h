// What a job and a model job share: a thread that runs it, cancel and
// interrupt flags, and the progress watchers read (TuningService's
// WatchJob, GetJob, CancelJob), versioned so that a watcher wakes on each
// change.
#ifndef TUNEFLEET_SERVER_TRACKED_JOB_H_
#define TUNEFLEET_SERVER_TRACKED_JOB_H_

#include <cstdint>
#include <functional>
#include <string>
#include <thread>

#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "tunefleet/v1/tuning.pb.h"

namespace tunefleet::server {

// Thread-safe. A subclass's destructor must Cancel() and Join() before its
// own members go.
class TrackedJob {
 public:
  virtual ~TrackedJob() = default;

  virtual int64_t id() const = 0;

  // Starts the thread that runs Run().
  void Start();
  // Asks it to stop and end cancelled; its finished trials stay.
  void Cancel();
  // Asks it to stop and stay unfinished in the store (server shutdown), so
  // that the next server resumes it.
  void Interrupt();
  // Blocks until its thread has finished.
  void Join();

  tunefleet::v1::JobProgress Progress();
  // Grows with every change of the progress.
  uint64_t version();
  // Waits up to `timeout` for progress newer than `*version`; updates
  // `*version` and returns true with the new progress in `*out`.
  bool WaitForUpdate(uint64_t* version, absl::Duration timeout,
                     tunefleet::v1::JobProgress* out);

 protected:
  virtual void Run() = 0;
  // Ends it in `state`: writes the state and message through `store` (the
  // progress's message where `reason` is empty, e.g. an early stop's) and
  // publishes them, with the store's error appended if it failed.
  void Finish(tunefleet::v1::JobState state, const std::string& reason,
              const std::function<absl::Status(const std::string&)>& store);

  absl::Mutex mu_;
  bool cancelled_ ABSL_GUARDED_BY(mu_) = false;
  bool interrupted_ ABSL_GUARDED_BY(mu_) = false;
  tunefleet::v1::JobProgress progress_ ABSL_GUARDED_BY(mu_);
  uint64_t version_ ABSL_GUARDED_BY(mu_) = 0;

 private:
  std::thread thread_;
};

}  // namespace tunefleet::server

#endif  // TUNEFLEET_SERVER_TRACKED_JOB_H_
