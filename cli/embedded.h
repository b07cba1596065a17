// The embedded default (DESIGN.md, Defaults): a local tunefleet-server on a
// loopback port and a device agent on this machine's OpenCL device, in this
// process, so `tunefleet tune` works with no set-up. Everything still talks
// over real gRPC on loopback, plaintext, with tokens made for this process
// alone: the server accepts only their hashes, the agent gets the agent
// token and connection() the tuner token.
#ifndef TUNEFLEET_CLI_EMBEDDED_H_
#define TUNEFLEET_CLI_EMBEDDED_H_

#include <memory>
#include <string>
#include <thread>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "cli/common.h"
#include "device_agent/agent.h"
#include "server/server.h"

namespace tunefleet::cli {

struct EmbeddedOptions {
  std::string db_path = "tunefleet.db";
  int platform = 0;        // OpenCL platform index
  int device = 0;          // OpenCL device index
  std::string device_key;  // empty: derived from the device name
  bool verbose = false;    // server and agent logs on stderr
  absl::Duration connect_timeout = absl::Seconds(60);
};

// Owns the local server and agent; the destructor stops both. The agent
// measures in a worker process started from this executable, so main()
// must hand agent::IsWorkerInvocation() calls to agent::RunWorkerMain().
class EmbeddedFleet {
 public:
  // Opens the device, starts server and agent, and waits until the agent
  // is registered. Errors: NOT_FOUND / UNAVAILABLE for the OpenCL device,
  // INTERNAL when no token can be made, the server's start errors,
  // DEADLINE_EXCEEDED if the agent never joins.
  static absl::StatusOr<std::unique_ptr<EmbeddedFleet>> Start(
      const EmbeddedOptions& options);
  ~EmbeddedFleet();

  // The embedded server's loopback address and a token of role tuner.
  const ServerConnection& connection() const { return connection_; }
  const std::string& device_key() const { return agent_->device_key(); }
  server::Server& server() { return *server_; }

 private:
  struct PrivateTag {
    explicit PrivateTag() = default;
  };

 public:
  // Use Start().
  explicit EmbeddedFleet(PrivateTag) {}

 private:
  ServerConnection connection_;
  std::unique_ptr<server::Server> server_;
  std::unique_ptr<agent::Agent> agent_;
  std::thread agent_thread_;
};

}  // namespace tunefleet::cli

#endif  // TUNEFLEET_CLI_EMBEDDED_H_
