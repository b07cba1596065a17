// `tunefleet run`: runs a whole ONNX model on this machine's OpenCL device
// with the model runtime (model_runtime/, docs/MODEL_RUNTIME.md) and
// measures it: the plan is built from the tuning records of the device's
// key (--db, --server, or ./tunefleet.db; a layer without a record runs its
// naive kernel) or read from an emitted library (--plan); with --server it
// runs on a connected agent of the key, through the server
// (model_run_remote/remote_runner.h; --local: here); prints measured
// latency beside the estimate, host CPU per run, device memory and the
// slowest layers, and saves the outputs as .npy files. The plan is recorded
// at load and replayed per run where the device can record (--record).
#ifndef TUNEFLEET_CLI_RUN_COMMAND_H_
#define TUNEFLEET_CLI_RUN_COMMAND_H_

#include <cstdint>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "client/channel.h"

namespace tunefleet::cli {

struct RunOptions {
  std::string onnx;
  std::vector<std::string> input_shapes;  // NAME=DIMS
  std::string db;      // empty: ./tunefleet.db when it exists
  std::string server;  // HOST:PORT: records from it, run on its agent
  bool local = false;  // with server: run on this machine's device instead
  client::ChannelFiles connection;
  std::string plan_dir;    // an emitted library (emit --onnx --out DIR)
  std::string device_key;  // default: this device's key
  std::vector<std::string> inputs;  // NAME=FILE.npy
  std::string save_outputs;
  std::string save_plan;  // also write the plan run here
  int runs = 10;
  int warmup = 2;
  int profiled_runs = 1;
  uint64_t seed = 0;
  bool naive = false;       // every layer its naive kernel
  bool no_library = false;  // no vendor-library calls
  bool describe = false;    // print every layer of the plan
  // Recording (issue 36): auto, on, off or both (plain and recorded runs
  // side by side).
  std::string record = "auto";
  // Tensors read through an image: "on" views them in their own memory
  // where the device can (cl_khr_image2d_from_buffer), "off" copies them.
  std::string image_views = "on";
  int platform = 0;
  int device = 0;
  bool json = false;
};

// Declares the flags of subcommand `cmd` (main.cc registers it with its
// name and one-line help); `options` must outlive parsing.
void AddRunOptions(CLI::App* cmd, RunOptions& options);
int RunRun(const RunOptions& options);

}  // namespace tunefleet::cli

#endif  // TUNEFLEET_CLI_RUN_COMMAND_H_
