#include "store/table_export.h"

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "google/protobuf/util/json_util.h"
#include "kernels_templates/registry.h"

namespace tunefleet::store {

absl::StatusOr<std::string> ExportJobTable(Store& store, int64_t job_id) {
  TUNEFLEET_ASSIGN_OR_RETURN(StoredJob job, store.GetJob(job_id));
  TUNEFLEET_ASSIGN_OR_RETURN(const templates::KernelTemplate* tmpl,
                             templates::FindTemplate("", job.template_name));
  std::string device_json;
  if (absl::StatusOr<tunefleet::v1::DeviceInfo> info =
          store.GetDevice(job.device_key);
      info.ok()) {
    (void)google::protobuf::util::MessageToJsonString(*info, &device_json);
  }
  RecordFilter filter;
  filter.job_id = job_id;
  TUNEFLEET_ASSIGN_OR_RETURN(std::vector<tunefleet::v1::TuningRecord> records,
                             store.QueryRecords(filter));
  std::string out = absl::StrCat(
      "# format: tunefleet table v1\n# template: ", job.template_name,
      "\n# template_version: ", job.template_version,
      "\n# workload: ", job.workload, "\n# device_key: ", job.device_key,
      "\n# job: ", job_id, "\n");
  if (!device_json.empty())
    absl::StrAppend(&out, "# device: ", device_json, "\n");
  for (const templates::Knob& k : tmpl->knobs())
    absl::StrAppend(&out, k.name, ",");
  absl::StrAppend(&out, "time_ms,error\n");
  for (const tunefleet::v1::TuningRecord& r : records) {
    if (r.error() == tunefleet::v1::Measurement::CANCELLED) continue;
    std::vector<std::pair<std::string, int64_t>> pairs;
    for (const auto& k : r.config().knobs())
      pairs.emplace_back(k.name(), k.value());
    absl::StatusOr<templates::KnobValues> config = tmpl->ConfigFromPairs(pairs);
    if (!config.ok()) continue;
    for (int64_t v : *config) absl::StrAppend(&out, v, ",");
    const bool ok = r.error() == tunefleet::v1::Measurement::OK;
    absl::StrAppend(&out, ok ? absl::StrCat(r.time_ns() / 1e6) : "", ",",
                    tunefleet::v1::Measurement::Error_Name(r.error()), "\n");
  }
  return out;
}

}  // namespace tunefleet::store
