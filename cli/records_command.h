// `tunefleet records export|import`: record bundles between sites
// (docs/BUNDLES.md). export writes the bundle of a database's or a
// server's records (optionally signed with an Ed25519 key); import
// verifies a bundle (digest, signature, trusted keys) and merges it into a
// database or a server, writing nothing when any check fails.
#ifndef TUNEFLEET_CLI_RECORDS_COMMAND_H_
#define TUNEFLEET_CLI_RECORDS_COMMAND_H_

#include <string>

#include "CLI/CLI.hpp"
#include "client/channel.h"

namespace tunefleet::cli {

struct RecordsOptions {
  // export
  std::string db;
  std::string server;
  client::ChannelFiles connection;
  std::string device_key;
  std::string op;
  std::string out;
  std::string sign_key;  // PEM Ed25519 private key; empty: unsigned
  // import
  std::string file;
  std::string trust;  // PEM public keys; empty: any intact bundle
  bool json = false;
};

struct RecordsCommands {
  CLI::App* records = nullptr;
  CLI::App* export_cmd = nullptr;
  CLI::App* import_cmd = nullptr;
};

// Registers `records` with `export` and `import`; `options` must outlive
// parsing.
RecordsCommands AddRecordsCommand(CLI::App& app, RecordsOptions& options);

// Run them; return the process exit code (common.h, ReportError):
// kExitBadInput for a malformed bundle, key file or command line
// (INVALID_ARGUMENT, NOT_FOUND: also an export that matches no record),
// kExitFailed for an altered, truncated (DATA_LOSS) or untrusted
// (PERMISSION_DENIED) bundle and for I/O or server failures.
int RunRecordsExport(const RecordsOptions& options);
int RunRecordsImport(const RecordsOptions& options);

}  // namespace tunefleet::cli

#endif  // TUNEFLEET_CLI_RECORDS_COMMAND_H_
