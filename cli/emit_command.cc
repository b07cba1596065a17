#include "cli/emit_command.h"

#include <chrono>
#include <cstdint>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "cli/common.h"
#include "emitter/emitter.h"
#include "kernels_templates/registry.h"
#include "store/store.h"
#include "tunefleet/v1/tuning.grpc.pb.h"

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
    tunefleet::v1::QueryRecordsRequest request;
    request.set_device_key(key);
    request.set_best_only(true);
    request.set_page_size(page_size_);
    std::vector<tunefleet::v1::TuningRecord> records;
    while (true) {
      tunefleet::v1::QueryRecordsResponse response;
      grpc::ClientContext context;
      context.set_deadline(std::chrono::system_clock::now() + kCallDeadline);
      absl::Status s =
          FromGrpc(stub_->QueryRecords(&context, request, &response), server_);
      if (!s.ok()) return s;
      for (auto& r : *response.mutable_records()) {
        records.push_back(std::move(r));
      }
      if (response.next_page_token().empty()) return records;
      if (response.next_page_token() == request.page_token()) {
        return absl::InternalError(
            "QueryRecords: the server sent the same page token again");
      }
      request.set_page_token(response.next_page_token());
    }
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
    }
    return &*devices_;
  }

  // The fastest naive reference time per task over every job, as
  // store::Store::ReferenceTime computes it.
  absl::Status ReadReferenceTimes() {
    std::map<TaskKey, double> fastest;
    tunefleet::v1::ListJobsRequest request;
    request.set_page_size(page_size_ != 0 ? page_size_ : kJobsPage);
    while (true) {
      tunefleet::v1::ListJobsResponse response;
      grpc::ClientContext context;
      context.set_deadline(std::chrono::system_clock::now() + kCallDeadline);
      absl::Status s =
          FromGrpc(stub_->ListJobs(&context, request, &response), server_);
      if (!s.ok()) return s;
      for (const tunefleet::v1::JobProgress& job : response.jobs()) {
        if (job.reference_time_ns() <= 0) continue;
        const TaskKey task(job.device_key(), job.workload_key(),
                           job.template_name());
        auto [it, fresh] = fastest.emplace(task, job.reference_time_ns());
        if (!fresh && job.reference_time_ns() < it->second) {
          it->second = job.reference_time_ns();
        }
      }
      if (response.next_page_token().empty()) break;
      if (response.next_page_token() == request.page_token()) {
        return absl::InternalError(
            "ListJobs: the server sent the same page token again");
      }
      request.set_page_token(response.next_page_token());
    }
    reference_ns_ = std::move(fastest);
    return absl::OkStatus();
  }

  const client::ServerConnection server_;
  std::unique_ptr<tunefleet::v1::TuningService::Stub> stub_;
  uint32_t page_size_;
  std::optional<DeviceList> devices_;
  std::optional<std::map<TaskKey, double>> reference_ns_;
};

// The only key of `keys`, for a command without --device-key. Errors:
// INVALID_ARGUMENT listing them when there is not exactly one.
absl::StatusOr<std::string> OnlyDeviceKey(const std::vector<std::string>& keys,
                                          const std::string& where) {
  if (keys.size() == 1) return keys.front();
  return absl::InvalidArgumentError(absl::StrCat(
      "--device-key is needed: ", where, " has ", keys.size(),
      " device keys:", keys.empty() ? "" : " ", absl::StrJoin(keys, " ")));
}

// `device_keys`: the keys emitted (those given, else the only one found).
void PrintSummary(const EmitOptions& o,
                  const std::vector<std::string>& device_keys,
                  const emitter::EmitSummary& summary) {
  if (o.json) {
    std::cout << nlohmann::json{{"out", o.out},
                                {"device_keys", device_keys},
                                {"entries", summary.entries},
                                {"reference_entries",
                                 summary.reference_entries},
                                {"library_entries", summary.library_entries},
                                {"files", summary.files},
                                {"skipped", summary.skipped}}
                     .dump(2)
              << "\n";
    return;
  }
  std::cout << "wrote " << o.out << ": " << summary.entries
            << (summary.entries == 1 ? " tuned entry" : " tuned entries");
  if (summary.reference_entries > 0) {
    std::cout << " (" << summary.reference_entries
              << " use the naive reference kernel, faster than every tuned "
                 "config measured)";
  }
  if (summary.library_entries > 0) {
    std::cout << " (" << summary.library_entries
              << " call a vendor library, measured fastest for their "
                 "workload; the package links it)";
  }
  std::cout << "\n";
  for (const std::string& f : summary.files) std::cout << "  " << f << "\n";
  for (const std::string& s : summary.skipped) {
    std::cout << "  skipped " << s << "\n";
  }
  std::cout << "use it with add_subdirectory(" << o.out
            << ") or cmake --install, then find_package(tunefleet_tuned) and "
               "link tunefleet::tuned\n";
}

}  // namespace

CLI::App* AddEmitCommand(CLI::App& app, EmitOptions& o) {
  CLI::App* cmd = app.add_subcommand(
      "emit",
      "write a C++ library of the best kernels for device keys: sources, "
      "lookup by device and shape, a header, and a CMake package");
  CLI::Option* db =
      cmd->add_option("--db", o.db, "database file")->capture_default_str();
  cmd->add_option("--server", o.server,
                  "read the records from a tunefleet-server (HOST:PORT) "
                  "instead of --db")
      ->excludes(db);
  AddConnectionFlags(cmd, o.connection);
  cmd->add_option("--page-size", o.page_size,
                  "with --server: records (and jobs) per page asked of the "
                  "server (default: the server's)")
      ->check(CLI::Range(1, 10000));
  cmd->add_option("--device-key", o.device_keys,
                  "device key to include (repeat for several; default: the "
                  "database's or server's only device key)");
  cmd->add_option("--out", o.out, "output directory")->required();
  cmd->add_flag("--json", o.json, "print a JSON summary on stdout");
  return cmd;
}

int RunEmit(const EmitOptions& o) {
  std::unique_ptr<store::Store> store;  // with --db
  std::unique_ptr<emitter::RecordSource> records;
  if (!o.server.empty()) {
    absl::StatusOr<client::ServerConnection> server =
        client::ConnectionTo(o.server, o.connection);
    if (!server.ok()) return ReportError("emit", server.status());
    records = std::make_unique<ServerRecords>(*server, o.page_size);
  } else {
    absl::StatusOr<std::unique_ptr<store::Store>> opened = OpenDatabase(o.db);
    if (!opened.ok()) return ReportError("emit", opened.status());
    store = *std::move(opened);
    records = std::make_unique<emitter::StoreRecords>(store.get());
  }
  emitter::EmitOptions options{o.device_keys, o.out};
  if (options.device_keys.empty()) {
    absl::StatusOr<std::vector<std::string>> keys = records->DeviceKeys();
    if (!keys.ok()) return ReportError("emit", keys.status());
    absl::StatusOr<std::string> key =
        OnlyDeviceKey(*keys, o.server.empty() ? "the database" : "the server");
    if (!key.ok()) return ReportError("emit", key.status());
    options.device_keys.push_back(*key);
  }
  absl::StatusOr<emitter::EmitSummary> summary =
      emitter::EmitLibrary(*records, options);
  if (!summary.ok()) return ReportError("emit", summary.status());
  PrintSummary(o, options.device_keys, *summary);
  return kExitOk;
}

}  // namespace tunefleet::cli
