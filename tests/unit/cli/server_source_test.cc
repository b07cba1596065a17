// ServerDataSource (cli/server_source.h) against a real tunefleet server on
// loopback over a database file: the jobs it lists (over several ListJobs
// pages), a job, its trials, the fleet and the tuning records (page by
// page) are what dashboard::StoreDataSource reads from the same database;
// Cancel cancels through
// CancelJob and answers the server's refusals.
#include "cli/server_source.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "dashboard/store_source.h"
#include "google/protobuf/util/message_differencer.h"
#include "gtest/gtest.h"
#include "server/server.h"
#include "store/store.h"
#include "tests/support/small_job.h"
#include "tests/support/temp_store.h"
#include "tests/support/test_device.h"

namespace tunefleet::cli {
namespace {

using google::protobuf::util::MessageDifferencer;
using tunefleet::v1::JobProgress;
using tunefleet::v1::Measurement;
using tunefleet::v1::TuningRecord;

constexpr char kKey[] = "test-gpu";
constexpr int kJobs = 5;

// The jobs but the queued one's waiting_reason, which only a server knows
// (no agent connected here); that one must say it.
std::vector<JobProgress> WithoutWaitingReason(std::vector<JobProgress> jobs) {
  for (JobProgress& p : jobs) {
    if (p.state() == tunefleet::v1::JOB_STATE_QUEUED) {
      EXPECT_NE(p.waiting_reason(), "") << p.DebugString();
      p.clear_waiting_reason();
    }
  }
  return jobs;
}

template <typename Message>
void ExpectSameMessages(const std::vector<Message>& got,
                        const std::vector<Message>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_TRUE(MessageDifferencer::Equals(got[i], want[i]))
        << "#" << i << ":\n"
        << got[i].DebugString() << "want:\n"
        << want[i].DebugString();
  }
}

class ServerSourceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // Jobs written as an earlier server would have left them, one with
    // measured, failed, cancelled and pending trials.
    store::Store* store = temp_.store();
    ASSERT_NE(store, nullptr);
    ASSERT_TRUE(store->UpsertDevice(kKey, testing::TestDevice()).ok());
    for (int i = 0; i < kJobs; ++i) {
      absl::StatusOr<int64_t> id =
          store->CreateJob(testing::SmallGemmJob(8, i + 1, kKey));
      ASSERT_TRUE(id.ok()) << id.status();
      job_ids_.push_back(*id);
    }
    // Two naive reference runs of the one task: the fastest is its
    // reference time.
    ASSERT_TRUE(store->SetJobReference(job_ids_[0], 7000).ok());
    ASSERT_TRUE(store->SetJobReference(job_ids_[1], 5000).ok());
    absl::StatusOr<std::vector<int64_t>> trials = store->InsertTrials(
        job_ids_[1], {{0, "c0"}, {1, "c1"}, {2, "c2"}, {3, "c3"}, {4, "c4"}});
    ASSERT_TRUE(trials.ok()) << trials.status();
    const Measurement::Error errors[] = {Measurement::OK, Measurement::OK,
                                         Measurement::COMPILE_ERROR,
                                         Measurement::CANCELLED};
    for (int t = 0; t < 4; ++t) {
      Measurement m;
      m.set_trial_id((*trials)[t]);
      m.set_error(errors[t]);
      const double ns = errors[t] == Measurement::OK ? 1000.0 + t : 0;
      if (ns > 0) m.add_times_ns(ns);
      ASSERT_TRUE(
          store->CompleteTrial((*trials)[t], m, ns, ns > 0 ? 1 : 0).ok());
    }
    // Ended, but the one to cancel: a queued job's progress from a server
    // also says why it waits, which a database cannot know.
    for (int i = 0; i < kJobs; ++i) {
      if (i == 2) continue;
      ASSERT_TRUE(store
                      ->SetJobState(job_ids_[i],
                                    i == 3 ? tunefleet::v1::JOB_STATE_FAILED
                                           : tunefleet::v1::JOB_STATE_DONE,
                                    i == 3 ? "the test says so" : "")
                      .ok());
    }
    temp_.Close();

