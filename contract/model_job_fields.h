// The fields a model job shares with each of its tasks' jobs: the fields of
// SubmitModelJobRequest that tuning.proto documents "as
// SubmitJobRequest.<field>" (device_key, strategy, trials, seed, priority,
// deadline_s, timing, no_transfer). One list for every place that maps a
// model job's request to a single job's or back: the server building a
// task's job, validation checking a model job as a job, and the CLI
// building a model job from the single-job flags.
#ifndef TUNEFLEET_CONTRACT_MODEL_JOB_FIELDS_H_
#define TUNEFLEET_CONTRACT_MODEL_JOB_FIELDS_H_

#include "tunefleet/v1/tuning.pb.h"

namespace tunefleet::contract {

// A single job's request holding `model`'s job-wide fields; no workload and
// no template (the caller sets them, and whatever it sets per task).
tunefleet::v1::SubmitJobRequest JobWideRequest(
    const tunefleet::v1::SubmitModelJobRequest& model);

// Sets `model`'s job-wide fields from `job`'s; the others are left as they
// are.
void SetJobWideFields(const tunefleet::v1::SubmitJobRequest& job,
                      tunefleet::v1::SubmitModelJobRequest& model);

}  // namespace tunefleet::contract

#endif  // TUNEFLEET_CONTRACT_MODEL_JOB_FIELDS_H_
