// A fleet inside the test's own process: a tunefleet server on a loopback
// port (no tokens: the development mode) over a fresh SQLite file in the
// test's TempDir, and one agent running in a thread with the measurement
// backend the test gives it (the first OpenCL device through
// PoclBackend(), PoCL in CI, or a fake). Everything still crosses real
// gRPC. Needs tunefleet_server and tunefleet_agent.
#ifndef TUNEFLEET_TESTS_IN_PROCESS_FLEET_H_
#define TUNEFLEET_TESTS_IN_PROCESS_FLEET_H_

#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "device_agent/agent.h"
#include "device_agent/backend.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "measure/measurer.h"
#include "opencl/opencl.h"
#include "server/server.h"
#include "tests/support/temp_store.h"
#include "tunefleet/v1/tuning.grpc.pb.h"

namespace tunefleet::testing {

// A backend that measures on the first OpenCL device. Errors: those of
// opening the device or creating its measurer.
inline absl::StatusOr<std::unique_ptr<device_agent::MeasurementBackend>>
PoclBackend() {
  auto device = opencl::OpenDevice(0, 0);
  if (!device.ok()) return device.status();
  auto measurer = measure::Measurer::Create(*std::move(device));
  if (!measurer.ok()) return measurer.status();
  return std::make_unique<device_agent::LocalBackend>(*std::move(measurer));
}

// Watches job `job_id` through `stub` until the server ends the stream
// (the job ended); its last progress goes to `last`. `limit`: the call's
// deadline (none when nullopt). Returns the stream's final status.
inline grpc::Status WatchJobToEnd(
    tunefleet::v1::TuningService::Stub& stub, int64_t job_id,
    tunefleet::v1::JobProgress* last,
    std::optional<std::chrono::seconds> limit = std::nullopt) {
  grpc::ClientContext context;
  if (limit) context.set_deadline(std::chrono::system_clock::now() + *limit);
  tunefleet::v1::WatchJobRequest watch;
  watch.set_job_id(job_id);
  auto reader = stub.WatchJob(&context, watch);
  tunefleet::v1::JobProgress progress;
  while (reader->Read(&progress)) *last = progress;
  return reader->Finish();
}

// Not thread-safe; one test (or one test suite) drives it.
class InProcessFleet {
 public:
  // The database is TempDir()/`name`_<pid>.db, removed first and at the
  // end.
  explicit InProcessFleet(const std::string& name)
      : db_path_(absl::StrCat(::testing::TempDir(), "/", name, "_", getpid(),
                              ".db")) {
    RemoveDb();
  }
  ~InProcessFleet() {
    Stop();
    RemoveDb();
  }
  InProcessFleet(const InProcessFleet&) = delete;
  InProcessFleet& operator=(const InProcessFleet&) = delete;

  // Starts the server on 127.0.0.1 (a free port) without tokens. Errors:
  // those of server::Server::Start.
  absl::Status StartServer() {
    server::ServerOptions options;
    options.listen = "127.0.0.1:0";
    options.db_path = db_path_;
    options.verbose = false;
    options.no_auth = true;  // loopback development mode; see auth_test
    auto server = server::Server::Start(options);
    if (!server.ok()) return server.status();
    server_ = *std::move(server);
    return absl::OkStatus();
  }

  // Starts the agent for `device_key` with `backend`, taking up to
  // `max_in_flight` trials at once. OK once the server's scheduler counts
  // its capacity (within 30 s); DEADLINE_EXCEEDED otherwise.
  absl::Status StartAgent(
      const std::string& device_key,
      std::unique_ptr<device_agent::MeasurementBackend> backend,
      uint32_t max_in_flight = device_agent::AgentOptions{}.max_in_flight) {
    device_agent::AgentOptions options;
    options.server = server_->address();
    options.device_key = device_key;
    options.verbose = false;
    options.max_in_flight = max_in_flight;
    agent_ = std::make_unique<device_agent::Agent>(options, std::move(backend));
    agent_thread_ = std::thread([this] { EXPECT_TRUE(agent_->Run().ok()); });
    for (int i = 0; i < 3000 && server_->scheduler().Capacity(device_key) == 0;
         ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    if (server_->scheduler().Capacity(device_key) == 0) {
      return absl::DeadlineExceededError(
          absl::StrCat("agent for ", device_key, " did not connect in 30 s"));
    }
    return absl::OkStatus();
  }

  // Shuts the server down, then stops and joins the agent.
  void Stop() {
    if (server_) server_->Shutdown();
    if (agent_) agent_->Stop();
    if (agent_thread_.joinable()) agent_thread_.join();
    agent_.reset();
    server_.reset();
  }

  // A TuningService client on an insecure channel to the server.
  std::unique_ptr<tunefleet::v1::TuningService::Stub> Stub() const {
    return tunefleet::v1::TuningService::NewStub(grpc::CreateChannel(
        server_->address(), grpc::InsecureChannelCredentials()));
  }

  server::Server& server() { return *server_; }
  const std::string& db_path() const { return db_path_; }

 private:
  void RemoveDb() { RemoveDatabaseFiles(db_path_); }

  const std::string db_path_;
  std::unique_ptr<server::Server> server_;
  std::unique_ptr<device_agent::Agent> agent_;
  std::thread agent_thread_;
};

}  // namespace tunefleet::testing

#endif  // TUNEFLEET_TESTS_IN_PROCESS_FLEET_H_
