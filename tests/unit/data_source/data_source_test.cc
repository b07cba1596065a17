// DataSource's defaults (data_source/data_source.h). Watch reads Job()
// again until the job ends, reports each change once and returns the last
// progress, or Job()'s error. The RecordReader reads come from Fleet(),
// Jobs() and Records(), each read once per source, and choose as
// store::Store does (the fastest reference time, a driver's best records).
#include "data_source/data_source.h"

#include <deque>
#include <utility>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernels_templates/registry.h"

namespace tunefleet::data_source {
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

using tunefleet::v1::TuningRecord;

TuningRecord Record(
    const std::string& workload, const std::string& tmpl, double time_ns,
    int64_t trial_id, const std::string& driver,
    tunefleet::v1::Measurement::Error error = tunefleet::v1::Measurement::OK) {
  TuningRecord r;
  r.set_device_key("dev");
  r.set_workload_key(workload);
  r.set_template_name(tmpl);
  r.set_time_ns(time_ns);
  r.set_trial_id(trial_id);
  r.set_error(error);
  r.mutable_provenance()->set_driver_version(driver);
  return r;
}

// A source of fixed jobs, fleet and records that counts its reads; Records
// answers in pages of two.
class FixedSource : public DataSource {
 public:
  absl::StatusOr<FleetView> Fleet() override {
    ++fleet_reads;
    return fleet;
  }
  absl::StatusOr<std::vector<JobProgress>> Jobs(int64_t limit) override {
    ++jobs_reads;
    EXPECT_EQ(limit, 0);
    return jobs;
  }
  absl::StatusOr<JobProgress> Job(int64_t) override {
    return absl::NotFoundError("no job");
  }
  absl::StatusOr<std::vector<TuningRecord>> Trials(int64_t, int64_t,
                                                   int64_t) override {
    return std::vector<TuningRecord>();
  }
  bool CanCancel() const override { return false; }
  absl::StatusOr<JobProgress> Cancel(int64_t) override {
    return absl::FailedPreconditionError("no");
  }
  absl::Status Records(const RecordQuery& query,
                       const RecordPage& page) override {
    ++records_reads;
    const std::vector<TuningRecord>& all = query.best_only ? best : measured;
    for (size_t i = 0; i < all.size(); i += 2) {
      std::vector<TuningRecord> part;
      for (size_t j = i; j < all.size() && j < i + 2; ++j) {
        if (all[j].device_key() == query.device_key) part.push_back(all[j]);
      }
      if (!part.empty()) page(part);
    }
    return absl::OkStatus();
  }

