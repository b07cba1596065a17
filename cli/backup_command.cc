#include "cli/backup_command.h"

#include <cstdio>
#include <filesystem>
#include <iostream>

#include "cli/common.h"
#include "store/backup.h"

namespace tunefleet::cli {

void AddBackupOptions(CLI::App* cmd, BackupOptions& options) {
  cmd->add_option("--db", options.db, "database file to copy")->required();
  cmd->add_option("--out", options.out, "file to write the copy to")
      ->required();
  cmd->add_flag("--json", options.json,
                "print {\"pages\", \"bytes\", \"ms\"} on stdout");
}

int RunBackup(const BackupOptions& options) {
  std::error_code ec;
  if (std::filesystem::equivalent(options.db, options.out, ec)) {
    return ReportError("backup", absl::InvalidArgumentError(
                                     "--out names the database itself"));
  }
  store::BackupOptions backup;
  // Progress every ~4 MiB of 4 KiB pages, shown only for copies that take
  // more than one step.
  bool shown = false;
  backup.progress = [&](int64_t copied, int64_t total) {
    if (copied >= total && !shown) return;
    shown = true;
    std::fprintf(stderr, "\rtunefleet backup: %lld / %lld pages",
                 static_cast<long long>(copied), static_cast<long long>(total));
    if (copied >= total) std::fprintf(stderr, "\n");
  };
  absl::StatusOr<store::BackupStats> stats =
      store::BackupDatabase(options.db, options.out, backup);
  if (!stats.ok()) return ReportError("backup", stats.status());
  if (options.json) {
    std::cout << nlohmann::json{{"pages", stats->pages},
                                {"bytes", stats->bytes},
                                {"ms", stats->ms}}
                     .dump()
              << "\n";
  } else {
    std::fprintf(stderr,
                 "tunefleet backup: copied %s to %s (%lld pages, %lld bytes, "
                 "%lld ms)\n",
                 options.db.c_str(), options.out.c_str(),
                 static_cast<long long>(stats->pages),
                 static_cast<long long>(stats->bytes),
                 static_cast<long long>(stats->ms));
  }
  return kExitOk;
}

}  // namespace tunefleet::cli
