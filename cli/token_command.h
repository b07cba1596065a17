// `tunefleet token add|list|remove --tokens FILE`: manages the access
// tokens a tunefleet-server accepts (auth/tokens.h). `add` prints a new
// random token once and keeps only its SHA-256 in the file (mode 0600).
#ifndef TUNEFLEET_CLI_TOKEN_COMMAND_H_
#define TUNEFLEET_CLI_TOKEN_COMMAND_H_

#include <string>

#include "CLI/CLI.hpp"

namespace tunefleet::cli {

struct TokenOptions {
  std::string action;  // "add", "list" or "remove": set by parsing
  std::string tokens_file;
  std::string role;  // add
  std::string name;  // add (default "<role>-<hash prefix>"), remove
  bool json = false;
};

// Declares `token`'s subcommands and flags on `cmd` (main.cc registers
// `token`); `options` must outlive parsing.
void AddTokenOptions(CLI::App* cmd, TokenOptions& options);

// Runs it; returns the process exit code (common.h): kExitBadInput for a
// bad role or name, a missing file or one others may read.
int RunToken(const TokenOptions& options);

}  // namespace tunefleet::cli

#endif  // TUNEFLEET_CLI_TOKEN_COMMAND_H_
