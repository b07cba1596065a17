// The store's reads that must stay fast at a million trials (schema v4):
// the best-record table and per-job counts kept by triggers, their backfill
// by the migration, keyset pages of records and the bounded history read.
// Each is checked against a brute-force answer computed from what the test
// wrote.
#include <algorithm>
#include <map>
#include <random>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "kernels_templates/registry.h"
#include "store/store.h"
#include "tests/support/temp_store.h"

namespace tunefleet::store {
namespace {

using tunefleet::v1::Measurement;

// What the test wrote for one trial.
struct Written {
  int64_t job_id = 0;
  std::string device_key;
  std::string workload;  // canonical
  std::string template_name;
  bool done = false;
  Measurement::Error error = Measurement::ERROR_UNSPECIFIED;
  double time_ns = 0;
};

using TaskKey = std::tuple<std::string, std::string, std::string>;

class StoreReadsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_NE(store_, nullptr);
    for (const templates::KernelTemplate* t : templates::AllTemplates()) {
      if (t->op() == "gemm") gemm_templates_.push_back(t);
    }
    ASSERT_GE(gemm_templates_.size(), 2u);
  }

  // Jobs over 3 device keys, 3 gemm shapes and 2 gemm templates; each job
  // gets `trials_per_job` trials: most measured, with times from a small
  // set (so ties happen), some failed, some cancelled, a few never done.
  void WriteRandomJobs(int jobs, int trials_per_job, uint32_t seed) {
    std::mt19937 rng(seed);
    const std::vector<std::string> keys = {"dev-a", "dev-b", "dev-c"};
    const std::vector<std::string> shapes = {
        "M=64,N=64,K=64", "M=128,N=64,K=32", "M=32,N=32,K=256"};
    for (int j = 0; j < jobs; ++j) {
      const templates::Workload workload =
          *templates::Workload::Parse("gemm", shapes[rng() % shapes.size()]);
      const templates::KernelTemplate* tmpl = gemm_templates_[rng() % 2];
      JobParams params{{workload, tmpl},
                       keys[rng() % keys.size()],
                       tunefleet::v1::STRATEGY_RANDOM,
                       trials_per_job,
                       1,
                       0};
      absl::StatusOr<int64_t> job = store_->CreateJob(params);
      ASSERT_TRUE(job.ok()) << job.status();
      std::vector<NewTrial> trials;
      for (int i = 0; i < trials_per_job; ++i) {
        trials.push_back({static_cast<uint64_t>(i), absl::StrCat("a=", i)});
      }
      absl::StatusOr<std::vector<int64_t>> ids =
          store_->InsertTrials(*job, trials);
      ASSERT_TRUE(ids.ok()) << ids.status();
      for (int64_t id : *ids) {
        Written& w = written_[id];
        w.job_id = *job;
        w.device_key = params.device_key;
        w.workload = workload.Canonical();
        w.template_name = std::string(tmpl->name());
        const uint32_t roll = rng() % 20;
        if (roll == 0) continue;  // never measured
        ASSERT_TRUE(store_->LeaseTrial(id, "agent").ok());
        Measurement m;
        if (roll <= 3) {
          m.set_error(roll == 1   ? Measurement::COMPILE_ERROR
                      : roll == 2 ? Measurement::WRONG_ANSWER
                                  : Measurement::TIMEOUT);
        } else {
          m.set_error(Measurement::OK);
          w.time_ns = 1000.0 * (1 + rng() % 8);  // ties are common
          m.add_times_ns(w.time_ns);
        }
        absl::StatusOr<bool> changed =
            store_->CompleteTrial(id, m, w.time_ns, w.time_ns > 0 ? 1.0 : 0);
        ASSERT_TRUE(changed.ok()) << changed.status();
        ASSERT_TRUE(*changed);
        w.done = true;
        w.error = m.error();
      }
      // Some jobs end with trials never measured: they become CANCELLED.
      if (rng() % 4 == 0) {
        ASSERT_TRUE(store_
                        ->SetJobState(*job, tunefleet::v1::JOB_STATE_CANCELLED,
                                      "stopped")
                        .ok());
        for (int64_t id : *ids) {
          Written& w = written_[id];
          if (!w.done) {
            w.done = true;
            w.error = Measurement::CANCELLED;
          }
        }
      }
    }
  }

  // The fastest OK trial per task (ties: the lowest id), by brute force.
  std::map<TaskKey, int64_t> BruteForceBest(
      const std::string& device_key = "") const {
    std::map<TaskKey, std::pair<double, int64_t>> best;
    for (const auto& [id, w] : written_) {
      if (!w.done || w.error != Measurement::OK) continue;
      if (!device_key.empty() && w.device_key != device_key) continue;
      const TaskKey key{w.device_key, w.workload, w.template_name};
      auto it = best.find(key);
      if (it == best.end() || std::make_pair(w.time_ns, id) < it->second) {
        best[key] = {w.time_ns, id};
      }
    }
    std::map<TaskKey, int64_t> out;
    for (const auto& [key, v] : best) out[key] = v.second;
    return out;
  }

