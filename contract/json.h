// The one JSON form of the contract's messages (docs/JSON.md): what every
// `--json` of the CLI, the dashboard's JSON API (/api/...), `tunefleet
// report` and `tunefleet-agent --info` write for a JobProgress, a
// TuningRecord, a DeviceInfo, a DeviceStatus, ...:
// - field names as in the .proto (snake_case: job_id, trials_done,
//   workload_key, template_name);
// - enum values by their name in the .proto (JOB_STATE_DONE, STRATEGY_XGB,
//   TASK_SCHEDULER_GRADIENT, DTYPE_FP32, error codes OK, COMPILE_ERROR);
// - every integer as a JSON number, 64-bit ones too (ids, counts, bytes,
//   Unix ms): never a string. Every id and count tunefleet makes is below
//   2^53, so doubles (JavaScript, jq) read them exactly;
// - every field, zeros, "" and false included; an unset message field is
//   null; maps are objects; NaN and infinities are "NaN", "Infinity",
//   "-Infinity".
// This is protobuf's JSON mapping with preserve_proto_field_names (what
// grpcurl prints), except that 64-bit integers are not quoted: protobuf's
// JSON parsers (json_format.Parse, JsonStringToMessage) read it back.
#ifndef TUNEFLEET_CONTRACT_JSON_H_
#define TUNEFLEET_CONTRACT_JSON_H_

#include "absl/status/status.h"
#include "google/protobuf/message.h"
#include "nlohmann/json.hpp"

namespace tunefleet::contract {

// `message` in the form above.
nlohmann::json ContractJson(const google::protobuf::Message& message);

// The JSON of a refusal or failure: {"error": MESSAGE, "code": CODE}, CODE
// being the status code's name as gRPC spells it (INVALID_ARGUMENT,
// NOT_FOUND, UNAVAILABLE, ...). What a CLI command run with --json writes
// on stderr (with a non-zero exit), and the body of an HTTP API error.
nlohmann::json ErrorJson(const absl::Status& status);

}  // namespace tunefleet::contract

#endif  // TUNEFLEET_CONTRACT_JSON_H_
