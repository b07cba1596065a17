#include "contract/names.h"

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "google/protobuf/descriptor.h"

namespace tunefleet::contract {
namespace {

using google::protobuf::EnumDescriptor;

// An enum value's name without `prefix`, in lower case:
// JOB_STATE_RUNNING -> "running".
std::string ShortName(const EnumDescriptor& e, int value,
                      absl::string_view prefix) {
  const google::protobuf::EnumValueDescriptor* v = e.FindValueByNumber(value);
  if (v == nullptr) return absl::StrCat(value);
  absl::string_view name = v->name();
  if (absl::StartsWith(name, prefix)) name.remove_prefix(prefix.size());
  return absl::AsciiStrToLower(name);
}

// Short names of every value but the unspecified one, in enum order.
std::vector<std::string> ShortNames(const EnumDescriptor& e,
                                    absl::string_view prefix) {
  std::vector<std::string> names;
  for (int i = 0; i < e.value_count(); ++i) {
    if (e.value(i)->number() == 0) continue;
    names.push_back(ShortName(e, e.value(i)->number(), prefix));
  }
  return names;
}

// The value of enum E whose short name is `name` (case-insensitive).
// Errors: INVALID_ARGUMENT "unknown <what> '<name>'; known: ...".
template <typename E>
absl::StatusOr<E> ParseShortName(const EnumDescriptor& e,
                                 absl::string_view prefix,
                                 absl::string_view name,
                                 absl::string_view what) {
  const std::string full = absl::StrCat(prefix, absl::AsciiStrToUpper(name));
  const google::protobuf::EnumValueDescriptor* v = e.FindValueByName(full);
  if (v != nullptr && v->number() != 0 && !name.empty()) {
    return static_cast<E>(v->number());
  }
  return absl::InvalidArgumentError(
      absl::StrCat("unknown ", what, " '", name,
                   "'; known: ", absl::StrJoin(ShortNames(e, prefix), ", ")));
}

}  // namespace

std::string JobStateName(tunefleet::v1::JobState state) {
  return ShortName(*tunefleet::v1::JobState_descriptor(), state, "JOB_STATE_");
}

absl::StatusOr<tunefleet::v1::JobState> ParseJobState(absl::string_view name) {
  return ParseShortName<tunefleet::v1::JobState>(
      *tunefleet::v1::JobState_descriptor(), "JOB_STATE_", name, "job state");
}

bool IsFinalJobState(tunefleet::v1::JobState state) {
  return state == tunefleet::v1::JOB_STATE_DONE ||
         state == tunefleet::v1::JOB_STATE_FAILED ||
         state == tunefleet::v1::JOB_STATE_CANCELLED;
}

std::string TrialStateName(tunefleet::v1::TrialState state) {
  return ShortName(*tunefleet::v1::TrialState_descriptor(), state,
                   "TRIAL_STATE_");
}

absl::StatusOr<tunefleet::v1::TrialState> ParseTrialState(
    absl::string_view name) {
  return ParseShortName<tunefleet::v1::TrialState>(
      *tunefleet::v1::TrialState_descriptor(), "TRIAL_STATE_", name,
      "trial state");
}

std::string StrategyName(tunefleet::v1::Strategy strategy) {
  if (strategy == tunefleet::v1::STRATEGY_UNSPECIFIED) {
    strategy = tunefleet::v1::STRATEGY_XGB;
  }
  return ShortName(*tunefleet::v1::Strategy_descriptor(), strategy,
                   "STRATEGY_");
}

absl::StatusOr<tunefleet::v1::Strategy> ParseStrategy(absl::string_view name) {
  if (name.empty()) return tunefleet::v1::STRATEGY_XGB;
  return ParseShortName<tunefleet::v1::Strategy>(
      *tunefleet::v1::Strategy_descriptor(), "STRATEGY_", name, "strategy");
}

std::vector<std::string> StrategyNames() {
  return ShortNames(*tunefleet::v1::Strategy_descriptor(), "STRATEGY_");
}

std::string TaskSchedulerName(tunefleet::v1::TaskScheduler scheduler) {
  if (scheduler == tunefleet::v1::TASK_SCHEDULER_UNSPECIFIED) {
    scheduler = tunefleet::v1::TASK_SCHEDULER_GRADIENT;
  }
  return ShortName(*tunefleet::v1::TaskScheduler_descriptor(), scheduler,
                   "TASK_SCHEDULER_");
}

absl::StatusOr<tunefleet::v1::TaskScheduler> ParseTaskScheduler(
    absl::string_view name) {
  if (name.empty()) return tunefleet::v1::TASK_SCHEDULER_GRADIENT;
  return ParseShortName<tunefleet::v1::TaskScheduler>(
      *tunefleet::v1::TaskScheduler_descriptor(), "TASK_SCHEDULER_",
      absl::StrReplaceAll(name, {{"-", "_"}}), "task scheduler");
}

std::string DtypeName(tunefleet::v1::Dtype dtype) {
  if (dtype == tunefleet::v1::DTYPE_UNSPECIFIED)
    dtype = tunefleet::v1::DTYPE_FP32;
  return ShortName(*tunefleet::v1::Dtype_descriptor(), dtype, "DTYPE_");
}

absl::StatusOr<tunefleet::v1::Dtype> ParseDtype(absl::string_view name) {
  return ParseShortName<tunefleet::v1::Dtype>(
      *tunefleet::v1::Dtype_descriptor(), "DTYPE_", name, "dtype");
}

}  // namespace tunefleet::contract
