// `tunefleet-agent measure` (what `tunefleet measure` runs): one config of
// a template on this machine's OpenCL device, measured as a trial is (no
// server, no database), and the measurement printed: for checking a config
// by hand or reproducing a trial's error. --inspect adds the compiler's log
// and resource use.
#ifndef TUNEFLEET_DEVICE_AGENT_MEASURE_COMMAND_H_
#define TUNEFLEET_DEVICE_AGENT_MEASURE_COMMAND_H_

#include <string>

#include "CLI/CLI.hpp"

namespace tunefleet::device_agent {

struct MeasureOptions {
  std::string op;  // empty: the spec template's op, else gemm
  std::string shape;
  std::string template_name;
  std::string config;  // "MWG=64,..."; "reference" times the naive kernel
  int platform = 0;
  int device = 0;
  bool json = false;
  bool inspect = false;       // also print the build log and resource use
  std::string binary_out;     // write the program binary (PTX on NVIDIA) here
  std::string extra_options;  // appended to the template's build options
};

// Adds the `measure` subcommand and its flags to `app`.
CLI::App* AddMeasureCommand(CLI::App& app, MeasureOptions& options);
// Runs it; returns the process exit code: 0 for an OK measurement, 1 for a
// failed one (the error code printed), 2 for bad input.
int RunMeasure(const MeasureOptions& options);

}  // namespace tunefleet::device_agent

#endif  // TUNEFLEET_DEVICE_AGENT_MEASURE_COMMAND_H_
