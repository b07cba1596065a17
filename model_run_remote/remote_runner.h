// A ModelRunner over the fleet protocol (docs/MODEL_RUNTIME.md): the plan
// runs on a connected agent of a device key, through a tunefleet-server's
// TuningService.RunModel (proto/tunefleet/v1/tuning.proto), as a board or
// phone runs trials. `tunefleet run --server` selects it.
#ifndef TUNEFLEET_MODEL_RUN_REMOTE_REMOTE_RUNNER_H_
#define TUNEFLEET_MODEL_RUN_REMOTE_REMOTE_RUNNER_H_

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "client/channel.h"
#include "model_run/model_runner.h"

namespace tunefleet::model_run_remote {

struct RemoteRunnerOptions {
  // The device key whose agent runs the plans. Empty: the one key with
  // connected agents (several: INVALID_ARGUMENT listing them).
  std::string device_key;
  // How long one Run() waits for the agent's result, ms (the load, every
  // run and the trip back; the server answers DEADLINE_EXCEEDED after it).
  uint32_t timeout_ms = 600000;
};

// Asks the server (ListDevices) for the device of the key: its name,
// vendor and libraries are what plans for the runner are made for. The
// plan's inputs are named in the request by `Run()`'s caller through
// RunRequest order only. Errors: the call's (UNAVAILABLE: no server;
// UNAUTHENTICATED / PERMISSION_DENIED: the token); UNAVAILABLE when no
// agent of the key is connected, naming the keys that are;
// INVALID_ARGUMENT when no key is given and several are connected.
// Run() errors: ModelRunner's (the agent's code and message), UNAVAILABLE
// when the agent is gone, DEADLINE_EXCEEDED after options.timeout_ms.
absl::StatusOr<std::unique_ptr<model_run::ModelRunner>> OpenRemoteRunner(
    const client::ServerConnection& server, const RemoteRunnerOptions& options);

}  // namespace tunefleet::model_run_remote

#endif  // TUNEFLEET_MODEL_RUN_REMOTE_REMOTE_RUNNER_H_