    // A server that leaves them as they are (no resume): what it answers
    // for them comes from the same rows.
    server::ServerOptions options;
    options.listen = "127.0.0.1:0";
    options.db_path = temp_.path();
    options.no_auth = true;
    options.resume_jobs = false;
    options.verbose = false;
    options.revalidate_top = 0;
    absl::StatusOr<std::unique_ptr<server::Server>> server =
        server::Server::Start(options);
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = *std::move(server);
    stored_ = std::make_unique<dashboard::StoreDataSource>(&server_->store());
    // Two jobs a page: Jobs() follows the server's pages.
    absl::StatusOr<std::unique_ptr<ServerDataSource>> source =
        ServerDataSource::Dial(server_->address(), {}, /*page_size=*/2);
    ASSERT_TRUE(source.ok()) << source.status();
    source_ = *std::move(source);
  }

  void TearDown() override {
    source_.reset();
    stored_.reset();
    if (server_) server_->Shutdown();
    server_.reset();
  }

  testing::TempStore temp_{"server_source"};
  std::vector<int64_t> job_ids_;
  std::unique_ptr<server::Server> server_;
  std::unique_ptr<dashboard::StoreDataSource> stored_;
  std::unique_ptr<ServerDataSource> source_;
};

TEST_F(ServerSourceTest, ListsTheStoresJobsOverPages) {
  for (int64_t limit : {50, kJobs, 3, 1}) {
    SCOPED_TRACE(limit);
    absl::StatusOr<std::vector<JobProgress>> got = source_->Jobs(limit);
    absl::StatusOr<std::vector<JobProgress>> want = stored_->Jobs(limit);
    ASSERT_TRUE(got.ok()) << got.status();
    ASSERT_TRUE(want.ok()) << want.status();
    EXPECT_EQ(got->size(), std::min<size_t>(limit, kJobs));
    ExpectSameMessages(WithoutWaitingReason(*got), *want);
  }
  absl::StatusOr<std::vector<JobProgress>> all = source_->Jobs(50);
  ASSERT_TRUE(all.ok()) << all.status();
  ASSERT_EQ(all->size(), static_cast<size_t>(kJobs));
  EXPECT_EQ(all->front().job_id(), job_ids_.back());  // newest first
  EXPECT_EQ((*all)[kJobs - 2].trials_done(), 3u);     // not the cancelled
}

TEST_F(ServerSourceTest, ReadsAJobItsTrialsAndTheFleetAsStored) {
  absl::StatusOr<JobProgress> got = source_->Job(job_ids_[1]);
  absl::StatusOr<JobProgress> want = stored_->Job(job_ids_[1]);
  ASSERT_TRUE(got.ok()) << got.status();
  ASSERT_TRUE(want.ok()) << want.status();
  EXPECT_TRUE(MessageDifferencer::Equals(*got, *want))
      << got->DebugString() << "want:\n"
      << want->DebugString();
  EXPECT_EQ(source_->Job(9999).status().code(), absl::StatusCode::kNotFound);

  absl::StatusOr<std::vector<TuningRecord>> trials =
      source_->Trials(job_ids_[1], 0, 100);
  absl::StatusOr<std::vector<TuningRecord>> stored_trials =
      stored_->Trials(job_ids_[1], 0, 100);
  ASSERT_TRUE(trials.ok()) << trials.status();
  ASSERT_TRUE(stored_trials.ok()) << stored_trials.status();
  EXPECT_EQ(trials->size(), 3u);  // done, the cancelled one left out
  ExpectSameMessages(*trials, *stored_trials);
  ASSERT_FALSE(trials->empty());
  // After the first, one at most.
  trials = source_->Trials(job_ids_[1], trials->front().trial_id(), 1);
  stored_trials =
      stored_->Trials(job_ids_[1], stored_trials->front().trial_id(), 1);
  ASSERT_TRUE(trials.ok()) << trials.status();
  ASSERT_TRUE(stored_trials.ok()) << stored_trials.status();
  EXPECT_EQ(trials->size(), 1u);
  ExpectSameMessages(*trials, *stored_trials);

  absl::StatusOr<data_source::FleetView> fleet = source_->Fleet();
  absl::StatusOr<data_source::FleetView> stored_fleet = stored_->Fleet();
  ASSERT_TRUE(fleet.ok()) << fleet.status();
  ASSERT_TRUE(stored_fleet.ok()) << stored_fleet.status();
  EXPECT_TRUE(fleet->live);
  ASSERT_EQ(fleet->devices.size(), stored_fleet->devices.size());
  for (size_t i = 0; i < fleet->devices.size(); ++i) {
    EXPECT_EQ(fleet->devices[i].device_key,
              stored_fleet->devices[i].device_key);
    EXPECT_TRUE(MessageDifferencer::Equals(fleet->devices[i].device,
                                           stored_fleet->devices[i].device));
    EXPECT_EQ(fleet->devices[i].connected_agents, 0);
  }
  EXPECT_TRUE(fleet->agents.empty());  // none connected
}