  static std::map<TaskKey, int64_t> ByTask(
      const std::vector<tunefleet::v1::TuningRecord>& records) {
    std::map<TaskKey, int64_t> out;
    for (const auto& r : records) {
      EXPECT_TRUE(out.emplace(TaskKey{r.device_key(), r.workload_key(),
                                      r.template_name()},
                              r.trial_id())
                      .second)
          << "two records for one task";
    }
    return out;
  }

  void ExpectBestMatchesBruteForce(Store& store) {
    RecordFilter filter;
    filter.best_only = true;
    absl::StatusOr<std::vector<tunefleet::v1::TuningRecord>> best =
        store.QueryRecords(filter);
    ASSERT_TRUE(best.ok()) << best.status();
    const std::map<TaskKey, int64_t> expected = BruteForceBest();
    ASSERT_GT(expected.size(), 6u);
    EXPECT_EQ(ByTask(*best), expected);
    for (const auto& r : *best) {
      EXPECT_EQ(r.error(), Measurement::OK);
      EXPECT_EQ(r.time_ns(), written_.at(r.trial_id()).time_ns);
    }
    filter.device_key = "dev-b";
    best = store.QueryRecords(filter);
    ASSERT_TRUE(best.ok()) << best.status();
    EXPECT_EQ(ByTask(*best), BruteForceBest("dev-b"));
    // Per job: the tally's counts and best.
    std::map<int64_t, std::map<std::string, uint32_t>> counts;
    std::map<int64_t, std::pair<double, int64_t>> job_best;
    for (const auto& [id, w] : written_) {
      counts[w.job_id];  // every job, even one with nothing done
      // A trial its job's end left unmeasured is neither done nor an error.
      if (!w.done || w.error == Measurement::CANCELLED) continue;
      ++counts[w.job_id][Measurement::Error_Name(w.error)];
      if (w.error != Measurement::OK) continue;
      auto it = job_best.find(w.job_id);
      if (it == job_best.end() || std::make_pair(w.time_ns, id) < it->second) {
        job_best[w.job_id] = {w.time_ns, id};
      }
    }
    for (const auto& [job, errors] : counts) {
      absl::StatusOr<JobTally> tally = store.TallyJob(job);
      ASSERT_TRUE(tally.ok()) << tally.status();
      EXPECT_EQ(tally->errors, errors) << "job " << job;
      int64_t done = 0;
      for (const auto& [code, n] : errors) done += n;
      EXPECT_EQ(tally->done, done) << "job " << job;
      if (job_best.count(job)) {
        ASSERT_TRUE(tally->best.has_value()) << "job " << job;
        EXPECT_EQ(tally->best->trial_id(), job_best[job].second);
      } else {
        EXPECT_FALSE(tally->best.has_value()) << "job " << job;
      }
    }
  }

  ::tunefleet::testing::TempStore db_{"store_reads"};
  Store* store_ = db_.store();
  std::vector<const templates::KernelTemplate*> gemm_templates_;
  std::map<int64_t, Written> written_;
};

TEST_F(StoreReadsTest, BestRecordsAndTalliesMatchABruteForceScan) {
  WriteRandomJobs(/*jobs=*/60, /*trials_per_job=*/50, /*seed=*/7);
  ExpectBestMatchesBruteForce(*store_);
}

TEST_F(StoreReadsTest, MigrationBackfillsADatabaseOfTheEarlierSchema) {
  WriteRandomJobs(/*jobs=*/40, /*trials_per_job=*/40, /*seed=*/11);
  const std::string path = db_.path();
  db_.Close();
  {
    // The file as schema v3 had it: no v4 tables, triggers or index.
    absl::StatusOr<Database> db = Database::Open(path);
    ASSERT_TRUE(db.ok()) << db.status();
    ASSERT_TRUE(
        db->Exec("DROP TRIGGER trials_done_count; "
                 "DROP TRIGGER trials_inserted_done_count; "
                 "DROP TRIGGER trials_done_best; "
                 "DROP TRIGGER trials_inserted_done_best; "
                 "DROP TABLE job_trial_counts; DROP TABLE job_best; "
                 "DROP TABLE best_records; DROP INDEX jobs_by_template; "
                 "PRAGMA user_version = 3;")
            .ok());
  }
  absl::StatusOr<std::unique_ptr<Store>> reopened = Store::Open(path);
  ASSERT_TRUE(reopened.ok()) << reopened.status();
  ExpectBestMatchesBruteForce(**reopened);
  // And the triggers keep it from there: a new fastest trial wins.
  const int64_t job = written_.begin()->second.job_id;
  absl::StatusOr<std::vector<int64_t>> ids =
      (*reopened)->InsertTrials(job, {{100000, "a=fast"}});
  ASSERT_TRUE(ids.ok()) << ids.status();
  ASSERT_TRUE((*reopened)->LeaseTrial(ids->front(), "agent").ok());
  Measurement m;
  m.set_error(Measurement::OK);
  m.add_times_ns(1);
  ASSERT_TRUE((*reopened)->CompleteTrial(ids->front(), m, 1, 1).ok());
  Written w = written_.begin()->second;
  w.done = true;
  w.error = Measurement::OK;
  w.time_ns = 1;
  written_[ids->front()] = w;
  ExpectBestMatchesBruteForce(**reopened);
}

