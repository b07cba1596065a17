// `tunefleet emit`: writes a tuned kernel library for device keys from the
// best records of a database (--db) or a running server (--server)
// (emitter/emitter.h).
#ifndef TUNEFLEET_CLI_EMIT_COMMAND_H_
#define TUNEFLEET_CLI_EMIT_COMMAND_H_

#include <cstdint>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "client/channel.h"

namespace tunefleet::cli {

struct EmitOptions {
  std::string db = "tunefleet.db";
  std::string server;               // HOST:PORT; empty: read --db
  client::ChannelFiles connection;  // token and TLS for --server
  // Records per QueryRecords page asked of the server; 0: its default.
  uint32_t page_size = 0;
  std::vector<std::string> device_keys;
  std::string out;
  std::string onnx;  // also write this model's plan per device key
  std::vector<std::string> input_shapes;
  bool json = false;
};

// Declares the flags of subcommand `cmd` (main.cc registers it with its
// name and one-line help); `options` must outlive parsing.
void AddEmitOptions(CLI::App* cmd, EmitOptions& options);
int RunEmit(const EmitOptions& options);

}  // namespace tunefleet::cli

#endif  // TUNEFLEET_CLI_EMIT_COMMAND_H_
