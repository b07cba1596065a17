#include "transfer/transfer.h"

#include <map>

#include "base/status_macros.h"
#include "search_space/task_features.h"
#include "store/store.h"
#include "trial/trial_request.h"

namespace tunefleet::transfer {

using tunefleet::v1::Measurement;

absl::StatusOr<std::vector<search::HistoryGroup>> TransferHistory(
    store::Store& store, const templates::KernelTemplate& tmpl,
    size_t max_rows) {
  // Measured records only (CANCELLED and DEVICE_LOST say nothing about
  // the config), at most kHistoryReadFactor * max_rows trial rows read,
  // grouped by job, newest job first.
  TUNEFLEET_ASSIGN_OR_RETURN(
      std::vector<tunefleet::v1::TuningRecord> records,
      store.HistoryRecords(
          std::string(tmpl.op()), std::string(tmpl.name()),
          static_cast<int64_t>(kHistoryReadFactor * max_rows)));
  std::map<int64_t, std::vector<const tunefleet::v1::TuningRecord*>,
           std::greater<int64_t>>
      by_job;
  for (const tunefleet::v1::TuningRecord& r : records) {
    if (r.error() == Measurement::CANCELLED ||
        r.error() == Measurement::DEVICE_LOST) {
      continue;
    }
    by_job[r.job_id()].push_back(&r);
  }
  std::map<std::string, templates::DeviceLimits> limits;
  std::vector<search::HistoryGroup> groups;
  size_t rows = 0;
  for (const auto& [job, job_records] : by_job) {
    if (rows >= max_rows) break;
    double best = 0;
    for (const auto* r : job_records) {
      if (r->error() == Measurement::OK && (best == 0 || r->time_ns() < best)) {
        best = r->time_ns();
      }
    }
    if (best == 0) continue;
    const tunefleet::v1::TuningRecord& first = *job_records.front();
    absl::StatusOr<templates::Workload> workload =
        trial::WorkloadFromProto(first.workload());
    if (!workload.ok()) continue;
    if (!limits.count(first.device_key())) {
      absl::StatusOr<tunefleet::v1::DeviceInfo> info =
          store.GetDevice(first.device_key());
      limits[first.device_key()] = info.ok()
                                       ? trial::LimitsFromDeviceInfo(*info)
                                       : templates::DeviceLimits{};
    }
    const search_space::TaskFeatures features(tmpl, *workload,
                                              limits[first.device_key()]);
    search::HistoryGroup group;
    for (const auto* r : job_records) {
      std::vector<std::pair<std::string, int64_t>> pairs;
      for (const auto& k : r->config().knobs()) {
        pairs.emplace_back(k.name(), k.value());
      }
      absl::StatusOr<templates::KnobValues> config =
          tmpl.ConfigFromPairs(pairs);
      if (!config.ok()) continue;  // recorded under other knobs
      group.features.AddRow(features(*config));
      group.labels.push_back(r->error() == Measurement::OK
                                 ? static_cast<float>(best / r->time_ns())
                                 : 0.0f);
    }
    if (group.labels.empty()) continue;
    rows += group.labels.size();
    groups.push_back(std::move(group));
  }
  return groups;
}

}  // namespace tunefleet::transfer
