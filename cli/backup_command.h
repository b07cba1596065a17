// `tunefleet backup --db SRC --out DST`: a consistent copy of a live
// database (store/backup.h) while a server keeps writing to it. Progress
// goes to stderr for databases over a few MiB; --json prints
// {"pages", "bytes", "ms"} on stdout.
#ifndef TUNEFLEET_CLI_BACKUP_COMMAND_H_
#define TUNEFLEET_CLI_BACKUP_COMMAND_H_

#include <string>

#include "CLI/CLI.hpp"

namespace tunefleet::cli {

struct BackupOptions {
  std::string db;
  std::string out;
  bool json = false;
};

// Declares the flags of subcommand `cmd` (main.cc registers it with its
// name and one-line help); `options` must outlive parsing.
void AddBackupOptions(CLI::App* cmd, BackupOptions& options);

// Runs it; returns the process exit code (common.h): kExitBadInput when
// --db does not exist or equals --out, kExitFailed when the copy fails.
int RunBackup(const BackupOptions& options);

}  // namespace tunefleet::cli

#endif  // TUNEFLEET_CLI_BACKUP_COMMAND_H_
