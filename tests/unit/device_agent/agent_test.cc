// Unit tests of tunefleet_agent's connection loop: Agent::Run() against a
// real gRPC AgentService on loopback that answers each Connect as its
// script says. A refused token ends Run() with the server's reason; every
// other end of a connection is retried.
#include "device_agent/agent.h"

#include <chrono>
#include <future>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "device_agent/backend.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "tunefleet/v1/agent.grpc.pb.h"

namespace tunefleet::device_agent {
namespace {

using tunefleet::v1::AgentMessage;
using tunefleet::v1::ServerMessage;

// How the scripted server answers one Connect.
struct Answer {
  enum Kind {
    kRefuse,           // end the call at once with `status`
    kWelcomeAndClose,  // accept the agent, then end the stream (OK)
    kWelcomeAndHold,   // accept the agent, keep the stream until it ends it
  };
  Kind kind = kRefuse;
  grpc::Status status;
};

Answer Refuse(grpc::StatusCode code, const std::string& message) {
  return {Answer::kRefuse, grpc::Status(code, message)};
}

// Answers the n-th Connect with script[n] (the last entry once past the
// end).
class ScriptedAgentService final : public tunefleet::v1::AgentService::Service {
 public:
  explicit ScriptedAgentService(std::vector<Answer> script)
      : script_(std::move(script)) {}

  grpc::Status Connect(
      grpc::ServerContext* context,
      grpc::ServerReaderWriter<ServerMessage, AgentMessage>* stream) override {
    Answer answer;
    {
      absl::MutexLock lock(&mu_);
      answer = script_[std::min(connects_, script_.size() - 1)];
      ++connects_;
    }
    if (answer.kind == Answer::kRefuse) return answer.status;
    AgentMessage hello;
    if (!stream->Read(&hello)) return grpc::Status::OK;
    ServerMessage welcome;
    welcome.mutable_welcome()->set_agent_id("scripted-1");
    stream->Write(welcome);
    {
      absl::MutexLock lock(&mu_);
      ++welcomed_;
    }
    if (answer.kind == Answer::kWelcomeAndClose) return grpc::Status::OK;
    AgentMessage ignored;
    while (stream->Read(&ignored)) {
    }
    return grpc::Status::OK;
  }

  size_t connects() {
    absl::MutexLock lock(&mu_);
    return connects_;
  }
  size_t welcomed() {
    absl::MutexLock lock(&mu_);
    return welcomed_;
  }

 private:
  const std::vector<Answer> script_;
  absl::Mutex mu_;
  size_t connects_ ABSL_GUARDED_BY(mu_) = 0;
  size_t welcomed_ ABSL_GUARDED_BY(mu_) = 0;
};

// A server on a free loopback port running `service`.
class ScriptedServer {
 public:
  explicit ScriptedServer(std::vector<Answer> script)
      : service_(std::move(script)) {
    grpc::ServerBuilder builder;
    builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(),
                             &port_);
    builder.RegisterService(&service_);
    server_ = builder.BuildAndStart();
  }
  ~ScriptedServer() {
    if (server_) server_->Shutdown();
  }

  bool started() const { return server_ != nullptr && port_ > 0; }
  std::string address() const { return "127.0.0.1:" + std::to_string(port_); }
  ScriptedAgentService& service() { return service_; }

