#include "dashboard/data_source.h"

#include "absl/time/clock.h"
#include "contract/names.h"
#include "google/protobuf/util/message_differencer.h"

namespace tunefleet::dashboard {

absl::StatusOr<tunefleet::v1::JobProgress> DataSource::Watch(
    int64_t job_id, const ProgressUpdate& update) {
  return PollJob(job_id, update, kWatchPoll);
}

absl::StatusOr<tunefleet::v1::JobProgress> DataSource::PollJob(
    int64_t job_id, const ProgressUpdate& update, absl::Duration every) {
  tunefleet::v1::JobProgress last;
  for (bool first = true;; first = false) {
    absl::StatusOr<tunefleet::v1::JobProgress> now = Job(job_id);
    if (!now.ok()) return now.status();
    if (first ||
        !google::protobuf::util::MessageDifferencer::Equals(*now, last)) {
      if (update) update(*now);
      last = *std::move(now);
    }
    if (contract::IsFinalJobState(last.state())) return last;
    absl::SleepFor(every);
  }
}

}  // namespace tunefleet::dashboard
