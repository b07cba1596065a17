// The one source of a trial's timing policy (common.proto, TimingPolicy):
// tunefleet's defaults, the caps a request may ask for, and how a partial
// policy is completed. The server completes and checks every job's policy
// with these; the agent reads a field left 0 as the same default.
#ifndef TUNEFLEET_CONTRACT_TIMING_POLICY_H_
#define TUNEFLEET_CONTRACT_TIMING_POLICY_H_

#include <cstdint>

#include "absl/status/status.h"
#include "tunefleet/v1/common.pb.h"

namespace tunefleet::contract {

// Caps on a policy's fields (per trial).
inline constexpr uint32_t kMaxRepeat = 100;
// number, warmup and max_launches: launches.
inline constexpr uint32_t kMaxLaunchesPerTrial = 10000;
inline constexpr double kMaxMinRepeatMs = 60000;  // min_repeat_ms
inline constexpr double kMaxTotalMs = 600000;     // max_total_ms
inline constexpr double kMaxCooldownMs = 60000;   // cooldown_ms
inline constexpr double kMaxTimeoutMs = 3600000;  // timeout_ms

// tunefleet's defaults: one warm-up launch, 3 rounds of at least 1 launch
// each lasting >= 10 ms, at most 200 timed launches and 2 s of kernel time
// per trial, no cooldown, and 60 s for the whole trial (compile, fill,
// check and time) before the agent kills its worker.
tunefleet::v1::TimingPolicy DefaultTimingPolicy();

// OK when every field of `policy` is within its cap (NaN refused). Errors:
// INVALID_ARGUMENT "timing: <field> must be ..." naming the first one out.
absl::Status CheckTimingPolicy(const tunefleet::v1::TimingPolicy& policy);

// `policy` with each field left 0 taken from DefaultTimingPolicy(), except
// min_repeat_ms and cooldown_ms, where 0 means none.
tunefleet::v1::TimingPolicy WithDefaults(
    const tunefleet::v1::TimingPolicy& policy);

}  // namespace tunefleet::contract

#endif  // TUNEFLEET_CONTRACT_TIMING_POLICY_H_