// Every page of Records() in order, and how many pages came.
std::vector<TuningRecord> AllRecords(data_source::DataSource& source,
                                     const data_source::RecordQuery& query,
                                     int* pages) {
  std::vector<TuningRecord> all;
  *pages = 0;
  absl::Status status =
      source.Records(query, [&](const std::vector<TuningRecord>& page) {
        EXPECT_FALSE(page.empty());
        if (query.page_size > 0) {
          EXPECT_LE(page.size(), query.page_size);
        }
        all.insert(all.end(), page.begin(), page.end());
        ++*pages;
      });
  EXPECT_TRUE(status.ok()) << status;
  return all;
}

TEST_F(ServerSourceTest, ReadsTheStoresRecordsPageByPage) {
  for (bool best_only : {false, true}) {
    for (uint32_t page_size : {0u, 1u}) {
      SCOPED_TRACE(::testing::Message()
                   << "best_only " << best_only << ", page_size " << page_size);
      data_source::RecordQuery query;
      query.device_key = kKey;
      query.best_only = best_only;
      query.page_size = page_size;
      int pages = 0, stored_pages = 0;
      std::vector<TuningRecord> got = AllRecords(*source_, query, &pages);
      std::vector<TuningRecord> want =
          AllRecords(*stored_, query, &stored_pages);
      ASSERT_FALSE(want.empty());
      ExpectSameMessages(got, want);
      // One record a page when asked, else all in one.
      EXPECT_EQ(pages, page_size == 1 ? static_cast<int>(want.size()) : 1);
      EXPECT_EQ(stored_pages, pages);
    }
  }
  // Every record is of job 1, the one with finished trials: at least its
  // two OK and its COMPILE_ERROR.
  data_source::RecordQuery all;
  all.best_only = false;
  int pages = 0;
  const std::vector<TuningRecord> records = AllRecords(*source_, all, &pages);
  EXPECT_GE(records.size(), 3u);
  for (const TuningRecord& r : records) EXPECT_EQ(r.job_id(), job_ids_[1]);
}

