// Authentication and TLS end to end: a real server in this process on a
// loopback port, real gRPC clients and agents, the tunefleet and
// tunefleet-server binaries, and certificates made by deploy/make-certs.sh.
// Every test asserts what was refused or allowed and with which code.
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "auth/tls.h"
#include "auth/tokens.h"
#include "cli/common.h"
#include "client/channel.h"
#include "device_agent/agent.h"
#include "device_agent/backend.h"
#include "google/protobuf/descriptor.h"
#include "gtest/gtest.h"
#include "kernels_templates/workload.h"
#include "server/server.h"
#include "tests/support/command_runner.h"
#include "tests/support/small_job.h"
#include "trial/trial_request.h"
#include "tunefleet/v1/agent.grpc.pb.h"
#include "tunefleet/v1/tuning.grpc.pb.h"

namespace tunefleet::testing {
namespace {

// This process's directory under the test temp dir, removed at exit.
const std::string& RootDir() {
  struct Root {
    std::string path =
        absl::StrCat(::testing::TempDir(), "/auth_test_", getpid());
    ~Root() {
      if (std::getenv("TUNEFLEET_KEEP_TEST_DIRS") == nullptr) {
        std::error_code ignored;
        std::filesystem::remove_all(path, ignored);
      }
    }
  };
  static const Root root;
  return root.path;
}

// A fresh directory for one test.
std::string FreshDir(const std::string& name) {
  const std::string dir = absl::StrCat(RootDir(), "/", name);
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

// Two independent CAs, made once per process.
const std::string& CertsA() {
  static const std::string dir = MakeCerts(FreshDir("certs_a"));
  return dir;
}
const std::string& CertsB() {
  static const std::string dir = MakeCerts(FreshDir("certs_b"));
  return dir;
}

// One token of each role, and the set the server accepts.
struct Tokens {
  std::string agent, tuner, reader;
  std::shared_ptr<auth::TokenSet> set = std::make_shared<auth::TokenSet>();
};

Tokens MakeTokens() {
  Tokens t;
  t.agent = *auth::GenerateToken();
  t.tuner = *auth::GenerateToken();
  t.reader = *auth::GenerateToken();
  EXPECT_TRUE(t.set
                  ->Add(auth::TokenEntry::ForToken(t.agent, auth::Role::kAgent,
                                                   "board-1"))
                  .ok());
  EXPECT_TRUE(t.set
                  ->Add(auth::TokenEntry::ForToken(t.tuner, auth::Role::kTuner,
                                                   "alice"))
                  .ok());
  EXPECT_TRUE(t.set
                  ->Add(auth::TokenEntry::ForToken(
                      t.reader, auth::Role::kReader, "dashboard"))
                  .ok());
  return t;
}

server::ServerOptions LoopbackOptions(const std::string& name) {
  server::ServerOptions options;
  options.listen = "127.0.0.1:0";
  options.db_path = FreshDir(name) + "/t.db";
  options.verbose = false;
  options.resume_jobs = false;
  return options;
}

std::unique_ptr<tunefleet::v1::TuningService::Stub> TuningStub(
    const std::string& address, const client::ChannelOptions& channel) {
  return tunefleet::v1::TuningService::NewStub(
      client::CreateServerChannel(address, channel));
}

client::ChannelOptions WithToken(const std::string& token) {
  client::ChannelOptions channel;
  channel.token = token;
  return channel;
}

// ListDevices with a deadline far beyond any handshake.
grpc::Status ListDevices(tunefleet::v1::TuningService::Stub& stub) {
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() +
                       std::chrono::seconds(30));
  tunefleet::v1::ListDevicesResponse response;
  return stub.ListDevices(&context, {}, &response);
}

// A context whose call gives up after 30 s.
std::unique_ptr<grpc::ClientContext> ContextWithDeadline() {
  auto c = std::make_unique<grpc::ClientContext>();
  c->set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
  return c;
}

// The status of the unary call `method` of `stub` with `request`.
template <typename Stub, typename Request, typename Response>
grpc::Status UnaryStatus(Stub& stub,
                         grpc::Status (Stub::*method)(grpc::ClientContext*,
                                                      const Request&,
                                                      Response*),
                         const Request& request) {
  Response response;
  return (stub.*method)(ContextWithDeadline().get(), request, &response);
}

// Every TuningService method once with `channel`; the status of each.
std::vector<std::pair<std::string, grpc::Status>> CallEveryTuningMethod(
    const std::string& address, const client::ChannelOptions& channel) {
  using Stub = tunefleet::v1::TuningService::Stub;
  auto stub = TuningStub(address, channel);
  std::vector<std::pair<std::string, grpc::Status>> out;
  out.emplace_back("SubmitJob", UnaryStatus(*stub, &Stub::SubmitJob, {}));
  tunefleet::v1::CancelJobRequest cancel;
  cancel.set_job_id(1);
  out.emplace_back("CancelJob", UnaryStatus(*stub, &Stub::CancelJob, cancel));
  {
    auto c = ContextWithDeadline();
    tunefleet::v1::WatchJobRequest q;
    q.set_job_id(1);
    auto reader = stub->WatchJob(c.get(), q);
    tunefleet::v1::JobProgress p;
    while (reader->Read(&p)) {
    }
    out.emplace_back("WatchJob", reader->Finish());
  }
  out.emplace_back("ListDevices", ListDevices(*stub));
  out.emplace_back("QueryRecords", UnaryStatus(*stub, &Stub::QueryRecords, {}));
  out.emplace_back("ListJobs", UnaryStatus(*stub, &Stub::ListJobs, {}));
  tunefleet::v1::GetJobRequest get;
  get.set_job_id(1);
  out.emplace_back("GetJob", UnaryStatus(*stub, &Stub::GetJob, get));
  return out;
}

// Opens AgentService/Connect with `channel`, sends a Hello and returns how
// the server ended the stream (OK only if it accepted and then closed).
grpc::Status ConnectAsAgent(const std::string& address,
                            const client::ChannelOptions& channel) {
  auto stub = tunefleet::v1::AgentService::NewStub(
      client::CreateServerChannel(address, channel));
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() +
                       std::chrono::seconds(30));
  auto stream = stub->Connect(&context);
  tunefleet::v1::AgentMessage hello;
  hello.mutable_hello()->set_device_key("probe");
  *hello.mutable_hello()->mutable_device() =
      device_agent::FakeBackend::FakeDevice("auth_test");
  stream->Write(hello);
  tunefleet::v1::ServerMessage reply;
  if (stream->Read(&reply) && reply.has_welcome()) {
    // Accepted: end the stream ourselves.
    stream->WritesDone();
    context.TryCancel();
    stream->Finish();
    return grpc::Status::OK;
  }
  return stream->Finish();
}

// ---------------------------------------------------------------------------
// Tokens and the tokens file.

TEST(TokenFile, TokenAddWritesAPrivateFileWithOnlyTheHash) {
  const std::string dir = FreshDir("token_add");
  const std::string file = dir + "/tokens.txt";
  const std::string bin = CliBinary();
  auto r =
      RunCommand(bin + " token add --role tuner --name alice --tokens " + file);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string token(absl::StripAsciiWhitespace(r.out));
  EXPECT_EQ(token.size(), 43u) << r.out;
  struct stat st {};
  ASSERT_EQ(stat(file.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  const std::string text = ReadAll(file);
  EXPECT_EQ(text.find(token), std::string::npos) << "plaintext token stored";
  EXPECT_NE(text.find(auth::HashToken(token) + " tuner alice"),
            std::string::npos)
      << text;

  // A second token; the default name is the role and a hash prefix.
  r = RunCommand(bin + " token add --role agent --tokens " + file);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string agent_token(absl::StripAsciiWhitespace(r.out));
  auto set = auth::TokenSet::Load(file);
  ASSERT_TRUE(set.ok()) << set.status();
  ASSERT_EQ(set->entries().size(), 2u);
  ASSERT_NE(set->Find(agent_token), nullptr);
  EXPECT_EQ(set->Find(agent_token)->name,
            "agent-" + auth::HashToken(agent_token).substr(0, 8));
  EXPECT_EQ(set->Find(token)->role, auth::Role::kTuner);

  // list shows names and roles, never a token.
  r = RunCommand(bin + " token list --tokens " + file);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("alice"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("tuner"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find(token), std::string::npos);
  EXPECT_EQ(r.out.find(agent_token), std::string::npos);

  // Refusals: an existing name, an unknown role.
  r = RunCommand(bin + " token add --role reader --name alice --tokens " +
                 file);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("exists"), std::string::npos) << r.err;
  r = RunCommand(bin + " token add --role admin --tokens " + file);
  EXPECT_EQ(r.exit_code, 2);

  // remove revokes by name.
  r = RunCommand(bin + " token remove --name alice --tokens " + file);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  set = auth::TokenSet::Load(file);
  ASSERT_TRUE(set.ok()) << set.status();
  EXPECT_EQ(set->Find(token), nullptr);
  EXPECT_NE(set->Find(agent_token), nullptr);
  ASSERT_EQ(stat(file.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  r = RunCommand(bin + " token remove --name alice --tokens " + file);
  EXPECT_EQ(r.exit_code, 2);
}

TEST(TokenFile, AFileOthersMayReadIsRefused) {
  const std::string file = FreshDir("token_mode") + "/tokens.txt";
  ASSERT_TRUE(auth::AppendTokenToFile(file, auth::TokenEntry::ForToken(
                                                "x", auth::Role::kReader, "r"))
                  .ok());
  ASSERT_EQ(chmod(file.c_str(), 0644), 0);
  auto set = auth::TokenSet::Load(file);
  EXPECT_TRUE(absl::IsFailedPrecondition(set.status())) << set.status();
  EXPECT_NE(set.status().message().find("chmod 600"), std::string::npos);
  EXPECT_TRUE(absl::IsFailedPrecondition(auth::AppendTokenToFile(
      file, auth::TokenEntry::ForToken("y", auth::Role::kReader, "s"))));
  auto r = RunCommand(BinaryDir() +
                      "/cli/tunefleet token add --role agent "
                      "--tokens " +
                      file);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("chmod 600"), std::string::npos) << r.err;
}

// ---------------------------------------------------------------------------
// The rules a server starts under.

TEST(StartRules, NoTokensNeedsNoAuth) {
  server::ServerOptions options = LoopbackOptions("rules_tokens");
  auto s = server::Server::Start(options);
  EXPECT_TRUE(absl::IsFailedPrecondition(s.status())) << s.status();
  EXPECT_NE(s.status().message().find("--tokens"), std::string::npos);
  options.no_auth = true;
  s = server::Server::Start(options);
  EXPECT_TRUE(s.ok()) << s.status();
}

TEST(StartRules, NonLoopbackWithoutTlsNeedsInsecure) {
  server::ServerOptions options = LoopbackOptions("rules_listen");
  options.listen = "0.0.0.0:0";
  options.tokens = MakeTokens().set;
  auto s = server::Server::Start(options);
  EXPECT_TRUE(absl::IsFailedPrecondition(s.status())) << s.status();
  EXPECT_NE(s.status().message().find("--insecure"), std::string::npos)
      << s.status();
  // TLS, or the explicit flag, allows it.
  {
    server::ServerOptions tls = options;
    tls.tls = {CertsA() + "/server.pem", CertsA() + "/server.key", ""};
    auto started = server::Server::Start(tls);
    EXPECT_TRUE(started.ok()) << started.status();
  }
  options.insecure = true;
  options.db_path = FreshDir("rules_listen_insecure") + "/t.db";
  auto started = server::Server::Start(options);
  EXPECT_TRUE(started.ok()) << started.status();
}

TEST(StartRules, NoAuthOffLoopbackNeedsInsecureEvenWithTls) {
  server::ServerOptions options = LoopbackOptions("rules_noauth");
  options.listen = "0.0.0.0:0";
  options.no_auth = true;
  options.tls = {CertsA() + "/server.pem", CertsA() + "/server.key", ""};
  auto s = server::Server::Start(options);
  EXPECT_TRUE(absl::IsFailedPrecondition(s.status())) << s.status();
  EXPECT_NE(s.status().message().find("--insecure"), std::string::npos);
}

TEST(StartRules, TheServerBinaryRefusesUnsafeSettings) {
  const std::string dir = FreshDir("rules_binary");
  // `timeout`: a server that wrongly starts fails the test, not hangs it.
  const std::string server = "timeout 60 " + BinaryDir() +
                             "/server/tunefleet-server --db " + dir + "/t.db";
  auto r = RunCommand(server + " --listen 127.0.0.1:0");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--tokens"), std::string::npos) << r.err;
  r = RunCommand(server + " --listen 0.0.0.0:0 --no-auth");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--insecure"), std::string::npos) << r.err;
  const std::string tokens = dir + "/tokens.txt";
  ASSERT_TRUE(
      auth::AppendTokenToFile(
          tokens, auth::TokenEntry::ForToken("x", auth::Role::kReader, "r"))
          .ok());
  r = RunCommand(server + " --listen 0.0.0.0:0 --tokens " + tokens);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("without TLS"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("--insecure"), std::string::npos) << r.err;
  r = RunCommand(server + " --listen 127.0.0.1:0 --tls-cert " + CertsA() +
                 "/server.pem --tls-key " + CertsB() + "/server.key --tokens " +
                 tokens);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("does not match"), std::string::npos) << r.err;
}

// ---------------------------------------------------------------------------
// Tokens and roles on a running server (plaintext loopback).

class Auth : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    tokens_ = std::make_unique<Tokens>(MakeTokens());
    server::ServerOptions options = LoopbackOptions("roles");
    options.tokens = tokens_->set;
    auto server = server::Server::Start(options);
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = *std::move(server);
  }
  static void TearDownTestSuite() {
    server_.reset();
    tokens_.reset();
  }
  static std::string address() { return server_->address(); }

  static inline std::unique_ptr<Tokens> tokens_;
  static inline std::unique_ptr<server::Server> server_;
};

TEST_F(Auth, NoTokenIsUnauthenticatedForEveryMethod) {
  for (const auto& [method, status] :
       CallEveryTuningMethod(address(), client::ChannelOptions())) {
    EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAUTHENTICATED)
        << method << ": " << status.error_message();
    EXPECT_NE(status.error_message().find("no access token"), std::string::npos)
        << method << ": " << status.error_message();
    // It says what a gRPC client of any language must send.
    EXPECT_NE(status.error_message().find("'authorization: Bearer <token>'"),
              std::string::npos)
        << method << ": " << status.error_message();
  }
  grpc::Status s = ConnectAsAgent(address(), client::ChannelOptions());
  EXPECT_EQ(s.error_code(), grpc::StatusCode::UNAUTHENTICATED)
      << s.error_message();
}

