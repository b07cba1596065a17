// The contract's enums as the text users see and the store keeps: job and
// trial states, strategies and dtypes by their short lower-case names
// ("running", "leased", "xgb", "fp16"), derived from the enum value names
// of tuning.proto and common.proto (without their prefix).
#ifndef TUNEFLEET_CONTRACT_NAMES_H_
#define TUNEFLEET_CONTRACT_NAMES_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "tunefleet/v1/common.pb.h"
#include "tunefleet/v1/tuning.pb.h"

namespace tunefleet::contract {

// "queued", "running", "done", "failed", "cancelled" ("unspecified" for
// JOB_STATE_UNSPECIFIED).
std::string JobStateName(tunefleet::v1::JobState state);
// The state named `name`. Errors: INVALID_ARGUMENT listing the names.
absl::StatusOr<tunefleet::v1::JobState> ParseJobState(absl::string_view name);
// Whether a job in `state` has ended: done, failed or cancelled.
bool IsFinalJobState(tunefleet::v1::JobState state);

// "pending", "leased", "done".
std::string TrialStateName(tunefleet::v1::TrialState state);
// Errors: INVALID_ARGUMENT listing the names.
absl::StatusOr<tunefleet::v1::TrialState> ParseTrialState(
    absl::string_view name);

// "grid", "random", "sa", "ga", "xgb"; STRATEGY_UNSPECIFIED reads as xgb,
// the default.
std::string StrategyName(tunefleet::v1::Strategy strategy);
// The strategy named `name` ("" is the default, xgb). Errors:
// INVALID_ARGUMENT "unknown strategy '<name>'; known: grid, random, ...".
absl::StatusOr<tunefleet::v1::Strategy> ParseStrategy(absl::string_view name);
// Every strategy's name, in enum order.
std::vector<std::string> StrategyNames();

// "gradient", "round_robin"; TASK_SCHEDULER_UNSPECIFIED reads as gradient,
// the default.
std::string TaskSchedulerName(tunefleet::v1::TaskScheduler scheduler);
// The task scheduler named `name` ("" is the default, gradient; '-' reads as
// '_', so "round-robin" works). Errors: INVALID_ARGUMENT "unknown task
// scheduler '<name>'; known: gradient, round_robin".
absl::StatusOr<tunefleet::v1::TaskScheduler> ParseTaskScheduler(
    absl::string_view name);

// "fp32", "fp16"; DTYPE_UNSPECIFIED reads as fp32.
std::string DtypeName(tunefleet::v1::Dtype dtype);
// Errors: INVALID_ARGUMENT "unknown dtype '<name>'; known: fp32, fp16".
absl::StatusOr<tunefleet::v1::Dtype> ParseDtype(absl::string_view name);

}  // namespace tunefleet::contract

#endif  // TUNEFLEET_CONTRACT_NAMES_H_
