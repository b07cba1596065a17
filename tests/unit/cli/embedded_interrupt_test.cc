// Jobs that a killed embedded `tunefleet tune` left running are marked
// failed (interrupted) when the next command opens the database the
// embedded way (cli::InterruptAbandonedJobs, what EmbeddedFleet::Start
// runs first), and only those: not while another process has the database
// open, not jobs of other agents (a stopped tunefleet-server resumes those),
// not finished ones. Real SQLite files.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "cli/embedded.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernels_templates/registry.h"
#include "store/store.h"
#include "tests/support/small_job.h"
#include "tests/support/temp_store.h"

namespace tunefleet::cli {
namespace {

using ::testing::HasSubstr;
using testing::OneTimeOk;
using tunefleet::v1::JOB_STATE_DONE;
using tunefleet::v1::JOB_STATE_FAILED;
using tunefleet::v1::JOB_STATE_RUNNING;
using tunefleet::v1::Measurement;

store::JobParams Gemm(int64_t model_job_id = 0, int task_index = -1) {
  store::JobParams p = testing::SmallGemmJob();
  p.model_job_id = model_job_id;
  p.task_index = task_index;
  return p;
}

// A job as a command killed mid-job leaves it: running, one trial measured
// by `agent`, one leased to it, one pending. Returns the job's id.
int64_t LeaveRunningJob(store::Store& store, const std::string& agent,
                        int64_t model_job_id = 0, int task_index = -1) {
  absl::StatusOr<int64_t> job = store.CreateJob(Gemm(model_job_id, task_index));
  EXPECT_TRUE(job.ok()) << job.status();
  EXPECT_TRUE(store.SetJobState(*job, JOB_STATE_RUNNING, "").ok());
  auto ids = store.InsertTrials(*job, {{0, "a=0"}, {1, "a=1"}, {2, "a=2"}});
  EXPECT_TRUE(ids.ok()) << ids.status();
  EXPECT_TRUE(store.LeaseTrial((*ids)[0], agent).ok());
  EXPECT_TRUE(store.CompleteTrial((*ids)[0], OneTimeOk(100), 100, 1.0).ok());
  EXPECT_TRUE(store.LeaseTrial((*ids)[1], agent).ok());
  return *job;
}

std::unique_ptr<store::Store> Reopen(const std::string& path) {
  absl::StatusOr<std::unique_ptr<store::Store>> store =
      store::Store::Open(path);
  EXPECT_TRUE(store.ok()) << store.status();
  return store.ok() ? *std::move(store) : nullptr;
}

TEST(EmbeddedInterrupt, KilledCommandsJobIsMarkedInterrupted) {
  testing::TempStore db("embedded_interrupt");
  const int64_t job = LeaveRunningJob(*db.store(), "embedded-4242");
  db.Close();

  absl::StatusOr<int> marked = InterruptAbandonedJobs(db.path());
  ASSERT_TRUE(marked.ok()) << marked.status();
  EXPECT_EQ(*marked, 1);

  std::unique_ptr<store::Store> store = Reopen(db.path());
  ASSERT_NE(store, nullptr);
  absl::StatusOr<store::StoredJob> row = store->GetJob(job);
  ASSERT_TRUE(row.ok()) << row.status();
  EXPECT_EQ(row->state, JOB_STATE_FAILED);
  EXPECT_THAT(row->message, HasSubstr("interrupted"));
  // The measured trial keeps its result; the others end CANCELLED.
  auto trials = store->JobTrials(job);
  ASSERT_TRUE(trials.ok());
  ASSERT_EQ(trials->size(), 3u);
  for (const store::Trial& t : *trials) {
    EXPECT_EQ(t.state, tunefleet::v1::TRIAL_STATE_DONE) << t.id;
  }
  EXPECT_EQ((*trials)[0].error, Measurement::OK);
  EXPECT_EQ((*trials)[1].error, Measurement::CANCELLED);
  EXPECT_EQ((*trials)[2].error, Measurement::CANCELLED);
  // Nothing is left unfinished, so a second command marks nothing.
  store.reset();
  EXPECT_EQ(*InterruptAbandonedJobs(db.path()), 0);
}

TEST(EmbeddedInterrupt, AModelJobAndAllItsUnfinishedTasksAreMarked) {
  testing::TempStore db("embedded_interrupt");
  store::ModelJobParams params;
  params.model_name = "cls.onnx";
  params.device_key = "test-gpu";
  params.budget = 100;
  auto model = db.store()->CreateModelJob(params, "{}");
  ASSERT_TRUE(model.ok()) << model.status();
  ASSERT_TRUE(db.store()->SetModelJobState(*model, JOB_STATE_RUNNING, "").ok());
  const int64_t task0 =
      LeaveRunningJob(*db.store(), "embedded-4242", *model, 0);
  // A task not yet started: no trials.
  auto task1 = db.store()->CreateJob(Gemm(*model, 1));
  ASSERT_TRUE(task1.ok());
  db.Close();

  EXPECT_EQ(*InterruptAbandonedJobs(db.path()), 3);
  std::unique_ptr<store::Store> store = Reopen(db.path());
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(store->GetModelJob(*model)->state, JOB_STATE_FAILED);
  EXPECT_THAT(store->GetModelJob(*model)->message, HasSubstr("interrupted"));
  EXPECT_EQ(store->GetJob(task0)->state, JOB_STATE_FAILED);
  EXPECT_EQ(store->GetJob(*task1)->state, JOB_STATE_FAILED);
}

TEST(EmbeddedInterrupt, JobsOfADatabaseOpenElsewhereAreKept) {
  testing::TempStore db("embedded_interrupt");
  // The Store stays open, as a live server's would: another opener.
  const int64_t job = LeaveRunningJob(*db.store(), "embedded-4242");
  EXPECT_EQ(*InterruptAbandonedJobs(db.path()), 0);
  EXPECT_EQ(db.store()->GetJob(job)->state, JOB_STATE_RUNNING);
  db.Close();
  EXPECT_EQ(*InterruptAbandonedJobs(db.path()), 1);
}

TEST(EmbeddedInterrupt, OtherAgentsAndFinishedJobsAreLeftAlone) {
  testing::TempStore db("embedded_interrupt");
  // A stopped tunefleet-server's job, which it resumes on its next start.
  const int64_t served = LeaveRunningJob(*db.store(), "board-7");
  // A finished embedded job.
  const int64_t done = LeaveRunningJob(*db.store(), "embedded-1");
  ASSERT_TRUE(db.store()->SetJobState(done, JOB_STATE_DONE, "").ok());
  db.Close();

  EXPECT_EQ(*InterruptAbandonedJobs(db.path()), 0);
  std::unique_ptr<store::Store> store = Reopen(db.path());
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(store->GetJob(served)->state, JOB_STATE_RUNNING);
  EXPECT_EQ(store->GetJob(done)->state, JOB_STATE_DONE);
  EXPECT_TRUE(store->GetJob(done)->message.empty());
}

// The real thing: another process opens the database, leaves a job
// running and is killed with SIGKILL. While it lives its job is kept; once
// it is dead (the kernel drops its lock) the job is marked.
TEST(EmbeddedInterrupt, AJobOfAProcessKilledWithSigkillIsMarked) {
  testing::TempStore db("embedded_interrupt");
  db.Close();
  int ready[2];
  ASSERT_EQ(pipe(ready), 0);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    close(ready[0]);
    auto store = store::Store::Open(db.path());
    if (!store.ok()) _exit(3);
    LeaveRunningJob(**store, "embedded-" + std::to_string(getpid()));
    const char byte = 1;
    if (write(ready[1], &byte, 1) != 1) _exit(4);
    while (true) pause();
  }
  close(ready[1]);
  char byte = 0;
  ASSERT_EQ(read(ready[0], &byte, 1), 1);
  close(ready[0]);

  EXPECT_EQ(*InterruptAbandonedJobs(db.path()), 0);  // it is alive
  ASSERT_EQ(kill(child, SIGKILL), 0);
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFSIGNALED(status));

  EXPECT_EQ(*InterruptAbandonedJobs(db.path()), 1);
  std::unique_ptr<store::Store> store = Reopen(db.path());
  ASSERT_NE(store, nullptr);
  auto jobs = store->ListJobs(0, 0);
  ASSERT_TRUE(jobs.ok());
  ASSERT_EQ(jobs->size(), 1u);
  EXPECT_EQ((*jobs)[0].state, JOB_STATE_FAILED);
  EXPECT_THAT((*jobs)[0].message, HasSubstr("interrupted"));
}

}  // namespace
}  // namespace tunefleet::cli
