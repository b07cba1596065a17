// `tunefleet space`: the search space of one template for one workload on
// a device, as a job would build it: the raw configs (every combination of
// the knobs' values), the valid ones (those that pass the template's
// constraints for that workload and device) and a sample of valid configs.
// The device is this machine's OpenCL device, read through `tunefleet-agent
// --info` (the CLI holds no OpenCL code), or a device info file.
#ifndef TUNEFLEET_CLI_SPACE_COMMAND_H_
#define TUNEFLEET_CLI_SPACE_COMMAND_H_

#include <cstdint>
#include <string>

#include "CLI/CLI.hpp"
#include "absl/status/statusor.h"
#include "tunefleet/v1/common.pb.h"

namespace tunefleet::cli {

struct SpaceOptions {
  // The workload, as `tune` reads it.
  std::string op;  // empty: the template's op, else gemm
  std::string shape;
  std::string dtype = "fp32";
  std::string template_name;  // a name or a spec file; empty: the first
                              // template that runs the workload
  uint32_t sample = 10;       // valid configs printed
  uint64_t seed = 0;          // of the sample
  // The device: a JSON file as `tunefleet-agent --info` prints it, else
  // the OpenCL device at these indices.
  std::string device_info;
  int platform = 0;
  int device = 0;
  bool json = false;
};

// Declares the flags of subcommand `cmd` (main.cc registers it with its
// name and one-line help); `options` must outlive parsing.
void AddSpaceOptions(CLI::App* cmd, SpaceOptions& options);

// Runs it; returns the process exit code (common.h).
int RunSpace(const SpaceOptions& options);

// The device info of this machine's OpenCL device (platform and device
// indices), as its agent reports it in Hello: runs `tunefleet-agent --info`
// (FindAgentBinary()), whose own message goes to stderr. Errors: NOT_FOUND
// without an agent; UNAVAILABLE when it fails, naming how it ended;
// DEADLINE_EXCEEDED past `timeout_ms`; INVALID_ARGUMENT for output that is
// not a DeviceInfo in JSON.
absl::StatusOr<tunefleet::v1::DeviceInfo> LocalDeviceInfo(
    int platform, int device, double timeout_ms = 60000);

}  // namespace tunefleet::cli

#endif  // TUNEFLEET_CLI_SPACE_COMMAND_H_