// The emitter's reads (data_source::RecordReader) through the server,
// DataSource's defaults over its reads, answer as the store's own do.
TEST_F(ServerSourceTest, RecordReadsAnswerAsTheStoresOwn) {
  absl::StatusOr<std::vector<std::string>> keys = source_->DeviceKeys();
  ASSERT_TRUE(keys.ok()) << keys.status();
  absl::StatusOr<std::vector<std::string>> stored_keys = stored_->DeviceKeys();
  ASSERT_TRUE(stored_keys.ok()) << stored_keys.status();
  EXPECT_EQ(*keys, *stored_keys);
  EXPECT_EQ(*keys, std::vector<std::string>{kKey});

  absl::StatusOr<tunefleet::v1::DeviceInfo> device = source_->GetDevice(kKey);
  ASSERT_TRUE(device.ok()) << device.status();
  absl::StatusOr<tunefleet::v1::DeviceInfo> stored_device =
      stored_->GetDevice(kKey);
  ASSERT_TRUE(stored_device.ok()) << stored_device.status();
  EXPECT_TRUE(MessageDifferencer::Equals(*device, *stored_device))
      << device->DebugString() << "want:\n"
      << stored_device->DebugString();
  EXPECT_EQ(source_->GetDevice("no-such-key").status().code(),
            absl::StatusCode::kNotFound);

  absl::StatusOr<std::vector<TuningRecord>> best = source_->BestRecords(kKey);
  ASSERT_TRUE(best.ok()) << best.status();
  absl::StatusOr<std::vector<TuningRecord>> stored_best =
      stored_->BestRecords(kKey);
  ASSERT_TRUE(stored_best.ok()) << stored_best.status();
  ASSERT_FALSE(stored_best->empty());
  ExpectSameMessages(*best, *stored_best);

  for (const TuningRecord& r : *stored_best) {
    absl::StatusOr<std::optional<double>> reference =
        source_->ReferenceTime(kKey, r.workload_key(), r.template_name());
    ASSERT_TRUE(reference.ok()) << reference.status();
    absl::StatusOr<std::optional<double>> stored_reference =
        stored_->ReferenceTime(kKey, r.workload_key(), r.template_name());
    ASSERT_TRUE(stored_reference.ok()) << stored_reference.status();
    EXPECT_EQ(*reference, *stored_reference) << r.workload_key();
    EXPECT_EQ(*reference, std::optional<double>(5000)) << r.workload_key();
  }
  absl::StatusOr<std::optional<double>> unmeasured =
      source_->ReferenceTime(kKey, "gemm:M=1,N=1,K=1", "gemm_tiled");
  ASSERT_TRUE(unmeasured.ok()) << unmeasured.status();
  EXPECT_FALSE(unmeasured->has_value());

  absl::StatusOr<std::vector<tunefleet::v1::DriverRevision>> revisions =
      source_->DriverRevisions(kKey);
  ASSERT_TRUE(revisions.ok()) << revisions.status();
  absl::StatusOr<std::vector<tunefleet::v1::DriverRevision>> stored_revisions =
      stored_->DriverRevisions(kKey);
  ASSERT_TRUE(stored_revisions.ok()) << stored_revisions.status();
  ExpectSameMessages(*revisions, *stored_revisions);
}

TEST_F(ServerSourceTest, CancelsThroughTheServer) {
  EXPECT_TRUE(source_->CanCancel());
  EXPECT_FALSE(stored_->CanCancel());
  const int64_t id = job_ids_[2];
  absl::StatusOr<JobProgress> cancelled = source_->Cancel(id);
  ASSERT_TRUE(cancelled.ok()) << cancelled.status();
  EXPECT_EQ(cancelled->job_id(), id);
  EXPECT_EQ(cancelled->state(), tunefleet::v1::JOB_STATE_CANCELLED);
  // The store has it so, and lists nothing else changed.
  absl::StatusOr<JobProgress> stored = stored_->Job(id);
  ASSERT_TRUE(stored.ok()) << stored.status();
  EXPECT_TRUE(MessageDifferencer::Equals(*cancelled, *stored))
      << cancelled->DebugString() << "stored:\n"
      << stored->DebugString();
  absl::StatusOr<std::vector<JobProgress>> got = source_->Jobs(50);
  absl::StatusOr<std::vector<JobProgress>> want = stored_->Jobs(50);
  ASSERT_TRUE(got.ok()) << got.status();
  ASSERT_TRUE(want.ok()) << want.status();
  ExpectSameMessages(*got, *want);
  int cancelled_jobs = 0;
  for (const JobProgress& p : *got) {
    cancelled_jobs += p.state() == tunefleet::v1::JOB_STATE_CANCELLED;
  }
  EXPECT_EQ(cancelled_jobs, 1);

  // Ended already; unknown; a database file cannot cancel.
  EXPECT_EQ(source_->Cancel(id).status().code(),
            absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(source_->Cancel(9999).status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(stored_->Cancel(job_ids_[3]).status().code(),
            absl::StatusCode::kFailedPrecondition);
}

TEST(ServerSource, NoServerThereIsUnavailable) {
  // A port nobody listens on (the server gone): every call fails.
  absl::StatusOr<std::unique_ptr<ServerDataSource>> source =
      ServerDataSource::Dial("127.0.0.1:1", {});
  ASSERT_TRUE(source.ok()) << source.status();
  absl::StatusOr<std::vector<JobProgress>> jobs = (*source)->Jobs(10);
  EXPECT_EQ(jobs.status().code(), absl::StatusCode::kUnavailable)
      << jobs.status();
}

}  // namespace
}  // namespace tunefleet::cli
