#include "cli/server_records.h"

#include <chrono>
#include <map>
#include <memory>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "cli/common.h"
#include "kernels_templates/registry.h"
#include "store/store.h"

namespace tunefleet::cli {
namespace {

// How long one call to the server may take.
constexpr std::chrono::seconds kCallDeadline(60);
// Jobs per ListJobs page when no --page-size is given (the server's own
// default, 50, would take many calls for a long history).
constexpr uint32_t kJobsPage = 1000;

// The records of a tunefleet-server, read through its TuningService:
// ListDevices, QueryRecords (best_only) and ListJobs, every page of each.
// The server sends no template sources: those of this build's templates
// stand in, and records of a template version this build lacks are
// skipped by the emitter before their source is asked for.
class ServerRecords : public emitter::RecordSource {
 public:
  ServerRecords(const client::ServerConnection& server, uint32_t page_size)
      : server_(server),
        stub_(tunefleet::v1::TuningService::NewStub(client::Dial(server))),
        page_size_(page_size) {}

  absl::StatusOr<std::vector<std::string>> DeviceKeys() override {
    auto devices = Devices();
    if (!devices.ok()) return devices.status();
    std::vector<std::string> keys;
    for (const auto& [key, info] : **devices) keys.push_back(key);
    return keys;
  }

  absl::StatusOr<tunefleet::v1::DeviceInfo> GetDevice(
      const std::string& key) override {
    auto devices = Devices();
    if (!devices.ok()) return devices.status();
    for (const auto& [known, info] : **devices) {
      if (known == key) return info;
    }
    return absl::NotFoundError(absl::StrCat("no device with key '", key, "'"));
  }

  absl::StatusOr<std::vector<tunefleet::v1::TuningRecord>> BestRecords(
      const std::string& key) override {
    auto records = Records(key, /*best_only=*/true);
    if (!records.ok()) return records.status();
    return **records;
  }

  absl::StatusOr<std::vector<tunefleet::v1::DriverRevision>> DriverRevisions(
      const std::string& key) override {
    auto devices = Devices();
    if (!devices.ok()) return devices.status();
    auto it = revisions_.find(key);
    if (it == revisions_.end()) {
      return std::vector<tunefleet::v1::DriverRevision>();
    }
    return it->second;
  }

  // As store::Store::BestRecordsOnDriver, from every measured record of
  // the key, in BestRecords()' order of tasks.
  absl::StatusOr<std::vector<tunefleet::v1::TuningRecord>> BestRecordsOnDriver(
      const std::string& key, const std::string& driver,
      bool first_revision) override {
    auto order = Records(key, /*best_only=*/true);
    if (!order.ok()) return order.status();
    auto all = Records(key, /*best_only=*/false);
    if (!all.ok()) return all.status();
    // (workload, template name) -> the fastest OK record of the driver.
    std::map<std::pair<std::string, std::string>, tunefleet::v1::TuningRecord>
        best;
    for (const tunefleet::v1::TuningRecord& r : **all) {
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
    std::vector<tunefleet::v1::TuningRecord> out;
    for (const tunefleet::v1::TuningRecord& task : **order) {
      auto it =
          best.find(std::make_pair(task.workload_key(), task.template_name()));
      if (it != best.end()) out.push_back(std::move(it->second));
    }
    return out;
  }

  // Every page of QueryRecords for `key`: its best records, or its
  // measured ones; fetched once per source (BestRecordsOnDriver reads them
  // for each driver revision of the key).
  absl::StatusOr<const std::vector<tunefleet::v1::TuningRecord>*> Records(
      const std::string& key, bool best_only) {
    auto cached = records_.find({key, best_only});
    if (cached != records_.end()) return &cached->second;
    auto fetched = FetchRecords(key, best_only);
    if (!fetched.ok()) return fetched.status();
    return &records_
                .emplace(std::make_pair(key, best_only), *std::move(fetched))
                .first->second;
  }

  absl::StatusOr<std::vector<tunefleet::v1::TuningRecord>> FetchRecords(
      const std::string& key, bool best_only) {
    tunefleet::v1::QueryRecordsRequest request;
    request.set_device_key(key);
    request.set_best_only(best_only);
    request.set_page_size(page_size_);
    std::vector<tunefleet::v1::TuningRecord> records;
    absl::Status s = ForEachPage(
        *stub_, &tunefleet::v1::TuningService::Stub::QueryRecords,
        "QueryRecords", server_, request, absl::FromChrono(kCallDeadline),
        [&records](tunefleet::v1::QueryRecordsResponse& page) {
          for (auto& r : *page.mutable_records()) {
            records.push_back(std::move(r));
          }
          return true;
        });
    if (!s.ok()) return s;
    return records;
  }

  absl::StatusOr<std::optional<double>> ReferenceTime(
      const std::string& key, const std::string& workload,
      const std::string& template_name) override {
    if (!reference_ns_.has_value()) {
      absl::Status s = ReadReferenceTimes();
      if (!s.ok()) return s;
    }
    auto it =
        reference_ns_->find(std::make_tuple(key, workload, template_name));
    if (it == reference_ns_->end()) return std::optional<double>();
    return std::optional<double>(it->second);
  }

  absl::StatusOr<std::string> TemplateSource(const std::string& name,
                                             int version) override {
    for (const templates::KernelTemplate* t : templates::AllTemplates()) {
      if (t->name() == name && t->version() == version) {
        return std::string(t->source());
      }
    }
    return absl::NotFoundError(absl::StrCat("template ", name, " v", version,
                                            " is not in this build"));
  }

 private:
  using DeviceList =
      std::vector<std::pair<std::string, tunefleet::v1::DeviceInfo>>;
  // (device key, canonical workload, template name).
  using TaskKey = std::tuple<std::string, std::string, std::string>;

  // The server's device list, asked for once.
  absl::StatusOr<const DeviceList*> Devices() {
    if (devices_.has_value()) return &*devices_;
    tunefleet::v1::ListDevicesResponse response;
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + kCallDeadline);
    absl::Status s =
        FromGrpc(stub_->ListDevices(
                     &context, tunefleet::v1::ListDevicesRequest(), &response),
                 server_);
    if (!s.ok()) return s;
    devices_.emplace();
    for (const auto& d : response.devices()) {
      devices_->emplace_back(d.device_key(), d.device());
      revisions_[d.device_key()].assign(d.driver_revisions().begin(),
                                        d.driver_revisions().end());
    }
    return &*devices_;
  }

