// The device agent's connection to the server (docs/ARCHITECTURE.md, Process
// model): dials out, sends Hello, then heartbeats; measures what the server
// sends and streams the results back; reconnects with exponential backoff,
// except when the server refuses the agent's token.
#ifndef TUNEFLEET_DEVICE_AGENT_AGENT_H_
#define TUNEFLEET_DEVICE_AGENT_AGENT_H_

#include <deque>
#include <functional>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "client/channel.h"
#include "device_agent/backend.h"
#include "device_agent/source_cache.h"
#include "tunefleet/v1/agent.grpc.pb.h"

namespace tunefleet::device_agent {

struct AgentOptions {
  std::string server;      // HOST:PORT of tunefleet-server
  std::string device_key;  // empty: DefaultDeviceKey() of the device
  std::string agent_name;  // empty: "<hostname>-<pid>"
  // TLS and the bearer token (client/channel.h).
  client::ChannelOptions channel;
  uint32_t max_in_flight = 2;
  // Bytes of kernel sources kept by hash (source_cache.h), so the server
  // sends each source once per session; 0: none kept, and Hello says the
  // agent has no source cache (every request then carries its sources).
  size_t source_cache_bytes = size_t{16} << 20;
  // Used when the server's Welcome names no interval.
  absl::Duration heartbeat = absl::Seconds(5);
  absl::Duration min_backoff = absl::Milliseconds(100);
  absl::Duration max_backoff = absl::Seconds(30);
  bool verbose = true;  // log connections and trials (logging/log.h, info)
  // Runs a model plan the server sent (ServerMessage.run_model) and
  // returns its result (model_run_handler.h); called on a thread of its
  // own per run, so trials and heartbeats go on meanwhile. Unset: Hello
  // says the agent runs no models (Hello.model_runs).
  std::function<tunefleet::v1::RunModelResult(
      const tunefleet::v1::RunModelRequest&)>
      run_model;
};

// Serves one device. Run() blocks until Stop() or a refusal of the token;
// Stop() and the accessors are thread-safe.
class Agent {
 public:
  Agent(AgentOptions options, std::unique_ptr<MeasurementBackend> backend);
  ~Agent();

  // Connects, serves and reconnects (with backoff, after any transient end:
  // no server, a network error, a server restart) until Stop(); then OK.
  // Errors, ending it at once since no retry can succeed: UNAUTHENTICATED
  // when the server does not accept the token (none, unknown or revoked),
  // PERMISSION_DENIED when the token's role may not connect (not agent);
  // the message holds the server's reason.
  absl::Status Run();
  // Ends Run(): cancels the open stream; the trial being measured finishes.
  void Stop();

  const std::string& device_key() const { return key_; }
  // Forgets every cached source (tests: as if evicted); the server resends
  // what a later request lacks.
  void ClearSourceCache();

 private:
  using Stream = grpc::ClientReaderWriter<tunefleet::v1::AgentMessage,
                                          tunefleet::v1::ServerMessage>;
  // How one connection ended.
  struct Session {
    bool welcomed = false;  // the server accepted Hello
    grpc::Status status;    // the stream's final status (Finish())
  };
  // One connection's lifetime.
  Session Serve(tunefleet::v1::AgentService::Stub& stub);
  void MeasureLoop(Stream* stream);
  void HeartbeatLoop(Stream* stream, absl::Duration interval);
  bool Write(Stream* stream, const tunefleet::v1::AgentMessage& message);
  void Log(const std::string& line) const;

  AgentOptions options_;
  std::unique_ptr<MeasurementBackend> backend_;
  std::string key_;

  absl::Mutex mu_;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  bool connected_ ABSL_GUARDED_BY(mu_) = false;
  grpc::ClientContext* context_ ABSL_GUARDED_BY(mu_) = nullptr;
  std::deque<tunefleet::v1::MeasureRequest> queue_ ABSL_GUARDED_BY(mu_);
  // Requests at the front of queue_ already passed to backend_->Prefetch().
  size_t hinted_ ABSL_GUARDED_BY(mu_) = 0;
  // Sources by hash; requests are resolved against it as they arrive, in
  // stream order.
  SourceCache sources_ ABSL_GUARDED_BY(mu_);
  absl::Mutex write_mu_;  // one writer at a time on the stream
};

// "<hostname>-<pid>".
std::string DefaultAgentName();

// How the agent names `request` in its log: "trial 12", or "job 63
// reference" for a job's reference run (the naive reference kernel, sent
// with trial_id -job_id: server/job.h, Job::reference_trial_id()).
std::string RequestName(const tunefleet::v1::MeasureRequest& request);

}  // namespace tunefleet::device_agent

#endif  // TUNEFLEET_DEVICE_AGENT_AGENT_H_