 private:
  ScriptedAgentService service_;
  int port_ = 0;
  std::unique_ptr<grpc::Server> server_;
};

std::unique_ptr<Agent> MakeAgent(const std::string& address) {
  AgentOptions options;
  options.server = address;
  options.device_key = "scripted";
  options.verbose = false;
  // Retries in milliseconds, so that a script of several answers is quick.
  options.min_backoff = absl::Milliseconds(1);
  options.max_backoff = absl::Milliseconds(20);
  return std::make_unique<Agent>(
      options, std::make_unique<FakeBackend>(
                   FakeBackend::FakeDevice("agent_test"), /*delay_us=*/0));
}

// Agent::Run()'s status. Fails the test, and stops the agent, when Run()
// has not returned after 60 s (it would otherwise retry forever).
absl::Status RunBounded(Agent& agent) {
  std::promise<absl::Status> ended;
  std::future<absl::Status> status = ended.get_future();
  std::thread runner([&] { ended.set_value(agent.Run()); });
  if (status.wait_for(std::chrono::seconds(60)) != std::future_status::ready) {
    ADD_FAILURE() << "Agent::Run() still retrying after 60 s";
    agent.Stop();
  }
  runner.join();
  return status.get();
}

TEST(AgentRun, UnknownTokenEndsRunWithTheServersReason) {
  ScriptedServer server(
      {Refuse(grpc::StatusCode::UNAUTHENTICATED,
              "unknown access token (not in the server's tokens file)")});
  ASSERT_TRUE(server.started());
  std::unique_ptr<Agent> agent = MakeAgent(server.address());
  const absl::Status status = RunBounded(*agent);
  EXPECT_TRUE(absl::IsUnauthenticated(status)) << status;
  EXPECT_NE(status.message().find("refused this agent's token"),
            std::string::npos)
      << status;
  EXPECT_NE(status.message().find("UNAUTHENTICATED: unknown access token"),
            std::string::npos)
      << status;
  EXPECT_NE(status.message().find(server.address()), std::string::npos)
      << status;
  EXPECT_EQ(server.service().connects(), 1u);
}

TEST(AgentRun, TokenOfTheWrongRoleEndsRun) {
  ScriptedServer server({Refuse(
      grpc::StatusCode::PERMISSION_DENIED,
      "Connect needs a token of role agent; token 'r' has role reader")});
  ASSERT_TRUE(server.started());
  std::unique_ptr<Agent> agent = MakeAgent(server.address());
  const absl::Status status = RunBounded(*agent);
  EXPECT_TRUE(absl::IsPermissionDenied(status)) << status;
  EXPECT_NE(status.message().find(
                "PERMISSION_DENIED: Connect needs a token of role agent"),
            std::string::npos)
      << status;
  EXPECT_EQ(server.service().connects(), 1u);
}

TEST(AgentRun, TransientEndsAreRetriedUntilTheTokenIsRefused) {
  // Accepted and then dropped (a server going away), twice unavailable,
  // once overloaded: each retried. Then the token has been revoked.
  ScriptedServer server({{Answer::kWelcomeAndClose, grpc::Status::OK},
                         Refuse(grpc::StatusCode::UNAVAILABLE, "restarting"),
                         Refuse(grpc::StatusCode::UNAVAILABLE, "restarting"),
                         Refuse(grpc::StatusCode::RESOURCE_EXHAUSTED, "busy"),
                         Refuse(grpc::StatusCode::UNAUTHENTICATED, "revoked")});
  ASSERT_TRUE(server.started());
  std::unique_ptr<Agent> agent = MakeAgent(server.address());
  const absl::Status status = RunBounded(*agent);
  EXPECT_TRUE(absl::IsUnauthenticated(status)) << status;
  EXPECT_NE(status.message().find("revoked"), std::string::npos) << status;
  EXPECT_EQ(server.service().welcomed(), 1u);
  EXPECT_EQ(server.service().connects(), 5u);
}

TEST(AgentRun, StopEndsRunWithOk) {
  ScriptedServer server({{Answer::kWelcomeAndHold, grpc::Status::OK}});
  ASSERT_TRUE(server.started());
  std::unique_ptr<Agent> agent = MakeAgent(server.address());
  std::promise<absl::Status> ended;
  std::future<absl::Status> status = ended.get_future();
  std::thread runner([&] { ended.set_value(agent->Run()); });
  // Stopped once connected (or after 60 s, when the checks below fail).
  for (int i = 0; i < 6000 && server.service().welcomed() == 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_EQ(server.service().welcomed(), 1u);
  agent->Stop();
  runner.join();
  const absl::Status result = status.get();
  EXPECT_TRUE(result.ok()) << result;
  EXPECT_EQ(server.service().connects(), 1u);
}

TEST(RequestName, NamesTrialsAndReferenceRuns) {
  tunefleet::v1::MeasureRequest request;
  request.set_trial_id(12);
  EXPECT_EQ(RequestName(request), "trial 12");
  // The server measures job 63's reference kernel under trial id -63.
  request.set_trial_id(-63);
  EXPECT_EQ(RequestName(request), "job 63 reference");
}

}  // namespace
}  // namespace tunefleet::device_agent