TEST_F(StoreReadsTest, KeysetPagesVisitEveryRecordOnce) {
  WriteRandomJobs(/*jobs=*/20, /*trials_per_job=*/37, /*seed=*/3);
  for (const int64_t job : {int64_t{0}, written_.rbegin()->second.job_id}) {
    std::set<int64_t> expected;
    for (const auto& [id, w] : written_) {
      if (w.done && (job == 0 || w.job_id == job)) expected.insert(id);
    }
    RecordFilter filter;
    filter.job_id = job;
    filter.limit = 17;
    std::vector<int64_t> seen;
    int pages = 0;
    while (true) {
      absl::StatusOr<std::vector<tunefleet::v1::TuningRecord>> page =
          store_->QueryRecords(filter);
      ASSERT_TRUE(page.ok()) << page.status();
      ASSERT_LE(page->size(), 17u);
      for (const auto& r : *page) seen.push_back(r.trial_id());
      ++pages;
      if (page->size() < 17u) break;
      filter.after_trial_id = page->back().trial_id();
    }
    EXPECT_TRUE(std::is_sorted(seen.begin(), seen.end()));
    EXPECT_EQ(std::set<int64_t>(seen.begin(), seen.end()).size(), seen.size())
        << "a record came twice";
    EXPECT_EQ(std::set<int64_t>(seen.begin(), seen.end()), expected);
    EXPECT_GE(pages, static_cast<int>(expected.size() / 17));
  }
  // Best records by offset pages: the same rows as one read, in order.
  RecordFilter all;
  all.best_only = true;
  absl::StatusOr<std::vector<tunefleet::v1::TuningRecord>> whole =
      store_->QueryRecords(all);
  ASSERT_TRUE(whole.ok());
  std::vector<int64_t> paged;
  RecordFilter page_filter = all;
  page_filter.limit = 4;
  while (true) {
    absl::StatusOr<std::vector<tunefleet::v1::TuningRecord>> page =
        store_->QueryRecords(page_filter);
    ASSERT_TRUE(page.ok());
    for (const auto& r : *page) paged.push_back(r.trial_id());
    if (page->size() < 4u) break;
    page_filter.offset += 4;
  }
  std::vector<int64_t> whole_ids;
  for (const auto& r : *whole) whole_ids.push_back(r.trial_id());
  EXPECT_EQ(paged, whole_ids);
}

TEST_F(StoreReadsTest, HistoryReadIsBoundedNewestJobFirst) {
  WriteRandomJobs(/*jobs=*/30, /*trials_per_job=*/40, /*seed=*/5);
  const std::string name(gemm_templates_[0]->name());
  // Every measured record of the template, for comparison.
  std::vector<int64_t> all;  // newest job first, trial id order in a job
  std::map<int64_t, std::vector<int64_t>, std::greater<int64_t>> by_job;
  for (const auto& [id, w] : written_) {
    if (w.template_name == name && w.done &&
        w.error != Measurement::CANCELLED) {
      by_job[w.job_id].push_back(id);
    }
  }
  for (const auto& [job, ids] : by_job) {
    all.insert(all.end(), ids.begin(), ids.end());
  }
  ASSERT_GT(all.size(), 100u);
  for (const int64_t bound : {int64_t{1}, int64_t{55}, int64_t{100}}) {
    absl::StatusOr<std::vector<tunefleet::v1::TuningRecord>> history =
        store_->HistoryRecords("gemm", name, bound);
    ASSERT_TRUE(history.ok()) << history.status();
    ASSERT_EQ(history->size(), static_cast<size_t>(bound));
    for (size_t i = 0; i < history->size(); ++i) {
      EXPECT_EQ((*history)[i].trial_id(), all[i]) << "row " << i;
      EXPECT_EQ((*history)[i].template_name(), name);
    }
  }
  absl::StatusOr<std::vector<tunefleet::v1::TuningRecord>> everything =
      store_->HistoryRecords("gemm", name, 1000000);
  ASSERT_TRUE(everything.ok());
  EXPECT_EQ(everything->size(), all.size());
  EXPECT_TRUE(store_->HistoryRecords("conv", name, 100)->empty());
}

}  // namespace
}  // namespace tunefleet::store
