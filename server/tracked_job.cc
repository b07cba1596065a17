#include "server/tracked_job.h"

#include "absl/strings/str_cat.h"

namespace tunefleet::server {

void TrackedJob::Start() {
  thread_ = std::thread([this] { Run(); });
}

void TrackedJob::Join() {
  if (thread_.joinable()) thread_.join();
}

void TrackedJob::Cancel() {
  absl::MutexLock lock(&mu_);
  cancelled_ = true;
}

void TrackedJob::Interrupt() {
  absl::MutexLock lock(&mu_);
  cancelled_ = true;
  interrupted_ = true;
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
  ++version_;
}

}  // namespace tunefleet::server
