// `tunefleet measure`: runs one config of a template on this machine's
// OpenCL device (no server, no database) and prints the measurement: for
// checking a config by hand or reproducing a trial's error.
#ifndef TUNEFLEET_CLI_MEASURE_COMMAND_H_
#define TUNEFLEET_CLI_MEASURE_COMMAND_H_

#include <string>

#include "CLI/CLI.hpp"

namespace tunefleet::cli {

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

CLI::App* AddMeasureCommand(CLI::App& app, MeasureOptions& options);
int RunMeasure(const MeasureOptions& options);

}  // namespace tunefleet::cli

#endif  // TUNEFLEET_CLI_MEASURE_COMMAND_H_
