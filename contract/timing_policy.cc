#include "contract/timing_policy.h"

#include <utility>

#include "absl/strings/str_cat.h"

namespace tunefleet::contract {
namespace {

absl::Status Invalid(absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat("timing: ", what));
}

// OK when lo <= value <= hi (NaN is neither).
absl::Status CheckMs(absl::string_view field, double value, double hi) {
  if (value >= 0 && value <= hi) return absl::OkStatus();
  return Invalid(absl::StrCat(field, " must be within 0..",
                              static_cast<int64_t>(hi), " ms, got ", value));
}

}  // namespace

tunefleet::v1::TimingPolicy DefaultTimingPolicy() {
  tunefleet::v1::TimingPolicy t;
  t.set_warmup(1);
  t.set_repeat(3);
  t.set_number(1);
  t.set_min_repeat_ms(10);
  t.set_max_launches(200);
  t.set_max_total_ms(2000);
  t.set_cooldown_ms(0);
  t.set_timeout_ms(60000);
  return t;
}

absl::Status CheckTimingPolicy(const tunefleet::v1::TimingPolicy& p) {
  if (p.repeat() > kMaxRepeat) {
    return Invalid(
        absl::StrCat("repeat must be <= ", kMaxRepeat, ", got ", p.repeat()));
  }
  const std::pair<const char*, uint32_t> launches[] = {
      {"number", p.number()},
      {"warmup", p.warmup()},
      {"max_launches", p.max_launches()}};
  for (const auto& [name, value] : launches) {
    if (value > kMaxLaunchesPerTrial) {
      return Invalid(absl::StrCat(name, " must be <= ", kMaxLaunchesPerTrial,
                                  ", got ", value));
    }
  }
  const std::pair<const char*, std::pair<double, double>> times[] = {
      {"min_repeat_ms", {p.min_repeat_ms(), kMaxMinRepeatMs}},
      {"max_total_ms", {p.max_total_ms(), kMaxTotalMs}},
      {"cooldown_ms", {p.cooldown_ms(), kMaxCooldownMs}},
      {"timeout_ms", {p.timeout_ms(), kMaxTimeoutMs}}};
  for (const auto& [name, value_and_cap] : times) {
    if (absl::Status s =
            CheckMs(name, value_and_cap.first, value_and_cap.second);
        !s.ok()) {
      return s;
    }
  }
  return absl::OkStatus();
}

tunefleet::v1::TimingPolicy WithDefaults(const tunefleet::v1::TimingPolicy& p) {
  tunefleet::v1::TimingPolicy t = DefaultTimingPolicy();
  if (p.repeat()) t.set_repeat(p.repeat());
  if (p.number()) t.set_number(p.number());
  if (p.warmup()) t.set_warmup(p.warmup());
  if (p.max_launches()) t.set_max_launches(p.max_launches());
  if (p.max_total_ms() > 0) t.set_max_total_ms(p.max_total_ms());
  if (p.timeout_ms() > 0) t.set_timeout_ms(p.timeout_ms());
  // 0 means something for these two: no minimum round time, no cooldown.
  t.set_min_repeat_ms(p.min_repeat_ms());
  t.set_cooldown_ms(p.cooldown_ms());
  return t;
}

}  // namespace tunefleet::contract
