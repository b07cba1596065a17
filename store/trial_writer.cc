#include "store/trial_writer.h"

#include <algorithm>
#include <utility>

#include "absl/status/status.h"
#include "logging/log.h"

namespace tunefleet::store {

TrialWriter::TrialWriter(Store* store, Options options)
    : store_(store), options_(options) {
  thread_ = std::thread([this] { Loop(); });
}

TrialWriter::~TrialWriter() { Stop(); }

void TrialWriter::Lease(int64_t trial_id, std::string agent) {
  TrialWrite w;
  w.kind = TrialWrite::Kind::kLease;
  w.trial_id = trial_id;
  w.agent = std::move(agent);
  Push(std::move(w), nullptr);
}

void TrialWriter::Requeue(int64_t trial_id, int attempt) {
  TrialWrite w;
  w.kind = TrialWrite::Kind::kRequeue;
  w.trial_id = trial_id;
  w.lease.attempt = attempt;
  Push(std::move(w), nullptr);
}

void TrialWriter::Complete(int64_t trial_id,
                           tunefleet::v1::Measurement measurement,
                           double time_ns, double gflops, OnCommitted done,
                           TrialLease lease) {
  TrialWrite w;
  w.kind = TrialWrite::Kind::kComplete;
  w.trial_id = trial_id;
  w.lease = std::move(lease);
  w.measurement = std::move(measurement);
  w.time_ns = time_ns;
  w.gflops = gflops;
  Push(std::move(w), std::move(done));
}

void TrialWriter::Push(TrialWrite write, OnCommitted done) {
  {
    absl::MutexLock lock(&mu_);
    if (!stopped_) {
      queue_.push_back(std::move(write));
      callbacks_.push_back(std::move(done));
      ++queued_;
      return;
    }
  }
  // After Stop(): a batch of one, on the caller's thread.
  std::vector<TrialWrite> one;
  one.push_back(std::move(write));
  std::vector<OnCommitted> callback;
  callback.push_back(std::move(done));
  WriteBatch(std::move(one), std::move(callback));
}

void TrialWriter::Loop() {
  while (true) {
    std::vector<TrialWrite> writes;
    std::vector<OnCommitted> callbacks;
    {
      absl::MutexLock lock(&mu_);
      auto ready = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
        return stopping_ || !queue_.empty();
      };
      mu_.Await(absl::Condition(&ready));
      if (queue_.empty()) {  // stopping with nothing left
        stopped_ = true;
        return;
      }
      // Let the batch fill for up to max_delay after its first write.
      auto full = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
        return stopping_ || flush_ || queue_.size() >= options_.max_batch;
      };
      mu_.AwaitWithTimeout(absl::Condition(&full), options_.max_delay);
      flush_ = false;
      writes.swap(queue_);
      callbacks.swap(callbacks_);
    }
    WriteBatch(std::move(writes), std::move(callbacks));
  }
}

absl::StatusOr<std::vector<bool>> TrialWriter::WriteHolding(
    const std::vector<TrialWrite>& writes) {
  absl::StatusOr<std::vector<bool>> changed = store_->WriteTrials(writes);
  absl::Duration delay = options_.full_disk_first_retry;
  bool told = false;
  while (absl::IsResourceExhausted(changed.status())) {
    if (!told) {
      logging::Warn(
          "[server] holding {} trial writes until the disk has room: {}",
          writes.size(), changed.status().ToString());
      told = true;
    }
    {
      absl::MutexLock lock(&mu_);
      ++full_disk_retries_;
      if (mu_.AwaitWithTimeout(absl::Condition(&stopping_), delay)) break;
    }
    delay = std::min(delay * 2, options_.full_disk_max_retry);
    changed = store_->WriteTrials(writes);
  }
  if (told && changed.ok()) {
    logging::Info("[server] disk has room again: {} trial writes committed",
                  writes.size());
  }
  return changed;
}

void TrialWriter::WriteBatch(std::vector<TrialWrite> writes,
                             std::vector<OnCommitted> callbacks) {
  absl::StatusOr<std::vector<bool>> changed = WriteHolding(writes);
  for (size_t i = 0; i < callbacks.size(); ++i) {
    if (!callbacks[i]) continue;
    if (changed.ok()) {
      callbacks[i]((*changed)[i]);
    } else {
      callbacks[i](changed.status());
    }
  }
  absl::MutexLock lock(&mu_);
  committed_ += static_cast<int64_t>(writes.size());
  ++batches_;
}

void TrialWriter::Flush() {
  absl::MutexLock lock(&mu_);
  const int64_t target = queued_;
  flush_ = true;
  auto done = [this, target]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return committed_ >= target || stopped_;
  };
  mu_.Await(absl::Condition(&done));
}

void TrialWriter::Stop() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  if (thread_.joinable()) thread_.join();
}

int64_t TrialWriter::batches() const {
  absl::MutexLock lock(&mu_);
  return batches_;
}

int64_t TrialWriter::full_disk_retries() const {
  absl::MutexLock lock(&mu_);
  return full_disk_retries_;
}

}  // namespace tunefleet::store
