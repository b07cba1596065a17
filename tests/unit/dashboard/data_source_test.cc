// DataSource::Watch's default (dashboard/data_source.h): it reads Job()
// again until the job ends, reports each change once and returns the last
// progress, or Job()'s error.
#include "dashboard/data_source.h"

#include <deque>
#include <utility>
#include <vector>

#include "gtest/gtest.h"

namespace tunefleet::dashboard {
namespace {

using tunefleet::v1::JobProgress;

// A source whose Job() answers the queued reads in turn; a read past them
// fails the test (a watch that did not stop). Watch calls no other read.
class QueuedJobSource : public DataSource {
 public:
  explicit QueuedJobSource(std::deque<absl::StatusOr<JobProgress>> reads)
      : reads_(std::move(reads)) {}

  absl::StatusOr<JobProgress> Job(int64_t job_id) override {
    ++job_reads;
    last_job_id = job_id;
    if (reads_.empty()) {
      ADD_FAILURE() << "read " << job_reads << " is past the queued reads";
      return absl::InternalError("read past the queued reads");
    }
    absl::StatusOr<JobProgress> next = std::move(reads_.front());
    reads_.pop_front();
    return next;
  }
  absl::StatusOr<FleetView> Fleet() override { return FleetView(); }
  absl::StatusOr<std::vector<JobProgress>> Jobs(int64_t) override {
    return std::vector<JobProgress>();
  }
  absl::StatusOr<std::vector<tunefleet::v1::TuningRecord>> Trials(
      int64_t, int64_t, int64_t) override {
    return std::vector<tunefleet::v1::TuningRecord>();
  }
  bool CanCancel() const override { return false; }
  absl::StatusOr<JobProgress> Cancel(int64_t) override {
    return absl::FailedPreconditionError("no");
  }

  int job_reads = 0;
  int64_t last_job_id = 0;

 private:
  std::deque<absl::StatusOr<JobProgress>> reads_;
};

JobProgress Progress(tunefleet::v1::JobState state, uint32_t done) {
  JobProgress p;
  p.set_job_id(7);
  p.set_state(state);
  p.set_trials_done(done);
  p.set_trials_total(4);
  return p;
}

TEST(DataSourceWatch, ReportsEachChangeOnceAndReturnsTheEndedJob) {
  QueuedJobSource source({Progress(tunefleet::v1::JOB_STATE_RUNNING, 1),
                          Progress(tunefleet::v1::JOB_STATE_RUNNING, 1),
                          Progress(tunefleet::v1::JOB_STATE_RUNNING, 3),
                          Progress(tunefleet::v1::JOB_STATE_DONE, 4)});
  std::vector<uint32_t> seen;
  absl::StatusOr<JobProgress> last = source.PollJob(
      7, [&](const JobProgress& p) { seen.push_back(p.trials_done()); },
      absl::ZeroDuration());
  ASSERT_TRUE(last.ok()) << last.status();
  EXPECT_EQ(last->state(), tunefleet::v1::JOB_STATE_DONE);
  EXPECT_EQ(last->trials_done(), 4u);
  // The unchanged second read is not reported again.
  EXPECT_EQ(seen, (std::vector<uint32_t>{1, 3, 4}));
  EXPECT_EQ(source.job_reads, 4);
  EXPECT_EQ(source.last_job_id, 7);
}

// Watch's default is PollJob: an ended job is read once.
TEST(DataSourceWatch, AnEndedJobIsReadOnce) {
  QueuedJobSource source({Progress(tunefleet::v1::JOB_STATE_CANCELLED, 2)});
  int updates = 0;
  absl::StatusOr<JobProgress> last =
      source.Watch(7, [&](const JobProgress&) { ++updates; });
  ASSERT_TRUE(last.ok()) << last.status();
  EXPECT_EQ(last->state(), tunefleet::v1::JOB_STATE_CANCELLED);
  EXPECT_EQ(updates, 1);
  EXPECT_EQ(source.job_reads, 1);
}

TEST(DataSourceWatch, AReadErrorEndsTheWatchWithIt) {
  QueuedJobSource source({Progress(tunefleet::v1::JOB_STATE_RUNNING, 1),
                          absl::NotFoundError("no job 7")});
  int updates = 0;
  absl::StatusOr<JobProgress> last = source.PollJob(
      7, [&](const JobProgress&) { ++updates; }, absl::ZeroDuration());
  EXPECT_EQ(last.status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(updates, 1);
  EXPECT_EQ(source.job_reads, 2);
}

}  // namespace
}  // namespace tunefleet::dashboard
