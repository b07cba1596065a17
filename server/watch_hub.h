// WatchJob's streams on gRPC's callback API: no thread per stream. One
// thread (the hub's) reads a watched job's progress when it changed (the
// job's listener, tracked_job.h) or every 500 ms (why the job waits: an
// agent of its key connected or left), once per job however many streams
// watch it, and offers it to each stream; a stream writes the newest
// progress it was offered once its previous write is done (a slow reader
// skips intermediate progress, never the final one) and ends after the
// job's final state. Streams per caller (token) are limited
// (docs/SERVER_LIMITS.md).
#ifndef TUNEFLEET_SERVER_WATCH_HUB_H_
#define TUNEFLEET_SERVER_WATCH_HUB_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "grpcpp/grpcpp.h"
#include "server/job_manager.h"
#include "tunefleet/v1/tuning.pb.h"

namespace tunefleet::server {

using WatchReactor = grpc::ServerWriteReactor<tunefleet::v1::JobProgress>;

// Thread-safe. `jobs` must outlive the hub; Stop() (or the destructor) runs
// before the gRPC server is shut down.
class WatchHub {
 public:
  // A job's progress for a watcher: `current` for a job not live (ended,
  // or of an earlier server run; NOT_FOUND when unknown), `add_fleet_state`
  // adds what only the scheduler knows to any progress.
  using CurrentFn =
      std::function<absl::StatusOr<tunefleet::v1::JobProgress>(int64_t)>;
  using FleetStateFn = std::function<void(tunefleet::v1::JobProgress*)>;

  // `max_streams_per_caller` >= 1: WatchJob streams one caller (one token
  // name; every caller is "" without authentication) may hold open.
  WatchHub(JobManager* jobs, CurrentFn current, FleetStateFn add_fleet_state,
           int max_streams_per_caller);
  ~WatchHub();
  WatchHub(const WatchHub&) = delete;
  WatchHub& operator=(const WatchHub&) = delete;

  // The reactor of one WatchJob call of `caller` for `job_id` (checked
  // before: a job_id >= 1). A live job's progress streams until it ends; a
  // job that is not live gets its progress once (NOT_FOUND if unknown).
  // RESOURCE_EXHAUSTED, naming the limit and its flag, when `caller`
  // already holds max_streams_per_caller streams; UNAVAILABLE once stopped.
  WatchReactor* Watch(int64_t job_id, const std::string& caller);

  // Ends every stream (OK, after a write in flight) and refuses new ones.
  // Idempotent.
  void Stop();
  // Streams open now.
  int streams();

 private:
  class Stream;
  // What the hub keeps per watched job.
  struct Watched {
    std::shared_ptr<TrackedJob> job;
    int listener = kNoListener;  // on the job; kPending while being added
    std::set<Stream*> streams;
  };
  static constexpr int kNoListener = -1;
  static constexpr int kPending = -2;

  // The job's listener: its progress changed.
  void Changed(int64_t job_id);
  // A stream's call is done (OnDone): it leaves the hub.
  void Remove(Stream* stream);
  // Registers a stream of a live job and offers it the progress now.
  void Register(Stream* stream, const std::shared_ptr<TrackedJob>& job);
  // A job's progress now, with the fleet's state, shared by the streams
  // it is offered to, and the job's version read before it (the progress
  // is at least that new).
  struct Snapshot {
    std::shared_ptr<const tunefleet::v1::JobProgress> progress;
    uint64_t version = 0;
  };
  Snapshot Read(TrackedJob& job) const;
  // Reads each job's progress once and offers it to its streams.
  void Offer(const std::map<int64_t, std::shared_ptr<TrackedJob>>& jobs);
  void Loop();

  JobManager* const jobs_;
  const CurrentFn current_;
  const FleetStateFn add_fleet_state_;
  const int max_per_caller_;
  absl::Mutex mu_;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::map<int64_t, Watched> watched_ ABSL_GUARDED_BY(mu_);
  std::set<int64_t> changed_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, int> per_caller_ ABSL_GUARDED_BY(mu_);
  int streams_ ABSL_GUARDED_BY(mu_) = 0;
  std::thread thread_;  // last: starts once the rest is set
};

// A reactor that ends its WatchJob call at once with `status` (a refused
// call); it deletes itself.
WatchReactor* RefusedWatchStream(grpc::Status status);

}  // namespace tunefleet::server

#endif  // TUNEFLEET_SERVER_WATCH_HUB_H_