  // The fastest naive reference time per task over every job, as
  // store::Store::ReferenceTime computes it.
  absl::Status ReadReferenceTimes() {
    std::map<TaskKey, double> fastest;
    tunefleet::v1::ListJobsRequest request;
    request.set_page_size(page_size_ != 0 ? page_size_ : kJobsPage);
    absl::Status s = ForEachPage(
        *stub_, &tunefleet::v1::TuningService::Stub::ListJobs, "ListJobs",
        server_, request, absl::FromChrono(kCallDeadline),
        [&fastest](tunefleet::v1::ListJobsResponse& page) {
          for (const tunefleet::v1::JobProgress& job : page.jobs()) {
            if (job.reference_time_ns() <= 0) continue;
            const TaskKey task(job.device_key(), job.workload_key(),
                               job.template_name());
            auto [it, fresh] = fastest.emplace(task, job.reference_time_ns());
            if (!fresh && job.reference_time_ns() < it->second) {
              it->second = job.reference_time_ns();
            }
          }
          return true;
        });
    if (!s.ok()) return s;
    reference_ns_ = std::move(fastest);
    return absl::OkStatus();
  }

  const client::ServerConnection server_;
  std::unique_ptr<tunefleet::v1::TuningService::Stub> stub_;
  uint32_t page_size_;
  std::optional<DeviceList> devices_;
  // Records() by (device key, best only).
  std::map<std::pair<std::string, bool>,
           std::vector<tunefleet::v1::TuningRecord>>
      records_;
  // Driver revisions by device key (ListDevices' DeviceStatus).
  std::map<std::string, std::vector<tunefleet::v1::DriverRevision>> revisions_;
  std::optional<std::map<TaskKey, double>> reference_ns_;
};

class EmptyRecords : public emitter::RecordSource {
 public:
  absl::StatusOr<std::vector<std::string>> DeviceKeys() override {
    return std::vector<std::string>();
  }
  absl::StatusOr<tunefleet::v1::DeviceInfo> GetDevice(
      const std::string& key) override {
    return absl::NotFoundError(absl::StrCat("no device with key '", key, "'"));
  }
  absl::StatusOr<std::vector<tunefleet::v1::TuningRecord>> BestRecords(
      const std::string& key) override {
    return std::vector<tunefleet::v1::TuningRecord>();
  }
  absl::StatusOr<std::optional<double>> ReferenceTime(
      const std::string&, const std::string&, const std::string&) override {
    return std::optional<double>();
  }
  absl::StatusOr<std::string> TemplateSource(const std::string& name,
                                             int version) override {
    return absl::NotFoundError(name);
  }
};

// The records of a database file the source owns.
class DatabaseRecords : public emitter::StoreRecords {
 public:
  explicit DatabaseRecords(std::unique_ptr<store::Store> opened)
      : StoreRecords(opened.get()), store_(std::move(opened)) {}

 private:
  std::unique_ptr<store::Store> store_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<emitter::RecordSource>> OpenRecordSource(
    const SourceFlags& flags) {
  if (!flags.server.empty()) {
    TUNEFLEET_ASSIGN_OR_RETURN(
        client::ServerConnection server,
        client::ConnectionTo(flags.server, flags.connection));
    return MakeServerRecords(server, flags.page_size);
  }
  TUNEFLEET_ASSIGN_OR_RETURN(std::unique_ptr<store::Store> store,
                             OpenDatabase(flags.db));
  return std::make_unique<DatabaseRecords>(std::move(store));
}

std::unique_ptr<emitter::RecordSource> MakeServerRecords(
    const client::ServerConnection& server, uint32_t page_size) {
  return std::make_unique<ServerRecords>(server, page_size);
}

std::unique_ptr<emitter::RecordSource> MakeEmptyRecords() {
  return std::make_unique<EmptyRecords>();
}

}  // namespace tunefleet::cli
