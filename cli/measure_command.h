// `tunefleet measure`: measuring on this machine's OpenCL device is the
// agent's work, so this command runs `tunefleet-agent measure` with the
// same arguments (device_agent/measure_command.h lists them; `tunefleet
// measure --help` prints them).
#ifndef TUNEFLEET_CLI_MEASURE_COMMAND_H_
#define TUNEFLEET_CLI_MEASURE_COMMAND_H_

#include "CLI/CLI.hpp"

namespace tunefleet::cli {

// Adds `measure`, which passes every argument after it on.
CLI::App* AddMeasureCommand(CLI::App& app);

// Replaces this process with tunefleet-agent (FindAgentBinary()) running
// `measure` and the arguments `cmd` was given. Returns only when that
// fails: the exit code, after printing why.
int RunMeasure(const CLI::App& cmd);

}  // namespace tunefleet::cli

#endif  // TUNEFLEET_CLI_MEASURE_COMMAND_H_