  FleetView fleet;
  std::vector<JobProgress> jobs;
  std::vector<TuningRecord> best, measured;
  int fleet_reads = 0, jobs_reads = 0, records_reads = 0;
};

std::vector<std::string> Workloads(const std::vector<TuningRecord>& records) {
  std::vector<std::string> out;
  out.reserve(records.size());
  for (const TuningRecord& r : records) {
    out.push_back(r.workload_key() + "/" + r.template_name() + "@" +
                  std::to_string(r.trial_id()));
  }
  return out;
}

TEST(DataSourceRecords, DevicesComeFromOneFleetRead) {
  FixedSource source;
  tunefleet::v1::DeviceInfo gpu;
  gpu.set_device_name("gpu0");
  tunefleet::v1::DriverRevision rev;
  rev.set_revision(1);
  rev.set_driver_version("550.1");
  source.fleet.devices.push_back({"dev", gpu, 1, {rev}});
  source.fleet.devices.push_back({"other", {}, 0, {}});

  absl::StatusOr<std::vector<std::string>> keys = source.DeviceKeys();
  ASSERT_TRUE(keys.ok()) << keys.status();
  EXPECT_EQ(*keys, (std::vector<std::string>{"dev", "other"}));
  absl::StatusOr<tunefleet::v1::DeviceInfo> device = source.GetDevice("dev");
  ASSERT_TRUE(device.ok()) << device.status();
  EXPECT_EQ(device->device_name(), "gpu0");
  absl::StatusOr<std::vector<tunefleet::v1::DriverRevision>> revisions =
      source.DriverRevisions("dev");
  ASSERT_TRUE(revisions.ok()) << revisions.status();
  ASSERT_EQ(revisions->size(), 1u);
  EXPECT_EQ((*revisions)[0].driver_version(), "550.1");

  absl::StatusOr<tunefleet::v1::DeviceInfo> unknown = source.GetDevice("x");
  EXPECT_EQ(unknown.status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(unknown.status().message(), "no device with key 'x'");
  absl::StatusOr<std::vector<tunefleet::v1::DriverRevision>> none =
      source.DriverRevisions("x");
  ASSERT_TRUE(none.ok()) << none.status();
  EXPECT_TRUE(none->empty());
  EXPECT_EQ(source.fleet_reads, 1);
}

TEST(DataSourceRecords, BestRecordsGatherEveryPageOnce) {
  FixedSource source;
  source.best = {Record("a", "t", 5, 1, ""), Record("b", "t", 6, 2, ""),
                 Record("c", "t", 7, 3, "")};
  for (int i = 0; i < 2; ++i) {
    absl::StatusOr<std::vector<TuningRecord>> best = source.BestRecords("dev");
    ASSERT_TRUE(best.ok()) << best.status();
    EXPECT_EQ(Workloads(*best),
              (std::vector<std::string>{"a/t@1", "b/t@2", "c/t@3"}));
  }
  EXPECT_EQ(source.records_reads, 1);
}

TEST(DataSourceRecords, ReferenceTimeIsTheFastestOverTheTasksJobs) {
  FixedSource source;
  auto job = [](const std::string& key, const std::string& workload,
                double reference_ns) {
    JobProgress p;
    p.set_device_key(key);
    p.set_workload_key(workload);
    p.set_template_name("gemm_reference");
    p.set_reference_time_ns(reference_ns);
    return p;
  };
  source.jobs = {job("dev", "w", 900), job("dev", "w", 700), job("dev", "w", 0),
                 job("other", "w", 100), job("dev", "v", 500)};
  absl::StatusOr<std::optional<double>> w =
      source.ReferenceTime("dev", "w", "gemm_reference");
  ASSERT_TRUE(w.ok()) << w.status();
  EXPECT_EQ(*w, std::optional<double>(700));
  absl::StatusOr<std::optional<double>> unmeasured =
      source.ReferenceTime("dev", "u", "gemm_reference");
  ASSERT_TRUE(unmeasured.ok()) << unmeasured.status();
  EXPECT_FALSE(unmeasured->has_value());
  EXPECT_EQ(source.jobs_reads, 1);
}

// The fastest OK record per task measured on the driver (ties: the older
// trial), in BestRecords' order; on the first revision, records without a
// driver version count as its own.
TEST(DataSourceRecords, BestRecordsOnDriverPickEachTasksFastestOnIt) {
  FixedSource source;
  source.best = {Record("a", "t", 1, 10, "new"), Record("b", "t", 2, 11, "")};
  source.measured = {
      Record("a", "t", 9, 1, "old"),
      Record("a", "t", 8, 2, ""),
      Record("a", "t", 1, 10, "new"),
      Record("a", "t", 3, 12, "new"),
      Record("b", "t", 2, 11, ""),
      Record("b", "t", 1, 13, "old", tunefleet::v1::Measurement::RUNTIME_ERROR),
      Record("b", "t", 4, 14, "old"),
      Record("b", "t", 4, 15, "old")};
  absl::StatusOr<std::vector<TuningRecord>> old_first =
      source.BestRecordsOnDriver("dev", "old", /*first_revision=*/true);
  ASSERT_TRUE(old_first.ok()) << old_first.status();
  EXPECT_EQ(Workloads(*old_first),
            (std::vector<std::string>{"a/t@2", "b/t@11"}));
  absl::StatusOr<std::vector<TuningRecord>> old_later =
      source.BestRecordsOnDriver("dev", "old", /*first_revision=*/false);
  ASSERT_TRUE(old_later.ok()) << old_later.status();
  EXPECT_EQ(Workloads(*old_later),
            (std::vector<std::string>{"a/t@1", "b/t@14"}));
  absl::StatusOr<std::vector<TuningRecord>> fresh =
      source.BestRecordsOnDriver("dev", "new", /*first_revision=*/false);
  ASSERT_TRUE(fresh.ok()) << fresh.status();
  EXPECT_EQ(Workloads(*fresh), (std::vector<std::string>{"a/t@10"}));
  // The best and the measured records, read once each.
  EXPECT_EQ(source.records_reads, 2);
}

TEST(DataSourceRecords, TemplateSourcesAreThisBuildsTemplates) {
  FixedSource source;
  const templates::KernelTemplate* t = templates::AllTemplates().front();
  absl::StatusOr<std::string> text =
      source.TemplateSource(std::string(t->name()), t->version());
  ASSERT_TRUE(text.ok()) << text.status();
  EXPECT_EQ(*text, t->source());
  absl::StatusOr<std::string> missing =
      source.TemplateSource(std::string(t->name()), t->version() + 1000);
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(std::string(missing.status().message()),
              ::testing::HasSubstr("is not in this build"));
}

}  // namespace
}  // namespace tunefleet::data_source
