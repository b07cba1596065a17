#include "cli/query_command.h"

#include <algorithm>
#include <functional>
#include <iostream>
#include <memory>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/time/time.h"
#include "base/status_macros.h"
#include "cli/common.h"
#include "cli/server_source.h"
#include "cli/table_text.h"
#include "kernels_templates/workload.h"
#include "tunefleet/v1/tuning.pb.h"

namespace tunefleet::cli {
namespace {

// Calls `page` on each page of the records `o` asks for, in order, as it
// arrives, from the server or the database file (DataSource::Records):
// never holds more than one page.
absl::Status ReadRecords(const QueryOptions& o,
                         const data_source::RecordPage& page) {
  TUNEFLEET_ASSIGN_OR_RETURN(std::unique_ptr<data_source::DataSource> source,
                             OpenDataSource({o.server, o.connection, o.db, 0}));
  data_source::RecordQuery query;
  query.op = o.op;
  query.device_key = o.device_key;
  query.job_id = o.job_id;
  query.best_only = !o.all;
  query.page_size = o.page_size;
  return source->Records(query, page);
}

// `text` with `indent` before each of its lines.
std::string Indented(const std::string& text, absl::string_view indent) {
  std::string out(indent);
  for (char c : text) {
    out.push_back(c);
    if (c == '\n') out.append(indent.data(), indent.size());
  }
  return out;
}

// The device keys of the server or the database file as the contract's
// DeviceStatus: a server's Fleet(), with the agents connected now; a
// file's Devices() (none are connected, and its Fleet() would count every
// agent's trials).
absl::StatusOr<std::vector<tunefleet::v1::DeviceStatus>> ReadDevices(
    const DevicesOptions& o) {
  TUNEFLEET_ASSIGN_OR_RETURN(std::unique_ptr<data_source::DataSource> source,
                             OpenDataSource({o.server, o.connection, o.db}));
  data_source::FleetView fleet;
  if (!o.server.empty()) {
    TUNEFLEET_ASSIGN_OR_RETURN(fleet, source->Fleet());
  } else {
    TUNEFLEET_ASSIGN_OR_RETURN(fleet.devices, source->Devices());
  }
  const std::vector<data_source::DeviceView>& views = fleet.devices;
  const std::vector<data_source::AgentView>& agents = fleet.agents;
  std::vector<tunefleet::v1::DeviceStatus> devices;
  devices.reserve(views.size());
  for (const data_source::DeviceView& view : views) {
    tunefleet::v1::DeviceStatus& d = devices.emplace_back();
    d.set_device_key(view.device_key);
    *d.mutable_device() = view.device;
    d.set_connected_agents(view.connected_agents);
    for (const data_source::AgentView& agent : agents) {
      if (agent.connected && agent.device_key == view.device_key) {
        d.add_agent_names(agent.name);
      }
    }
    for (const tunefleet::v1::DriverRevision& r : view.driver_revisions) {
      *d.add_driver_revisions() = r;
    }
  }
  return devices;
}

}  // namespace

std::string RecordTable(const std::vector<tunefleet::v1::TuningRecord>& records,
                        size_t max_width, bool provenance) {
  std::vector<std::vector<std::string>> rows;
  rows.reserve(records.size());
  for (const auto& r : records) {
    rows.push_back({r.device_key(), r.workload_key(),
                    tunefleet::v1::Measurement::Error_Name(r.error()),
                    absl::StrFormat("%.4f", r.time_ns() / 1e6),
                    absl::StrFormat("%.2f", r.gflops()),
                    ConfigText(r.config())});
    if (provenance) {
      const tunefleet::v1::Provenance& p = r.provenance();
      auto or_dash = [](const std::string& s) {
        return s.empty() ? std::string("-") : s;
      };
      rows.back().insert(
          rows.back().end(),
          {or_dash(p.driver_version()), or_dash(p.kernel_sha256()),
           absl::StrCat("v", p.template_version(), " ",
                        or_dash(p.template_source_hash())),
           or_dash(p.tunefleet_version()),
           absl::FormatTime("%Y-%m-%dT%H:%M:%SZ",
                            absl::FromUnixMillis(p.measured_unix_ms()),
                            absl::UTCTimeZone()),
           or_dash(p.agent_name()), p.imported() ? "imported" : "local"});
    }
  }
  std::vector<std::string> header = {"DEVICE KEY", "WORKLOAD", "RESULT",
                                     "TIME (ms)",  "GFLOP/s",  "CONFIG"};
  std::vector<bool> right = {false, false, false, true, true, false};
  if (provenance) {
    header.insert(header.end(), {"DRIVER", "KERNEL SHA-256", "TEMPLATE",
                                 "TUNEFLEET", "MEASURED", "AGENT", "ORIGIN"});
    right.resize(header.size(), false);
  }
  return FitTable(header, rows, right, /*cut_columns=*/{0, 1, 5}, max_width);
}

void AddQueryOptions(CLI::App* cmd, QueryOptions& o) {
  AddDbOption(cmd, o.db, "database file");
  AddServerFlags(cmd, o.server, o.connection, "ask a tunefleet-server instead");
  cmd->add_option("--op", o.op, "only this op");
  cmd->add_option("--device-key", o.device_key, "only this device key");
  cmd->add_option("--job", o.job_id, "only this job's records");
  cmd->add_flag("--all", o.all, "every record, not only the best");
  cmd->add_flag("--json", o.json, "print a JSON list on stdout");
  cmd->add_flag("--wide", o.wide,
                "print every cell in full (default: long device keys, "
                "workloads and configs are cut with '…' to fit the "
                "terminal), and each record's provenance: driver, kernel "
                "SHA-256, template version, tunefleet version, measurement "
                "time, agent, origin");
  cmd->add_option("--page-size", o.page_size,
                  "records per request to the server (default: the "
                  "server's, 1000) or per read of --db (default 1000); "
                  "every page is fetched and printed as it comes")
      ->check(CLI::Range(1, 10000));
}

int RunQuery(const QueryOptions& o) {
  // Printed a page at a time as pages arrive: a JSON list whose elements
  // are written as they come (as nlohmann's dump(2) would print the whole
  // list), or a table per page, the header only above the first (each
  // page's columns as wide as its own cells).
  const size_t width = o.wide ? 0 : TableWidth();
  bool any = false;
  absl::Status status = ReadRecords(
      o, [&](const std::vector<tunefleet::v1::TuningRecord>& records) {
        if (o.json) {
          for (const auto& r : records) {
            std::cout << (any ? ",\n" : "[\n")
                      << Indented(ContractJsonText(r), "  ");
            any = true;
          }
        } else {
          std::string table = RecordTable(records, width, o.wide);
          if (any) table.erase(0, table.find('\n') + 1);  // the header
          std::cout << table;
          any = true;
        }
        std::cout.flush();
      });
  if (o.json && any) std::cout << "\n]\n";
  if (!status.ok()) return ReportError("query", status);
  if (!any && !o.op.empty()) {
    // No record of an op that no built-in template runs: a typo, not an
    // empty result (an op of a spec template is known by its records).
    const std::vector<absl::string_view> ops = templates::KnownOps();
    if (std::find(ops.begin(), ops.end(), absl::string_view(o.op)) ==
        ops.end()) {
      return ReportError("query",
                         absl::InvalidArgumentError(absl::StrCat(
                             "--op ", o.op,
                             ": no such op (no record has it, and no built-in "
                             "template runs it); built-in ops: ",
                             absl::StrJoin(ops, ", "))));
    }
  }
  if (o.json && !any) std::cout << "[]\n";
  if (!o.json && !any) std::cout << "no records\n";
  return kExitOk;
}

void AddDevicesOptions(CLI::App* cmd, DevicesOptions& o) {
  AddServerFlags(cmd, o.server, o.connection, "tunefleet-server HOST:PORT");
  AddDbOption(cmd, o.db, "database file, when no --server");
  cmd->add_flag("--json", o.json, "print a JSON list on stdout");
}

int RunDevices(const DevicesOptions& o) {
  absl::StatusOr<std::vector<tunefleet::v1::DeviceStatus>> devices =
      ReadDevices(o);
  if (!devices.ok()) return ReportError("devices", devices.status());
  if (o.json) {
    std::cout << ContractJsonText(*devices) << "\n";
    return kExitOk;
  }
  std::vector<std::vector<std::string>> rows;
  for (const auto& d : *devices) {
    rows.push_back({d.device_key(), d.device().device_name(),
                    absl::StrCat(d.connected_agents()),
                    d.device().driver_version()});
  }
  std::cout << FormatTable({"DEVICE KEY", "DEVICE", "AGENTS", "DRIVER"}, rows,
                           {false, false, true, false});
  // Keys with more than one driver: each revision and its re-validation.
  std::vector<std::vector<std::string>> revisions;
  for (const auto& d : *devices) {
    if (d.driver_revisions_size() < 2) continue;
    for (const auto& r : d.driver_revisions()) {
      const bool first = r.revision() == 1;
      revisions.push_back(
          {d.device_key(), absl::StrCat(r.revision()), r.driver_version(),
           first ? "-" : absl::StrCat(r.revalidated_same()),
           first ? "-" : absl::StrCat(r.revalidated_slower()),
           first ? "-" : absl::StrCat(r.revalidated_wrong()),
           first ? "-" : absl::StrCat(r.revalidated_failed()),
           first ? "-" : absl::StrCat(r.revalidation_pending())});
    }
  }
  if (!revisions.empty()) {
    std::cout << "\ndriver revisions (re-validated records by outcome, "
                 "docs/DRIVER_DRIFT.md):\n"
              << FormatTable(
                     {"DEVICE KEY", "REVISION", "DRIVER", "SAME", "SLOWER",
                      "WRONG", "FAILED", "PENDING"},
                     revisions,
                     {false, true, false, true, true, true, true, true});
  }
  return kExitOk;
}

}  // namespace tunefleet::cli
