#include "server/watch_hub.h"

#include <optional>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "auth/grpc_status.h"
#include "contract/names.h"
#include "server/refused_call.h"

namespace tunefleet::server {
namespace {

// How often every watched job is read even when it did not change: why
// it waits (no agent of its key connected) depends on the fleet.
constexpr absl::Duration kWatchRecheck = absl::Milliseconds(500);

using ProgressPtr = std::shared_ptr<const tunefleet::v1::JobProgress>;

}  // namespace

// One WatchJob call. Writes one message at a time: the newest progress
// offered while a write was in flight follows it; the stream finishes
// after the write of a final progress (or its one message, for a job that
// is not live). Lifetime: made by Watch(), deleted in OnDone() once gRPC
// is done with the call, after leaving the hub.
class WatchHub::Stream final : public WatchReactor {
 public:
  Stream(WatchHub* hub, int64_t job_id, std::string caller)
      : hub_(hub), job_id_(job_id), caller_(std::move(caller)) {}

  int64_t job_id() const { return job_id_; }
  const std::string& caller() const { return caller_; }

  // Progress of the job at `version`: written unless the stream has been
  // offered this version (and waiting reason) or a newer one already.
  void Offer(ProgressPtr progress, uint64_t version) {
    {
      absl::MutexLock lock(&mu_);
      if (finishing_) return;
      if (offered_ && (version < offered_version_ ||
                       (version == offered_version_ &&
                        progress->waiting_reason() == offered_waiting_))) {
        return;
      }
      offered_ = true;
      offered_version_ = version;
      offered_waiting_ = progress->waiting_reason();
      if (writing_) {
        next_ = std::move(progress);
        return;
      }
      writing_ = true;
      current_ = std::move(progress);
    }
    StartWrite(current_.get());
  }

  // The one message of a job that is not live; the stream ends after it.
  void WriteOnce(tunefleet::v1::JobProgress progress) {
    {
      absl::MutexLock lock(&mu_);
      once_ = true;
      writing_ = true;
      current_ = std::make_shared<const tunefleet::v1::JobProgress>(
          std::move(progress));
    }
    StartWrite(current_.get());
  }

  // Ends the call with `status`, after the write in flight if any.
  void End(grpc::Status status) {
    {
      absl::MutexLock lock(&mu_);
      if (finishing_) return;
      finishing_ = true;
      if (writing_) {
        end_status_ = std::move(status);
        return;  // OnWriteDone finishes
      }
    }
    Finish(std::move(status));
  }

  void OnWriteDone(bool ok) override {
    enum { kWait, kWrite, kFinish } then = kWait;
    grpc::Status status = grpc::Status::OK;
    {
      absl::MutexLock lock(&mu_);
      writing_ = false;
      const bool final = once_ || contract::IsFinalJobState(current_->state());
      current_.reset();
      if (finishing_) {
        then = kFinish;
        status = end_status_;
      } else if (!ok || final) {
        finishing_ = true;  // the job ended, or the client went away
        then = kFinish;
      } else if (next_ != nullptr) {
        writing_ = true;
        current_ = std::move(next_);
        next_.reset();
        then = kWrite;
      }
    }
    if (then == kWrite) StartWrite(current_.get());
    if (then == kFinish) Finish(std::move(status));
  }

  void OnCancel() override { End(grpc::Status::CANCELLED); }

  void OnDone() override {
    hub_->Remove(this);
    delete this;
  }

