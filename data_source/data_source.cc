#include "data_source/data_source.h"

#include <map>
#include <tuple>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "base/status_macros.h"
#include "contract/names.h"
#include "google/protobuf/util/message_differencer.h"
#include "kernels_templates/registry.h"

namespace tunefleet::data_source {

using tunefleet::v1::TuningRecord;

absl::StatusOr<std::vector<TuningRecord>> RecordReader::BestRecordsOnDriver(
    const std::string& key, const std::string&, bool) {
  return absl::UnimplementedError(absl::StrCat(
      "device key ", key,
      ": this record source cannot tell the records of its drivers apart"));
}

// (device key, canonical workload, template name).
using TaskKey = std::tuple<std::string, std::string, std::string>;

struct DataSource::Snapshot {
  std::optional<std::vector<DeviceView>> devices;
  // Records by (device key, best only).
  std::map<std::pair<std::string, bool>, std::vector<TuningRecord>> records;
  // The fastest naive reference time per task, in ns.
  std::optional<std::map<TaskKey, double>> reference_ns;
};

DataSource::DataSource() : snapshot_(std::make_unique<Snapshot>()) {}
DataSource::~DataSource() = default;

absl::StatusOr<tunefleet::v1::JobProgress> DataSource::Watch(
    int64_t job_id, const ProgressUpdate& update) {
  return PollJob(job_id, update, kWatchPoll);
}

absl::StatusOr<tunefleet::v1::JobProgress> DataSource::PollJob(
    int64_t job_id, const ProgressUpdate& update, absl::Duration every) {
  tunefleet::v1::JobProgress last;
  for (bool first = true;; first = false) {
    absl::StatusOr<tunefleet::v1::JobProgress> now = Job(job_id);
    if (!now.ok()) return now.status();
    if (first ||
        !google::protobuf::util::MessageDifferencer::Equals(*now, last)) {
      if (update) update(*now);
      last = *std::move(now);
    }
    if (contract::IsFinalJobState(last.state())) return last;
    absl::SleepFor(every);
  }
}

absl::StatusOr<std::vector<DeviceView>> DataSource::Devices() {
  TUNEFLEET_ASSIGN_OR_RETURN(FleetView fleet, Fleet());
  return std::move(fleet.devices);
}

absl::StatusOr<const std::vector<DeviceView>*> DataSource::SnapshotDevices() {
  if (!snapshot_->devices.has_value()) {
    TUNEFLEET_ASSIGN_OR_RETURN(std::vector<DeviceView> devices, Devices());
    snapshot_->devices = std::move(devices);
  }
  return &*snapshot_->devices;
}

absl::StatusOr<const DeviceView*> DataSource::SnapshotDevice(
    const std::string& key) {
  TUNEFLEET_ASSIGN_OR_RETURN(const std::vector<DeviceView>* devices,
                             SnapshotDevices());
  for (const DeviceView& d : *devices) {
    if (d.device_key == key) return &d;
  }
  return absl::NotFoundError(absl::StrCat("no device with key '", key, "'"));
}

absl::StatusOr<const std::vector<TuningRecord>*> DataSource::SnapshotRecords(
    const std::string& key, bool best_only) {
  auto cached = snapshot_->records.find({key, best_only});
  if (cached != snapshot_->records.end()) return &cached->second;
  RecordQuery query;
  query.device_key = key;
  query.best_only = best_only;
  std::vector<TuningRecord> records;
  TUNEFLEET_RETURN_IF_ERROR(
      Records(query, [&records](const std::vector<TuningRecord>& page) {
        records.insert(records.end(), page.begin(), page.end());
      }));
  return &snapshot_->records
              .emplace(std::make_pair(key, best_only), std::move(records))
              .first->second;
}

absl::StatusOr<std::vector<std::string>> DataSource::DeviceKeys() {
  absl::MutexLock lock(&snapshot_mu_);
  TUNEFLEET_ASSIGN_OR_RETURN(const std::vector<DeviceView>* devices,
                             SnapshotDevices());
  std::vector<std::string> keys;
  keys.reserve(devices->size());
  for (const DeviceView& d : *devices) {
    keys.push_back(d.device_key);
  }
  return keys;
}

absl::StatusOr<tunefleet::v1::DeviceInfo> DataSource::GetDevice(
    const std::string& key) {
  absl::MutexLock lock(&snapshot_mu_);
  TUNEFLEET_ASSIGN_OR_RETURN(const DeviceView* device, SnapshotDevice(key));
  return device->device;
}

absl::StatusOr<std::vector<tunefleet::v1::DriverRevision>>
DataSource::DriverRevisions(const std::string& key) {
  absl::MutexLock lock(&snapshot_mu_);
  // Devices()' own errors pass; only an unknown key has no revisions.
  TUNEFLEET_RETURN_IF_ERROR(SnapshotDevices().status());
  absl::StatusOr<const DeviceView*> device = SnapshotDevice(key);
  if (!device.ok()) return std::vector<tunefleet::v1::DriverRevision>();
  return (*device)->driver_revisions;
}

absl::StatusOr<std::vector<TuningRecord>> DataSource::BestRecords(
    const std::string& key) {
  absl::MutexLock lock(&snapshot_mu_);
  TUNEFLEET_ASSIGN_OR_RETURN(const std::vector<TuningRecord>* records,
                             SnapshotRecords(key, /*best_only=*/true));
  return *records;
}

absl::StatusOr<std::vector<TuningRecord>> DataSource::BestRecordsOnDriver(
    const std::string& key, const std::string& driver, bool first_revision) {
  absl::MutexLock lock(&snapshot_mu_);
  TUNEFLEET_ASSIGN_OR_RETURN(const std::vector<TuningRecord>* order,
                             SnapshotRecords(key, /*best_only=*/true));
  TUNEFLEET_ASSIGN_OR_RETURN(const std::vector<TuningRecord>* all,
                             SnapshotRecords(key, /*best_only=*/false));
  // (workload, template name) -> the fastest OK record of the driver.
  std::map<std::pair<std::string, std::string>, TuningRecord> best;
  for (const TuningRecord& r : *all) {
    const std::string& measured_on = r.provenance().driver_version();
    if (r.error() != tunefleet::v1::Measurement::OK ||
        !(measured_on == driver || (first_revision && measured_on.empty()))) {
      continue;
    }
    auto [it, fresh] = best.try_emplace(
        std::make_pair(r.workload_key(), r.template_name()), r);
    if (!fresh && (r.time_ns() < it->second.time_ns() ||
                   (r.time_ns() == it->second.time_ns() &&
                    r.trial_id() < it->second.trial_id()))) {
      it->second = r;
    }
  }
  std::vector<TuningRecord> out;
  for (const TuningRecord& task : *order) {
    auto it =
        best.find(std::make_pair(task.workload_key(), task.template_name()));
    if (it != best.end()) out.push_back(std::move(it->second));
  }
  return out;
}

absl::StatusOr<std::optional<double>> DataSource::ReferenceTime(
    const std::string& key, const std::string& workload,
    const std::string& template_name) {
  absl::MutexLock lock(&snapshot_mu_);
  if (!snapshot_->reference_ns.has_value()) {
    TUNEFLEET_ASSIGN_OR_RETURN(std::vector<tunefleet::v1::JobProgress> jobs,
                               Jobs(0));
    std::map<TaskKey, double> fastest;
    for (const tunefleet::v1::JobProgress& job : jobs) {
      if (job.reference_time_ns() <= 0) continue;
      auto [it, fresh] = fastest.emplace(
          TaskKey(job.device_key(), job.workload_key(), job.template_name()),
          job.reference_time_ns());
      if (!fresh && job.reference_time_ns() < it->second) {
        it->second = job.reference_time_ns();
      }
    }
    snapshot_->reference_ns = std::move(fastest);
  }
  auto it =
      snapshot_->reference_ns->find(TaskKey(key, workload, template_name));
  if (it == snapshot_->reference_ns->end()) return std::optional<double>();
  return std::optional<double>(it->second);
}

absl::StatusOr<std::string> DataSource::TemplateSource(const std::string& name,
                                                       int version) {
  // Template names are unique in the registry (RegisterTemplate).
  absl::StatusOr<const templates::KernelTemplate*> t =
      templates::FindTemplate("", name);
  if (t.ok() && (*t)->version() == version) {
    return std::string((*t)->source());
  }
  return absl::NotFoundError(
      absl::StrCat("template ", name, " v", version, " is not in this build"));
}

}  // namespace tunefleet::data_source
