// Model plans run on the agent's device (docs/MODEL_RUNTIME.md): the
// server sends a RunModelRequest (proto/tunefleet/v1/agent.proto), the
// agent runs it with model_run::OpenLocalRunner in a process of its own,
// so that a driver crash or a hang costs the run, not the agent, and
// answers with a RunModelResult. The process is the agent's own executable
// started with kModelRunFlag; it reads the request from fd 3 to its end
// and writes the result to fd 4, then exits.
#ifndef TUNEFLEET_DEVICE_AGENT_MODEL_RUN_HANDLER_H_
#define TUNEFLEET_DEVICE_AGENT_MODEL_RUN_HANDLER_H_

#include <string>

#include "tunefleet/v1/agent.pb.h"

namespace tunefleet::device_agent {

// argv[1] of a model-run process: when IsChildInvocation(argc, argv,
// kModelRunFlag) (child_process.h), main() must return RunModelRunMain(argc,
// argv) before doing anything else.
inline constexpr char kModelRunFlag[] = "--tunefleet-model-run";

// `<exe> --tunefleet-model-run PLATFORM DEVICE`: reads one
// RunModelRequest from fd 3 (until its end), runs it on the device and
// writes its RunModelResult to fd 4. Dies with its parent
// (PR_SET_PDEATHSIG). Exit code 0 when a result was written (the run's
// own errors are in it), 2 for bad arguments or an unreadable request.
int RunModelRunMain(int argc, char** argv);

// Runs model plans, each in a fresh model-run process. Thread-safe (each
// Run() has its own process).
class ModelRunHandler {
 public:
  struct Options {
    std::string executable = "/proc/self/exe";
    int platform = 0;  // the OpenCL device, as the agent's --platform,
    int device = 0;    // --device
  };
  explicit ModelRunHandler(Options options) : options_(std::move(options)) {}

  // Runs `request` and returns its result with request.run_id. Never fails
  // as a call: errors are the result's (error, error_code), among them
  // UNAVAILABLE when the process could not start or died (how it ended),
  // DEADLINE_EXCEEDED when it did not answer within request.timeout_ms
  // (0: 10 minutes; it is then killed).
  tunefleet::v1::RunModelResult Run(
      const tunefleet::v1::RunModelRequest& request) const;

 private:
  Options options_;
};

}  // namespace tunefleet::device_agent

#endif  // TUNEFLEET_DEVICE_AGENT_MODEL_RUN_HANDLER_H_