TEST_F(Auth, UnknownOrMalformedTokenIsUnauthenticated) {
  for (const auto& [method, status] :
       CallEveryTuningMethod(address(), WithToken(*auth::GenerateToken()))) {
    EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAUTHENTICATED) << method;
    EXPECT_NE(status.error_message().find("unknown access token"),
              std::string::npos)
        << status.error_message();
  }
  EXPECT_EQ(ConnectAsAgent(address(), WithToken("guess")).error_code(),
            grpc::StatusCode::UNAUTHENTICATED);
  // A right token in the wrong scheme is still refused.
  auto stub = TuningStub(address(), client::ChannelOptions());
  grpc::ClientContext context;
  context.AddMetadata("authorization", "Basic " + tokens_->tuner);
  tunefleet::v1::ListDevicesResponse response;
  grpc::Status s = stub->ListDevices(&context, {}, &response);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_NE(s.error_message().find("Bearer"), std::string::npos);
}

// RFC 6750 clients may send the scheme in any case.
TEST_F(Auth, BearerSchemeIsCaseInsensitive) {
  auto stub = TuningStub(address(), client::ChannelOptions());
  for (const std::string scheme : {"bearer ", "BEARER ", "Bearer "}) {
    grpc::ClientContext context;
    context.AddMetadata("authorization", scheme + tokens_->tuner);
    tunefleet::v1::ListDevicesResponse response;
    grpc::Status s = stub->ListDevices(&context, {}, &response);
    EXPECT_TRUE(s.ok()) << scheme << ": " << s.error_message();
  }
  grpc::ClientContext context;
  context.AddMetadata("authorization", "bearer");
  tunefleet::v1::ListDevicesResponse response;
  EXPECT_EQ(stub->ListDevices(&context, {}, &response).error_code(),
            grpc::StatusCode::UNAUTHENTICATED);
}

