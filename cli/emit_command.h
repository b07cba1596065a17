// `tunefleet emit`: writes a tuned kernel library for device keys from a
// database's best records (emitter/emitter.h).
#ifndef TUNEFLEET_CLI_EMIT_COMMAND_H_
#define TUNEFLEET_CLI_EMIT_COMMAND_H_

#include <string>
#include <vector>

#include "CLI/CLI.hpp"

namespace tunefleet::cli {

struct EmitOptions {
  std::string db = "tunefleet.db";
  std::vector<std::string> device_keys;
  std::string out;
  bool json = false;
};

CLI::App* AddEmitCommand(CLI::App& app, EmitOptions& options);
int RunEmit(const EmitOptions& options);

}  // namespace tunefleet::cli

#endif  // TUNEFLEET_CLI_EMIT_COMMAND_H_
