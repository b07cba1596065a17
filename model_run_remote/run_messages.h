// A model run on the wire (proto/tunefleet/v1/agent.proto: RunModelRequest,
// RunModelResult) and back: what the client's RemoteRunner sends and the
// agent's model-run handler (device_agent/model_run_handler.h) turns into a
// model_run::RunRequest, and the RunResult (or error) it answers with.
#ifndef TUNEFLEET_MODEL_RUN_REMOTE_RUN_MESSAGES_H_
#define TUNEFLEET_MODEL_RUN_REMOTE_RUN_MESSAGES_H_

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "model_run/model_runner.h"
#include "tunefleet/v1/agent.pb.h"

namespace tunefleet::model_run_remote {

// `request` as the wire message (run_id 0: the server sets it); the
// inputs are named by `input_names` (the plan's, in order; may be shorter:
// unnamed). timeout_ms: how long the caller waits, ms (0: the server's
// default).
tunefleet::v1::RunModelRequest ToProto(
    const model_run::RunRequest& request,
    const std::vector<std::string>& input_names, uint32_t timeout_ms);
// The wire message as a RunRequest (device_buffer_runs as the message
// says: false from a client before that field). Errors: INVALID_ARGUMENT
// naming the field (no plan, runs of 0).
absl::StatusOr<model_run::RunRequest> FromProto(
    const tunefleet::v1::RunModelRequest& request);

// A runner's outcome as the wire message (run_id and agent_name left for
// the caller): the result's fields (the runs on device buffers included),
// or error and error_code.
tunefleet::v1::RunModelResult ToProto(
    const absl::StatusOr<model_run::RunResult>& result);
// The wire message as the runner's outcome: its error as a status of its
// code (UNKNOWN for a code out of range), else the RunResult. Errors also:
// INVALID_ARGUMENT when an output's values do not fill its shape.
absl::StatusOr<model_run::RunResult> FromProto(
    const tunefleet::v1::RunModelResult& r);

}  // namespace tunefleet::model_run_remote

#endif  // TUNEFLEET_MODEL_RUN_REMOTE_RUN_MESSAGES_H_
