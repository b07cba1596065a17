// The embedded default: a local tunefleet-server on a loopback port, in
// this process, and a tunefleet-agent process beside it serving this
// machine's OpenCL device, so `tunefleet tune` works with no set-up.
// Everything still talks over real gRPC on loopback, plaintext, with tokens
// made for this command alone: the server accepts only their hashes, the
// agent gets the agent token (in its environment, TUNEFLEET_TOKEN) and
// connection() the tuner token.
#ifndef TUNEFLEET_CLI_EMBEDDED_H_
#define TUNEFLEET_CLI_EMBEDDED_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "base/pass_key.h"
#include "base/subprocess.h"
#include "client/channel.h"
#include "logging/log.h"
#include "server/server.h"

namespace tunefleet::cli {

struct EmbeddedOptions {
  std::string db_path = "tunefleet.db";
  int platform = 0;        // OpenCL platform index
  int device = 0;          // OpenCL device index
  std::string device_key;  // empty: derived from the device name
  bool verbose = false;    // server and agent logs on stderr
  // The least severe log lines the server and the agent write (docs/FLEET.md,
  // "Logs"): Start() sets this process's logger, the embedded server's, to
  // it (logging::Setup, in the terminal's form) and passes it to the agent
  // as --log-level. Without `verbose` the agent's lines go to a file whose
  // end Start()'s error shows when the agent ends early.
  logging::Level log_level = logging::Level::kInfo;
  absl::Duration connect_timeout = absl::Seconds(60);
  // The tunefleet-agent executable; empty: FindAgentBinary().
  std::string agent_binary;
};

// Where tunefleet-agent is: $TUNEFLEET_AGENT when set, else beside the
// running executable (as installed, and as linked in the build tree), else
// the first on $PATH. Errors: NOT_FOUND naming the places looked at.
absl::StatusOr<std::string> FindAgentBinary();

// The embedded agents' names start with this ("embedded-<pid>").
inline constexpr char kEmbeddedAgentPrefix[] = "embedded-";

// Marks failed, as interrupted, the jobs that earlier embedded commands
// left running when they were killed (SIGKILL, a crash): the embedded
// server never resumes jobs, so they would show as running forever.
// Store::InterruptAbandonedJobs with kEmbeddedAgentPrefix: only jobs whose
// trials went to embedded agents, and only when no other process (a live
// tunefleet-server, another command) has the database open. Start() calls
// it before its server opens the database. Returns how many jobs and model
// jobs were marked. Errors: store::Store::Open's, the update's.
absl::StatusOr<int> InterruptAbandonedJobs(const std::string& db_path);

// Owns the local server and the agent process; the destructor stops both.
class EmbeddedFleet {
 public:
  // Starts the server and the agent and waits until the agent is
  // registered. Errors: NOT_FOUND when there is no tunefleet-agent;
  // UNAVAILABLE when the agent exits first (its reason, e.g. no such
  // OpenCL device, in the message); INTERNAL when no token can be made;
  // the server's start errors; DEADLINE_EXCEEDED if the agent never joins.
  static absl::StatusOr<std::unique_ptr<EmbeddedFleet>> Start(
      const EmbeddedOptions& options);
  ~EmbeddedFleet();

  // The embedded server's loopback address and a token of role tuner.
  const client::ServerConnection& connection() const { return connection_; }
  const std::string& device_key() const { return device_key_; }
  server::Server& server() { return *server_; }

  // Use Start().
  explicit EmbeddedFleet(base::PassKey<EmbeddedFleet>) {}

 private:
  // Waits until the agent named `agent_name` has said Hello; sets
  // device_key_.
  absl::Status AwaitAgent(const std::string& agent_name,
                          absl::Duration timeout);

  client::ServerConnection connection_;
  std::string device_key_;
  std::unique_ptr<server::Server> server_;
  base::Subprocess agent_;
  std::string agent_log_;  // the agent's output when not verbose
};

}  // namespace tunefleet::cli

#endif  // TUNEFLEET_CLI_EMBEDDED_H_
