// Test support: runs configs of a kernel template on the local OpenCL
// device (PoCL in CI) against the template's own reference kernel.
#ifndef TUNEFLEET_TESTS_TEMPLATE_HARNESS_H_
#define TUNEFLEET_TESTS_TEMPLATE_HARNESS_H_

#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "device_agent/measurer.h"
#include "kernels_templates/kernel_template.h"
#include "trial/trial_request.h"

namespace tunefleet::testing {

// The device, opened once per test binary.
inline agent::Measurer& Device() {
  static std::unique_ptr<agent::Measurer> measurer = [] {
    auto device = agent::OpenDevice(0, 0);
    auto m = agent::Measurer::Create(*std::move(device));
    return *std::move(m);
  }();
  return *measurer;
}

inline templates::DeviceLimits DeviceLimits() {
  return trial::LimitsFromDeviceInfo(Device().device_info());
}

// Measures one config with a single timed launch.
inline tunefleet::v1::Measurement RunConfig(
    const templates::KernelTemplate& tmpl, const templates::Workload& w,
    const templates::KnobValues& config) {
  tunefleet::v1::TimingPolicy quick;
  quick.set_repeat(1);
  quick.set_number(1);
  return Device().Measure(
      trial::BuildMeasureRequest(tmpl, w, config, 1, quick));
}

// `count` random configs of the template valid for `w` on this device
// (fewer if the space is smaller), drawn with `seed`.
inline std::vector<templates::KnobValues> RandomConfigs(
    const templates::KernelTemplate& tmpl, const templates::Workload& w,
    int count, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<templates::KnobValues> out;
  const templates::DeviceLimits limits = DeviceLimits();
  for (int attempt = 0; attempt < 20000 && static_cast<int>(out.size()) < count;
       ++attempt) {
    templates::KnobValues c;
    for (const templates::Knob& k : tmpl.knobs()) {
      c.push_back(k.values[rng() % k.values.size()]);
    }
    if (tmpl.CheckConfig(c, w, limits).ok()) out.push_back(c);
  }
  return out;
}

// Up to `count` random configs of the template valid for `w` on this device
// that set knob `knob` to `value`, drawn with `seed`.
inline std::vector<templates::KnobValues> RandomConfigsWith(
    const templates::KernelTemplate& tmpl, const templates::Workload& w,
    const std::string& knob, int64_t value, int count, uint64_t seed) {
  size_t index = 0;
  while (index < tmpl.knobs().size() && tmpl.knobs()[index].name != knob) {
    ++index;
  }
  std::vector<templates::KnobValues> out;
  if (index == tmpl.knobs().size()) return out;
  for (templates::KnobValues& c : RandomConfigs(tmpl, w, 50 * count, seed)) {
    if (static_cast<int>(out.size()) == count) break;
    if (c[index] == value) out.push_back(std::move(c));
  }
  return out;
}

// Runs `count` random valid configs on each workload; returns a line per
// config that did not verify (empty: all good). Also fails when a
// workload has no valid config at all.
inline std::vector<std::string> CheckRandomConfigs(
    const templates::KernelTemplate& tmpl,
    const std::vector<templates::Workload>& workloads, int count,
    uint64_t seed) {
  std::vector<std::string> failures;
  for (const templates::Workload& w : workloads) {
    const std::vector<templates::KnobValues> configs =
        RandomConfigs(tmpl, w, count, seed++);
    if (configs.empty()) {
      failures.push_back(absl::StrCat(w.Canonical(), ": no valid config"));
    }
    for (const templates::KnobValues& c : configs) {
      const tunefleet::v1::Measurement m = RunConfig(tmpl, w, c);
      if (m.error() != tunefleet::v1::Measurement::OK) {
        failures.push_back(
            absl::StrCat(w.Canonical(), " ", tmpl.ConfigString(c), ": ",
                         tunefleet::v1::Measurement::Error_Name(m.error()), " ",
                         m.error_message().substr(0, 300)));
      }
    }
  }
  return failures;
}

}  // namespace tunefleet::testing

#endif  // TUNEFLEET_TESTS_TEMPLATE_HARNESS_H_
