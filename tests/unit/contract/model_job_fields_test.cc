// The fields a model job shares with its tasks' jobs
// (contract/model_job_fields.h): each one goes across, both ways, and
// nothing else does.
#include "contract/model_job_fields.h"

#include "google/protobuf/text_format.h"
#include "google/protobuf/util/message_differencer.h"
#include "gtest/gtest.h"
#include "tunefleet/v1/tuning.pb.h"

namespace tunefleet::contract {
namespace {

using google::protobuf::util::MessageDifferencer;

// A model job's request with every job-wide field set to a value other
// than its default, and fields that are its own (tasks, task scheduler).
tunefleet::v1::SubmitModelJobRequest ModelRequest() {
  tunefleet::v1::SubmitModelJobRequest m;
  m.set_device_key("board");
  m.set_strategy(tunefleet::v1::STRATEGY_GA);
  m.set_trials(321);
  m.set_seed(77);
  m.set_priority(-5);
  m.set_deadline_s(900);
  m.mutable_timing()->set_repeat(7);
  m.set_no_transfer(true);
  m.set_task_scheduler(tunefleet::v1::TASK_SCHEDULER_ROUND_ROBIN);
  m.set_batch_trials(4);
  m.add_tasks()->set_template_name("gemm_tiled");
  return m;
}

TEST(ModelJobFields, JobWideRequestCarriesEachJobWideField) {
  const tunefleet::v1::SubmitJobRequest job = JobWideRequest(ModelRequest());
  tunefleet::v1::SubmitJobRequest expected;
  ASSERT_TRUE(google::protobuf::TextFormat::ParseFromString(
      R"pb(device_key: "board"
           strategy: STRATEGY_GA
           trials: 321
           seed: 77
           priority: -5
           deadline_s: 900
           timing { repeat: 7 }
           no_transfer: true)pb",
      &expected));
  EXPECT_TRUE(MessageDifferencer::Equals(job, expected)) << job.DebugString();
}

TEST(ModelJobFields, SetJobWideFieldsIsTheInverseAndKeepsTheModelsOwn) {
  const tunefleet::v1::SubmitModelJobRequest original = ModelRequest();
  tunefleet::v1::SubmitModelJobRequest copy;
  copy.set_task_scheduler(original.task_scheduler());
  copy.set_batch_trials(original.batch_trials());
  *copy.mutable_tasks() = original.tasks();
  SetJobWideFields(JobWideRequest(original), copy);
  EXPECT_TRUE(MessageDifferencer::Equals(copy, original)) << copy.DebugString();
}

}  // namespace
}  // namespace tunefleet::contract
