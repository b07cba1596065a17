// A device key's driver revisions and re-validation rows (store/drivers.cc,
// schema v9), on a real SQLite file: revisions numbered in the order first
// seen, the best distinct configs per task, and each re-validated record's
// outcome from its job's trial.
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "kernels_templates/registry.h"
#include "store/store.h"
#include "tests/support/temp_store.h"

namespace tunefleet::store {
namespace {

using tunefleet::v1::Measurement;

class DriversTest : public ::testing::Test {
 protected:
  // A job of key "k" on a small GEMM, its trials at `configs` (index i's
  // text "a=i"), each completed with `times` (0: WRONG_ANSWER; < 0:
  // left pending). Returns the job id and the trial ids.
  std::pair<int64_t, std::vector<int64_t>> Job(
      const std::vector<uint64_t>& configs, const std::vector<double>& times,
      const std::string& request_json = "{\"trials\":8}") {
    const templates::KernelTemplate* gemm =
        *templates::FindTemplate("gemm", "gemm_tiled");
    JobParams params{
        {*templates::Workload::Parse("gemm", "M=64,N=64,K=64"), gemm},
        "k",
        tunefleet::v1::STRATEGY_RANDOM,
        8,
        1,
        0};
    absl::StatusOr<int64_t> job = store()->CreateJob(params, request_json);
    EXPECT_TRUE(job.ok()) << job.status();
    std::vector<NewTrial> rows;
    for (uint64_t c : configs) rows.push_back({c, absl::StrCat("a=", c)});
    absl::StatusOr<std::vector<int64_t>> ids =
        store()->InsertTrials(*job, rows);
    EXPECT_TRUE(ids.ok()) << ids.status();
    for (size_t i = 0; i < times.size(); ++i) {
      if (times[i] < 0) continue;
      Measurement m;
      m.set_trial_id((*ids)[i]);
      if (times[i] > 0) {
        m.set_error(Measurement::OK);
        m.add_times_ns(times[i]);
      } else {
        m.set_error(Measurement::WRONG_ANSWER);
      }
      EXPECT_TRUE(store()->CompleteTrial((*ids)[i], m, times[i], 1.0).ok());
    }
    return {*job, *ids};
  }

  Store* store() { return temp_.store(); }
  testing::TempStore temp_{"drivers"};
};

TEST_F(DriversTest, RevisionsAreNumberedInTheOrderFirstSeen) {
  bool added = false;
  EXPECT_EQ(*store()->NoteDriver("k", "1.0", &added), 1);
  EXPECT_TRUE(added);
  EXPECT_EQ(*store()->NoteDriver("k", "1.0", &added), 1);
  EXPECT_FALSE(added);
  EXPECT_EQ(*store()->NoteDriver("k", "2.0", &added), 2);
  EXPECT_TRUE(added);
  EXPECT_EQ(*store()->NoteDriver("other", "2.0", &added), 1);
  EXPECT_TRUE(added);
  auto revisions = store()->DriverRevisions("k");
  ASSERT_TRUE(revisions.ok()) << revisions.status();
  ASSERT_EQ(revisions->size(), 2u);
  EXPECT_EQ((*revisions)[0].driver_version(), "1.0");
  EXPECT_EQ((*revisions)[1].revision(), 2u);
  EXPECT_EQ((*revisions)[1].driver_version(), "2.0");
}

TEST_F(DriversTest, TasksListTheFastestDistinctOkConfigs) {
  // Config 3 measured twice (its best, 5, counts), config 9 wrong.
  Job({1, 2, 3, 9}, {30, 20, 10, 0});
  Job({3, 4}, {5, 40});
  auto tasks = store()->RevalidationTasks("k", 2);
  ASSERT_TRUE(tasks.ok()) << tasks.status();
  ASSERT_EQ(tasks->size(), 1u);
  const RevalidationTask& task = (*tasks)[0];
  EXPECT_EQ(task.template_name, "gemm_tiled");
  EXPECT_EQ(task.request_json, "{\"trials\":8}");
  ASSERT_EQ(task.targets.size(), 2u);
  EXPECT_EQ(task.targets[0].config_index, 3u);
  EXPECT_EQ(task.targets[0].time_ns, 5);
  EXPECT_EQ(task.targets[1].config_index, 2u);
  EXPECT_EQ(task.targets[1].config, "a=2");
  EXPECT_TRUE(store()->RevalidationTasks("none", 2)->empty());
}

TEST_F(DriversTest, OutcomesComeFromTheRevalidationJobsTrials) {
  bool added = false;
  ASSERT_TRUE(store()->NoteDriver("k", "1.0", &added).ok());
  ASSERT_TRUE(store()->NoteDriver("k", "2.0", &added).ok());
  Job({1, 2, 3, 4, 5}, {10, 10, 10, 10, 10});
  auto tasks = store()->RevalidationTasks("k", 5);
  ASSERT_TRUE(tasks.ok());
  ASSERT_EQ((*tasks)[0].targets.size(), 5u);
  // On the new driver: same (10.5 <= 1.10 x 10), slower (2x), wrong, not
  // measured yet, and one never queued.
  auto [job, trials] = Job({1, 2, 3, 4}, {10.5, 20, 0, -1});
  ASSERT_TRUE(store()->AddRevalidations("k", 2, job, (*tasks)[0].targets).ok());
  auto revisions = store()->DriverRevisions("k");
  ASSERT_TRUE(revisions.ok()) << revisions.status();
  ASSERT_EQ(revisions->size(), 2u);
  const tunefleet::v1::DriverRevision& r = (*revisions)[1];
  EXPECT_EQ(r.revalidated_same(), 1u);
  EXPECT_EQ(r.revalidated_slower(), 1u);
  EXPECT_EQ(r.revalidated_wrong(), 1u);
  EXPECT_EQ(r.revalidated_failed(), 0u);
  EXPECT_EQ(r.revalidation_pending(), 2u);
  ASSERT_EQ(r.revalidation_job_ids_size(), 1);
  EXPECT_EQ(r.revalidation_job_ids(0), job);
  // The job ended: what it did not measure failed.
  ASSERT_TRUE(
      store()->SetJobState(job, tunefleet::v1::JOB_STATE_DONE, "").ok());
  revisions = store()->DriverRevisions("k");
  ASSERT_TRUE(revisions.ok());
  EXPECT_EQ((*revisions)[1].revalidation_pending(), 0u);
  EXPECT_EQ((*revisions)[1].revalidated_failed(), 2u);
  // A resumed job learns its driver and configs.
  auto of = store()->RevalidationOfJob(job);
  ASSERT_TRUE(of.ok() && of->has_value());
  EXPECT_EQ((*of)->driver_version, "2.0");
  EXPECT_EQ((*of)->config_indices, (std::vector<uint64_t>{1, 2, 3, 4, 5}));
  EXPECT_FALSE(store()->RevalidationOfJob(job - 1)->has_value());
  // Re-validation jobs' own trials are not records to re-validate.
  auto again = store()->RevalidationTasks("k", 5);
  ASSERT_TRUE(again.ok());
  ASSERT_EQ(again->size(), 1u);
  EXPECT_EQ((*again)[0].targets[0].time_ns, 10);
}

}  // namespace
}  // namespace tunefleet::store
