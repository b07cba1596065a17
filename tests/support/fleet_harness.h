// A fleet of real processes for chaos tests: tunefleet-server and
// tunefleet-agent binaries from the build tree on loopback, a SQLite file
// in a fresh directory, and a TuningService client. The server takes a
// tokens file; agents and the client present tokens of their roles. Agents
// measure on the first OpenCL device (PoCL in CI).
#ifndef TUNEFLEET_TESTS_FLEET_HARNESS_H_
#define TUNEFLEET_TESTS_FLEET_HARNESS_H_

#include <netinet/in.h>
#include <sys/socket.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "client/channel.h"
#include "grpcpp/grpcpp.h"
#include "server/auth/tokens.h"
#include "tests/support/command_runner.h"
#include "tests/support/process.h"
#include "tunefleet/v1/tuning.grpc.pb.h"

namespace tunefleet::testing {

// A TCP port free right now on loopback.
inline int FreePort() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
  socklen_t len = sizeof(addr);
  getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  close(fd);
  return ntohs(addr.sin_port);
}

// Not thread-safe; one test drives it.
class FleetHarness {
 public:
  explicit FleetHarness(const std::string& name, int heartbeat_ms = 300)
      : heartbeat_ms_(heartbeat_ms), port_(FreePort()) {
    dir_ = std::filesystem::temp_directory_path() /
           absl::StrCat("tf_", name, "_", getpid());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    // An agent token (in a file, as a board keeps it) and a tuner token.
    const std::string agent_token = *auth::GenerateToken();
    tuner_token_ = *auth::GenerateToken();
    (void)auth::AppendTokenToFile(
        tokens_file(),
        auth::TokenEntry::ForToken(agent_token, auth::Role::kAgent, "agents"));
    (void)auth::AppendTokenToFile(
        tokens_file(), auth::TokenEntry::ForToken(
                           tuner_token_, auth::Role::kTuner, "harness"));
    std::ofstream(agent_token_file()) << agent_token << "\n";
  }
  ~FleetHarness() {
    agents_.clear();
    server_.reset();
    if (std::getenv("TUNEFLEET_KEEP_TEST_DIRS") == nullptr) {
      std::filesystem::remove_all(dir_);
    }
  }

  std::string address() const { return absl::StrCat("127.0.0.1:", port_); }
  std::string db_path() const { return (dir_ / "fleet.db").string(); }
  std::string dir() const { return dir_.string(); }
  std::string tokens_file() const { return (dir_ / "tokens.txt").string(); }
  std::string agent_token_file() const {
    return (dir_ / "agent.token").string();
  }

  // Starts (or restarts) the server on the same port and database; true
  // once it answers.
  bool StartServer() {
    server_ = std::make_unique<Process>(
        std::vector<std::string>{
            BinaryDir() + "/server/tunefleet-server", "--listen", address(),
            "--db", db_path(), "--heartbeat-ms", std::to_string(heartbeat_ms_),
            "--tokens", tokens_file()},
        (dir_ / "server.log").string());
    return WaitFor([this] { return Devices().has_value(); },
                   std::chrono::seconds(30));
  }
  Process& server() { return *server_; }

  // Starts agent `i` (or restarts it after a kill) with device key `key`.
  void StartAgent(size_t i, const std::string& key = "chaos",
                  int max_in_flight = 2) {
    if (agents_.size() <= i) agents_.resize(i + 1);
    agents_[i] = std::make_unique<Process>(
        std::vector<std::string>{BinaryDir() + "/device_agent/tunefleet-agent",
                                 "--server", address(), "--key", key, "--name",
                                 absl::StrCat("agent-", i), "--max-in-flight",
                                 std::to_string(max_in_flight), "--token-file",
                                 agent_token_file()},
        (dir_ / absl::StrCat("agent-", i, ".log")).string());
  }
  Process& agent(size_t i) { return *agents_[i]; }

  std::unique_ptr<tunefleet::v1::TuningService::Stub> Stub() const {
    client::ChannelOptions channel;
    channel.token = tuner_token_;
    return tunefleet::v1::TuningService::NewStub(
        client::CreateServerChannel(address(), channel));
  }

  // The server's device list; nullopt while it does not answer.
  std::optional<tunefleet::v1::ListDevicesResponse> Devices() const {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() +
                         std::chrono::seconds(2));
    tunefleet::v1::ListDevicesResponse response;
    if (!Stub()->ListDevices(&context, {}, &response).ok()) return std::nullopt;
    return response;
  }
  // Agents connected under `key`.
  int Connected(const std::string& key) const {
    auto devices = Devices();
    if (!devices) return -1;
    for (const auto& d : devices->devices()) {
      if (d.device_key() == key) return static_cast<int>(d.connected_agents());
    }
    return 0;
  }

  // The job's progress; nullopt while the server does not answer.
  std::optional<tunefleet::v1::JobProgress> Job(int64_t job_id) const {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() +
                         std::chrono::seconds(2));
    tunefleet::v1::ListJobsResponse response;
    if (!Stub()->ListJobs(&context, {}, &response).ok()) return std::nullopt;
    for (const auto& j : response.jobs()) {
      if (j.job_id() == job_id) return j;
    }
    return std::nullopt;
  }

  // Polls `done` every 50 ms until true or `limit` passes.
  static bool WaitFor(const std::function<bool()>& done,
                      std::chrono::milliseconds limit) {
    const auto end = std::chrono::steady_clock::now() + limit;
    while (std::chrono::steady_clock::now() < end) {
      if (done()) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return done();
  }

 private:
  int heartbeat_ms_;
  int port_;
  std::string tuner_token_;
  std::filesystem::path dir_;
  std::unique_ptr<Process> server_;
  std::vector<std::unique_ptr<Process>> agents_;
};

}  // namespace tunefleet::testing

#endif  // TUNEFLEET_TESTS_FLEET_HARNESS_H_
