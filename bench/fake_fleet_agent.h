// FakeFleetAgent: many fake agents served by a few threads, for
// bench/fleet_load. Each agent is a real gRPC client of AgentService on its
// own stream, speaking the same protocol as device_agent's Agent (Hello
// first, heartbeats at the interval the Welcome asks for, a Measurement
// per MeasureRequest with its trial id and attempt, the source cache of
// device_agent/source_cache.h, results batched where the Welcome allows
// it), but measures with
// FakeBackend at once, inline on gRPC's callback threads (the callback
// client API, grpc::ClientBidiReactor): no thread per agent, so the bench
// process's CPU per trial stays well below the server's.
#ifndef TUNEFLEET_BENCH_FAKE_FLEET_AGENT_H_
#define TUNEFLEET_BENCH_FAKE_FLEET_AGENT_H_

#include <deque>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "device_agent/source_cache.h"
#include "grpcpp/grpcpp.h"
#include "tunefleet/v1/agent.grpc.pb.h"

namespace tunefleet::bench {

// How the fake agents talk to the server.
struct FakeFleetOptions {
  uint32_t max_in_flight = 2;  // Hello.max_in_flight (device_agent's default)
  // Bytes of sources each agent keeps by hash (Hello.source_cache); 0: no
  // source cache, every request arrives whole.
  size_t source_cache_bytes = size_t{1} << 20;
  // Answers a whole batch in one MeasurementBatch where the server's
  // Welcome accepts them; false: one Measurement per message.
  bool batch_results = true;
};

// One fake agent's stream. Thread-safe; owned by a FakeFleet.
class FakeFleetAgent final
    : public grpc::ClientBidiReactor<tunefleet::v1::AgentMessage,
                                     tunefleet::v1::ServerMessage> {
 public:
  // `hello`: what it sends first; `source_cache_bytes` and
  // `batch_results` as in FakeFleetOptions.
  FakeFleetAgent(tunefleet::v1::AgentService::Stub* stub,
                 tunefleet::v1::Hello hello, size_t source_cache_bytes,
                 bool batch_results);

  // Starts the call and sends Hello.
  void Start();
  // Queues a heartbeat (once welcomed); called by the fleet's clock thread.
  void Beat();
  // Cancels the call; Wait() returns once gRPC is done with it.
  void Cancel();
  void Wait();
  bool welcomed();
  // Requests answered SOURCE_UNKNOWN so far (the server resent them).
  int64_t source_misses();
  // The heartbeat interval the server asked for in Welcome (ms; 0 before).
  uint32_t heartbeat_interval_ms();

  void OnWriteDone(bool ok) override;
  void OnReadDone(bool ok) override;
  void OnDone(const grpc::Status& status) override;

 private:
  // Writes `message` now, or after the writes ahead of it.
  void Write(tunefleet::v1::AgentMessage message);

  grpc::ClientContext context_;
  tunefleet::v1::ServerMessage in_;
  absl::Mutex mu_;
  std::deque<tunefleet::v1::AgentMessage> out_ ABSL_GUARDED_BY(mu_);
  bool writing_ ABSL_GUARDED_BY(mu_) = false;  // out_.front() is in flight
  bool reading_done_ ABSL_GUARDED_BY(mu_) = false;
  bool done_ ABSL_GUARDED_BY(mu_) = false;
  uint32_t heartbeat_ms_ ABSL_GUARDED_BY(mu_) = 0;
  bool result_batches_ ABSL_GUARDED_BY(mu_) = false;  // Welcome allows
  const bool batch_results_;
  // Used by OnReadDone() only (one read at a time).
  device_agent::SourceCache sources_;
  int64_t source_misses_ ABSL_GUARDED_BY(mu_) = 0;
};

// N fake agents of one device key on `channels` channels (so that many TCP
// connections) and one thread that sends their heartbeats.
class FakeFleet {
 public:
  FakeFleet(const std::string& address, const std::string& device_key,
            int agents, int channels, const FakeFleetOptions& options = {});
  ~FakeFleet();  // Stop()

  // Ends every stream and waits for gRPC to finish them.
  void Stop();
  // Summed over the agents: requests answered SOURCE_UNKNOWN.
  int64_t source_misses();

 private:
  void BeatLoop();

  std::vector<std::shared_ptr<grpc::Channel>> channels_;
  std::vector<std::unique_ptr<tunefleet::v1::AgentService::Stub>> stubs_;
  std::vector<std::unique_ptr<FakeFleetAgent>> agents_;
  absl::Mutex mu_;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::thread beats_;
};

}  // namespace tunefleet::bench

#endif  // TUNEFLEET_BENCH_FAKE_FLEET_AGENT_H_