TEST_F(Auth, ReaderMayReadButNotSubmitOrCancel) {
  for (const auto& [method, status] :
       CallEveryTuningMethod(address(), WithToken(tokens_->reader))) {
    if (method == "SubmitJob" || method == "CancelJob") {
      EXPECT_EQ(status.error_code(), grpc::StatusCode::PERMISSION_DENIED)
          << method;
      EXPECT_NE(status.error_message().find("needs a token of role tuner"),
                std::string::npos)
          << status.error_message();
      EXPECT_NE(status.error_message().find("'dashboard' has role reader"),
                std::string::npos)
          << status.error_message();
    } else {
      // Past authorization: the request itself decides (job 1 is unknown).
      EXPECT_NE(status.error_code(), grpc::StatusCode::PERMISSION_DENIED)
          << method << ": " << status.error_message();
      EXPECT_NE(status.error_code(), grpc::StatusCode::UNAUTHENTICATED)
          << method;
    }
  }
  auto stub = TuningStub(address(), WithToken(tokens_->reader));
  EXPECT_TRUE(ListDevices(*stub).ok());
  EXPECT_EQ(ConnectAsAgent(address(), WithToken(tokens_->reader)).error_code(),
            grpc::StatusCode::PERMISSION_DENIED);
}

TEST_F(Auth, AgentTokenIsOnlyForTheAgentService) {
  for (const auto& [method, status] :
       CallEveryTuningMethod(address(), WithToken(tokens_->agent))) {
    EXPECT_EQ(status.error_code(), grpc::StatusCode::PERMISSION_DENIED)
        << method;
    EXPECT_NE(status.error_message().find("has role agent"), std::string::npos)
        << status.error_message();
  }
  grpc::Status s = ConnectAsAgent(address(), WithToken(tokens_->tuner));
  EXPECT_EQ(s.error_code(), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_NE(s.error_message().find("Connect needs a token of role agent"),
            std::string::npos)
      << s.error_message();
  EXPECT_TRUE(ConnectAsAgent(address(), WithToken(tokens_->agent)).ok());
}

TEST_F(Auth, TunerRunsAJobOnAnAuthenticatedAgent) {
  device_agent::AgentOptions agent_options;
  agent_options.server = address();
  agent_options.device_key = "auth-fake";
  agent_options.verbose = false;
  agent_options.channel = WithToken(tokens_->agent);
  device_agent::Agent fake_agent(
      agent_options,
      std::make_unique<device_agent::FakeBackend>(
          device_agent::FakeBackend::FakeDevice("auth_test"), 0));
  std::thread agent_thread([&] { EXPECT_TRUE(fake_agent.Run().ok()); });
  for (int i = 0; i < 3000 && server_->scheduler().Capacity("auth-fake") == 0;
       ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_GT(server_->scheduler().Capacity("auth-fake"), 0u);

  const tunefleet::v1::SubmitJobRequest request =
      testing::GemmJobRequest("auth-fake", 4, /*seed=*/0);
  client::ServerConnection connection{address(), WithToken(tokens_->tuner)};
  absl::StatusOr<cli::JobOutcome> outcome =
      cli::RunJob(connection, request, nullptr, nullptr);
  fake_agent.Stop();
  agent_thread.join();
  ASSERT_TRUE(outcome.ok()) << outcome.status();
  EXPECT_EQ(outcome->last.state(), tunefleet::v1::JOB_STATE_DONE)
      << outcome->last.message();
  EXPECT_EQ(outcome->last.trials_done(), 4u);

  // The tuner may also cancel (this job has ended: FAILED_PRECONDITION,
  // past authorization).
  auto stub = TuningStub(address(), WithToken(tokens_->tuner));
  grpc::ClientContext context;
  tunefleet::v1::CancelJobRequest cancel;
  cancel.set_job_id(outcome->submitted.job_id());
  tunefleet::v1::JobProgress progress;
  EXPECT_EQ(stub->CancelJob(&context, cancel, &progress).error_code(),
            grpc::StatusCode::FAILED_PRECONDITION);
}

TEST(AuthReload, NewTokensReplaceOldOnes) {
  Tokens t = MakeTokens();
  server::ServerOptions options = LoopbackOptions("reload");
  options.tokens = t.set;
  auto server = server::Server::Start(options);
  ASSERT_TRUE(server.ok()) << server.status();
  const std::string address = (*server)->address();
  EXPECT_TRUE(ListDevices(*TuningStub(address, WithToken(t.reader))).ok());

  const std::string fresh = *auth::GenerateToken();
  auto next = std::make_shared<auth::TokenSet>();
  ASSERT_TRUE(next->Add(auth::TokenEntry::ForToken(fresh, auth::Role::kReader,
                                                   "new-reader"))
                  .ok());
  ASSERT_TRUE((*server)->SetTokens(next).ok());
  EXPECT_EQ(ListDevices(*TuningStub(address, WithToken(t.reader))).error_code(),
            grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_TRUE(ListDevices(*TuningStub(address, WithToken(fresh))).ok());
}

TEST(AuthReload, NoAuthServerAcceptsEveryoneAndCannotBeGivenTokens) {
  server::ServerOptions options = LoopbackOptions("noauth");
  options.no_auth = true;
  auto server = server::Server::Start(options);
  ASSERT_TRUE(server.ok()) << server.status();
  EXPECT_TRUE(
      ListDevices(*TuningStub((*server)->address(), client::ChannelOptions()))
          .ok());
  EXPECT_TRUE(
      absl::IsFailedPrecondition((*server)->SetTokens(MakeTokens().set)));
}

// ---------------------------------------------------------------------------
// TLS.

std::unique_ptr<server::Server> StartTlsServer(const std::string& name,
                                               const Tokens& tokens,
                                               bool require_client_cert) {
  server::ServerOptions options = LoopbackOptions(name);
  options.tokens = tokens.set;
  options.tls.cert_file = CertsA() + "/server.pem";
  options.tls.key_file = CertsA() + "/server.key";
  if (require_client_cert) options.tls.client_ca_file = CertsA() + "/ca.pem";
  auto server = server::Server::Start(options);
  EXPECT_TRUE(server.ok()) << server.status();
  return server.ok() ? *std::move(server) : nullptr;
}

client::ChannelOptions TlsChannel(const std::string& token,
                                  const std::string& ca_dir,
                                  const std::string& cert_dir = "") {
  client::ChannelFiles files;
  files.token = token;
  files.ca_file = ca_dir + "/ca.pem";
  if (!cert_dir.empty()) {
    files.client_cert_file = cert_dir + "/client.pem";
    files.client_key_file = cert_dir + "/client.key";
  }
  absl::StatusOr<client::ChannelOptions> loaded =
      client::LoadChannelOptions(files);
  EXPECT_TRUE(loaded.ok()) << loaded.status();
  return loaded.ok() ? *loaded : client::ChannelOptions();
}

TEST(Tls, ClientWithTheRightCaConnectsAndAWrongCaFails) {
  Tokens t = MakeTokens();
  auto server = StartTlsServer("tls", t, false);
  ASSERT_NE(server, nullptr);
  ASSERT_TRUE(server->tls());
  const std::string address = server->address();

  grpc::Status ok =
      ListDevices(*TuningStub(address, TlsChannel(t.reader, CertsA())));
  EXPECT_TRUE(ok.ok()) << ok.error_message();
  // Tokens still apply over TLS.
  EXPECT_EQ(
      ListDevices(*TuningStub(address, TlsChannel("", CertsA()))).error_code(),
      grpc::StatusCode::UNAUTHENTICATED);
  // A server certificate from another CA is not trusted.
  EXPECT_EQ(ListDevices(*TuningStub(address, TlsChannel(t.reader, CertsB())))
                .error_code(),
            grpc::StatusCode::UNAVAILABLE);
  // A plaintext client cannot talk to a TLS server.
  EXPECT_EQ(ListDevices(*TuningStub(address, WithToken(t.reader))).error_code(),
            grpc::StatusCode::UNAVAILABLE);
}

TEST(Tls, ClientCertificatesAreRequiredWithClientCa) {
  Tokens t = MakeTokens();
  auto server = StartTlsServer("mtls", t, true);
  ASSERT_NE(server, nullptr);
  const std::string address = server->address();
  // No client certificate.
  EXPECT_EQ(ListDevices(*TuningStub(address, TlsChannel(t.reader, CertsA())))
                .error_code(),
            grpc::StatusCode::UNAVAILABLE);
  // A client certificate from another CA.
  EXPECT_EQ(ListDevices(
                *TuningStub(address, TlsChannel(t.reader, CertsA(), CertsB())))
                .error_code(),
            grpc::StatusCode::UNAVAILABLE);
  // The right one.
  grpc::Status ok = ListDevices(
      *TuningStub(address, TlsChannel(t.reader, CertsA(), CertsA())));
  EXPECT_TRUE(ok.ok()) << ok.error_message();

  // An agent with its certificate and token joins.
  client::ChannelFiles files;
  files.token = t.agent;
  files.ca_file = CertsA() + "/ca.pem";
  files.client_cert_file = CertsA() + "/agent.pem";
  files.client_key_file = CertsA() + "/agent.key";
  absl::StatusOr<client::ChannelOptions> channel =
      client::LoadChannelOptions(files);
  ASSERT_TRUE(channel.ok()) << channel.status();
  EXPECT_TRUE(ConnectAsAgent(address, *channel).ok());
}

TEST(Tls, TheCliTakesTokenAndCaFlags) {
  Tokens t = MakeTokens();
  auto server = StartTlsServer("tls_cli", t, false);
  ASSERT_NE(server, nullptr);
  const std::string dir = FreshDir("tls_cli_files");
  const std::string token_file = dir + "/reader.token";
  std::ofstream(token_file) << t.reader << "\n";
  const std::string devices =
      CliBinary() + " devices --server " + server->address() + " --json";

  auto r = RunCommand(devices + " --ca " + CertsA() + "/ca.pem --token-file " +
                      token_file);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.substr(0, 1), "[") << r.out;
  r = RunCommand("TUNEFLEET_TOKEN=" + t.reader + " TUNEFLEET_CA=" + CertsA() +
                 "/ca.pem " + devices);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  r = RunCommand(devices + " --ca " + CertsA() + "/ca.pem");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("no access token"), std::string::npos) << r.err;
  r = RunCommand(devices + " --ca " + CertsB() + "/ca.pem --token-file " +
                 token_file);
  EXPECT_NE(r.exit_code, 0);
  // The reader may not submit.
  r = RunCommand(CliBinary() + " cancel 1 --server " + server->address() +
                 " --ca " + CertsA() + "/ca.pem --token-file " + token_file);
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("role tuner"), std::string::npos) << r.err;
  // Flags that do not go together.
  r = RunCommand(devices + " --ca " + CertsA() + "/ca.pem --client-cert " +
                 CertsA() + "/client.pem --token-file " + token_file);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--client-key"), std::string::npos) << r.err;
  r = RunCommand(devices + " --ca " + dir + "/missing.pem");
  EXPECT_EQ(r.exit_code, 2);
}

TEST(Tls, MismatchedKeyIsRefusedBeforeListening) {
  auth::TlsServerFiles tls{CertsA() + "/server.pem", CertsB() + "/server.key",
                           ""};
  auto credentials = auth::MakeServerCredentials(tls);
  EXPECT_TRUE(absl::IsInvalidArgument(credentials.status()))
      << credentials.status();
  tls = {CertsA() + "/server.pem", "", ""};
  EXPECT_TRUE(
      absl::IsInvalidArgument(auth::MakeServerCredentials(tls).status()));
  tls = {"", "", CertsA() + "/ca.pem"};
  EXPECT_TRUE(
      absl::IsInvalidArgument(auth::MakeServerCredentials(tls).status()));
  tls = {CertsA() + "/nope.pem", CertsA() + "/server.key", ""};
  EXPECT_TRUE(absl::IsNotFound(auth::MakeServerCredentials(tls).status()));
}

}  // namespace
}  // namespace tunefleet::testing