 private:
  WatchHub* const hub_;
  const int64_t job_id_;
  const std::string caller_;
  absl::Mutex mu_;
  bool writing_ ABSL_GUARDED_BY(mu_) = false;
  bool finishing_ ABSL_GUARDED_BY(mu_) = false;  // Finish called or due
  bool once_ ABSL_GUARDED_BY(mu_) = false;
  grpc::Status end_status_ ABSL_GUARDED_BY(mu_);
  // The message being written (gRPC reads it until OnWriteDone); set
  // only by whoever turns writing_ on, reset in OnWriteDone.
  ProgressPtr current_;
  ProgressPtr next_ ABSL_GUARDED_BY(mu_);
  bool offered_ ABSL_GUARDED_BY(mu_) = false;
  uint64_t offered_version_ ABSL_GUARDED_BY(mu_) = 0;
  std::string offered_waiting_ ABSL_GUARDED_BY(mu_);
};

WatchReactor* RefusedWatchStream(grpc::Status status) {
  return RefusedCall<WatchReactor>(std::move(status));
}

WatchHub::WatchHub(JobManager* jobs, CurrentFn current,
                   FleetStateFn add_fleet_state, int max_streams_per_caller)
    : jobs_(jobs),
      current_(std::move(current)),
      add_fleet_state_(std::move(add_fleet_state)),
      max_per_caller_(max_streams_per_caller),
      thread_([this] { Loop(); }) {}

WatchHub::~WatchHub() { Stop(); }

int WatchHub::streams() {
  absl::MutexLock lock(&mu_);
  return streams_;
}

WatchReactor* WatchHub::Watch(int64_t job_id, const std::string& caller) {
  {
    absl::MutexLock lock(&mu_);
    if (stopping_) {
      return RefusedWatchStream(grpc::Status(grpc::StatusCode::UNAVAILABLE,
                                             "the server is stopping"));
    }
    int& held = per_caller_[caller];
    if (held >= max_per_caller_) {
      const std::string who =
          caller.empty() ? std::string("every caller (no authentication)")
                         : absl::StrCat("token '", caller, "'");
      return RefusedWatchStream(grpc::Status(
          grpc::StatusCode::RESOURCE_EXHAUSTED,
          absl::StrCat(who, " holds ", held,
                       " WatchJob streams, the server's limit of streams per "
                       "token (tunefleet-server --max-watch-streams ",
                       max_per_caller_, "); end one first")));
    }
    ++held;
    ++streams_;
  }
  auto* stream = new Stream(this, job_id, caller);  // deletes itself
  if (std::shared_ptr<TrackedJob> job = jobs_->FindTracked(job_id)) {
    Register(stream, job);
    return stream;
  }
  // Ended, or of an earlier server run: its progress once.
  absl::StatusOr<tunefleet::v1::JobProgress> progress = current_(job_id);
  if (progress.ok()) {
    stream->WriteOnce(*std::move(progress));
  } else {
    stream->End(auth::ToGrpc(progress.status()));
  }
  return stream;
}

void WatchHub::Register(Stream* stream,
                        const std::shared_ptr<TrackedJob>& job) {
  const int64_t id = job->id();
  bool add_listener = false;
  {
    absl::MutexLock lock(&mu_);
    Watched& w = watched_[id];
    if (!w.job) w.job = job;
    w.streams.insert(stream);
    if (w.listener == kNoListener) {
      w.listener = kPending;
      add_listener = true;
    }
  }
  if (add_listener) {
    // Never with the hub's lock: a listener runs under the job's lock and
    // takes the hub's.
    const int listener = job->AddListener([this, id] { Changed(id); });
    bool stale = false;
    {
      absl::MutexLock lock(&mu_);
      auto it = watched_.find(id);
      if (it != watched_.end() && it->second.listener == kPending) {
        it->second.listener = listener;
      } else {
        stale = true;  // every stream left meanwhile
      }
    }
    if (stale) job->RemoveListener(listener);
  }
  // The progress now, to this stream (the hub offers later changes).
  Snapshot now = Read(*job);
  absl::MutexLock lock(&mu_);
  auto it = watched_.find(id);
  if (it != watched_.end() && it->second.streams.contains(stream)) {
    stream->Offer(std::move(now.progress), now.version);
  }
}

WatchHub::Snapshot WatchHub::Read(TrackedJob& job) const {
  // The version first: progress read after it is at least that new.
  const uint64_t version = job.version();
  tunefleet::v1::JobProgress progress = job.Progress();
  add_fleet_state_(&progress);
  return {
      std::make_shared<const tunefleet::v1::JobProgress>(std::move(progress)),
      version};
}

void WatchHub::Changed(int64_t job_id) {
  absl::MutexLock lock(&mu_);
  changed_.insert(job_id);
}

void WatchHub::Remove(Stream* stream) {
  std::shared_ptr<TrackedJob> job;
  int listener = kNoListener;
  {
    absl::MutexLock lock(&mu_);
    --streams_;
    if (auto it = per_caller_.find(stream->caller());
        it != per_caller_.end() && --it->second <= 0) {
      per_caller_.erase(it);
    }
    auto it = watched_.find(stream->job_id());
    if (it == watched_.end() || it->second.streams.erase(stream) == 0) return;
    if (!it->second.streams.empty()) return;
    job = std::move(it->second.job);
    listener = it->second.listener;
    watched_.erase(it);
  }
  if (listener >= 0) job->RemoveListener(listener);
}

void WatchHub::Offer(
    const std::map<int64_t, std::shared_ptr<TrackedJob>>& jobs) {
  for (const auto& [id, job] : jobs) {
    const Snapshot now = Read(*job);
    absl::MutexLock lock(&mu_);
    auto it = watched_.find(id);
    if (it == watched_.end()) continue;
    for (Stream* stream : it->second.streams) {
      stream->Offer(now.progress, now.version);
    }
  }
}

void WatchHub::Loop() {
  absl::Time next_recheck = absl::Now() + kWatchRecheck;
  while (true) {
    std::map<int64_t, std::shared_ptr<TrackedJob>> jobs;
    {
      absl::MutexLock lock(&mu_);
      auto wake = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
        return stopping_ || !changed_.empty();
      };
      mu_.AwaitWithDeadline(absl::Condition(&wake), next_recheck);
      if (stopping_) return;
      if (absl::Now() >= next_recheck) {
        next_recheck = absl::Now() + kWatchRecheck;
        for (const auto& [id, w] : watched_) jobs[id] = w.job;
      }
      for (int64_t id : changed_) {
        if (auto it = watched_.find(id); it != watched_.end()) {
          jobs[id] = it->second.job;
        }
      }
      changed_.clear();
    }
    Offer(jobs);
  }
}

void WatchHub::Stop() {
  {
    absl::MutexLock lock(&mu_);
    if (stopping_) return;
    stopping_ = true;
  }
  if (thread_.joinable()) thread_.join();
  absl::MutexLock lock(&mu_);
  for (auto& [id, w] : watched_) {
    for (Stream* stream : w.streams) stream->End(grpc::Status::OK);
  }
}

}  // namespace tunefleet::server
