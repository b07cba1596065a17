// The embedded fleet (cli/embedded.h: a server and one agent in this
// process) that the device benchmarks tune through, on OpenCL device
// `device` of platform `platform`. `db` is the database path; empty picks a
// fresh temporary file named after the benchmark (`name`_PID.db) and sets
// `db` to it. Errors: those of EmbeddedFleet::Start. AddBenchFleetFlags
// declares the three as --platform, --device and --db.
#ifndef TUNEFLEET_BENCH_BENCH_FLEET_H_
#define TUNEFLEET_BENCH_BENCH_FLEET_H_

#include <unistd.h>

#include <filesystem>
#include <memory>
#include <string>

#include "CLI/CLI.hpp"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "cli/embedded.h"

namespace tunefleet::bench {

inline absl::StatusOr<std::unique_ptr<cli::EmbeddedFleet>> StartBenchFleet(
    absl::string_view name, std::string& db, int platform, int device) {
  if (db.empty()) {
    db = (std::filesystem::temp_directory_path() /
          absl::StrCat(name, "_", getpid(), ".db"))
             .string();
  }
  cli::EmbeddedOptions options;
  options.db_path = db;
  options.platform = platform;
  options.device = device;
  return cli::EmbeddedFleet::Start(options);
}

inline void AddBenchFleetFlags(CLI::App& app, int& platform, int& device,
                               std::string& db) {
  app.add_option("--platform", platform, "OpenCL platform index");
  app.add_option("--device", device, "OpenCL device index");
  app.add_option("--db", db, "database (default: a temporary file)");
}

}  // namespace tunefleet::bench

#endif  // TUNEFLEET_BENCH_BENCH_FLEET_H_
