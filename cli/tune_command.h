// `tunefleet tune`: submits one tuning job (to --server, or to the embedded
// default), shows its progress and reports the best config.
#ifndef TUNEFLEET_CLI_TUNE_COMMAND_H_
#define TUNEFLEET_CLI_TUNE_COMMAND_H_

#include <string>

#include "CLI/CLI.hpp"

namespace tunefleet::cli {

struct TuneOptions {
  std::string op = "gemm";
  std::string shape;          // "M=512,N=512,K=512"
  std::string template_name;  // empty: the op's default
  uint32_t trials = 100;
  std::string strategy = "xgb";
  std::string server;      // empty: embedded default
  std::string device_key;  // empty: the only connected key
  std::string db = "tunefleet.db";
  uint64_t seed = 0;
  int priority = 0;
  int platform = 0;
  int device = 0;
  bool skip_reference = false;
  uint32_t early_stop = 0;
  bool no_transfer = false;
  // Timing policy; negative: the server's default.
  int repeat = -1;
  int number = -1;
  double min_repeat_ms = -1;
  bool json = false;
  bool quiet = false;  // no progress lines on stderr
  bool verbose = false;
};

// Registers the subcommand; `options` must outlive parsing.
CLI::App* AddTuneCommand(CLI::App& app, TuneOptions& options);

// Runs it; returns the process exit code (common.h).
int RunTune(const TuneOptions& options);

}  // namespace tunefleet::cli

#endif  // TUNEFLEET_CLI_TUNE_COMMAND_H_
