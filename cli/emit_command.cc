#include "cli/emit_command.h"

#include <iostream>

#include "cli/common.h"
#include "emitter/emitter.h"
#include "store/store.h"

namespace tunefleet::cli {

CLI::App* AddEmitCommand(CLI::App& app, EmitOptions& o) {
  CLI::App* cmd = app.add_subcommand(
      "emit",
      "write a C++ library of the best kernels for device keys: sources, "
      "lookup by device and shape, a header, and a CMake package");
  cmd->add_option("--db", o.db, "database file")->capture_default_str();
  cmd->add_option("--device-key", o.device_keys,
                  "device key to include (repeat for several; default: the "
                  "database's only device key)");
  cmd->add_option("--out", o.out, "output directory")->required();
  cmd->add_flag("--json", o.json, "print a JSON summary on stdout");
  return cmd;
}

int RunEmit(const EmitOptions& o) {
  auto store = OpenDatabase(o.db);
  if (!store.ok()) return ReportError("emit", store.status());
  emitter::EmitOptions options{o.device_keys, o.out};
  if (options.device_keys.empty()) {
    auto devices = (*store)->ListDevices();
    if (!devices.ok()) return ReportError("emit", devices.status());
    if (devices->size() != 1) {
      std::string keys;
      for (const auto& [key, info] : *devices) keys += " " + key;
      return ReportError(
          "emit",
          absl::InvalidArgumentError(
              "--device-key is needed: the database has " +
              std::to_string(devices->size()) + " device keys:" + keys));
    }
    options.device_keys.push_back(devices->front().first);
  }
  absl::StatusOr<emitter::EmitSummary> summary =
      emitter::EmitLibrary(**store, options);
  if (!summary.ok()) return ReportError("emit", summary.status());
  if (o.json) {
    std::cout << nlohmann::json{{"out", o.out},
                                {"device_keys", o.device_keys},
                                {"entries", summary->entries},
                                {"reference_entries",
                                 summary->reference_entries},
                                {"files", summary->files},
                                {"skipped", summary->skipped}}
                     .dump(2)
              << "\n";
    return kExitOk;
  }
  std::cout << "wrote " << o.out << ": " << summary->entries
            << " tuned entries";
  if (summary->reference_entries > 0) {
    std::cout << " (" << summary->reference_entries
              << " use the naive reference kernel, faster than every tuned "
                 "config measured)";
  }
  std::cout << "\n";
  for (const std::string& f : summary->files) std::cout << "  " << f << "\n";
  for (const std::string& s : summary->skipped) {
    std::cout << "  skipped " << s << "\n";
  }
  std::cout << "use it with add_subdirectory(" << o.out
            << ") or cmake --install, then find_package(tunefleet_tuned) and "
               "link tunefleet::tuned\n";
  return kExitOk;
}

}  // namespace tunefleet::cli
