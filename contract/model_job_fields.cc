#include "contract/model_job_fields.h"

namespace tunefleet::contract {
namespace {

// A model job's request carries what a job's does in these fields, so the
// copy is the same both ways.
template <typename From, typename To>
void CopyJobWideFields(const From& from, To& to) {
  to.set_device_key(from.device_key());
  to.set_strategy(from.strategy());
  to.set_trials(from.trials());
  to.set_seed(from.seed());
  to.set_priority(from.priority());
  to.set_deadline_s(from.deadline_s());
  if (from.has_timing()) *to.mutable_timing() = from.timing();
  to.set_no_transfer(from.no_transfer());
}

}  // namespace

tunefleet::v1::SubmitJobRequest JobWideRequest(
    const tunefleet::v1::SubmitModelJobRequest& model) {
  tunefleet::v1::SubmitJobRequest job;
  CopyJobWideFields(model, job);
  return job;
}

void SetJobWideFields(const tunefleet::v1::SubmitJobRequest& job,
                      tunefleet::v1::SubmitModelJobRequest& model) {
  CopyJobWideFields(job, model);
}

}  // namespace tunefleet::contract
