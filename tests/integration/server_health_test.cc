// gRPC's standard services on a server that requires tokens: the health
// service (grpc.health.v1.Health) and server reflection answer callers
// with no token (load balancers and grpc_health_probe send none; the
// reflected .proto files are the public contract), while tunefleet's own
// methods still refuse them; a health watcher sees NOT_SERVING when the
// server shuts down. The no-auth server's answers are in
// server_start_test.cc.
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>

#include "absl/strings/str_cat.h"
#include "auth/tokens.h"
#include "gmock/gmock.h"
#include "grpcpp/generic/generic_stub.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "server/server.h"
#include "tests/support/standard_services.h"

namespace tunefleet::testing {
namespace {

using ::testing::HasSubstr;

class ServerHealth : public ::testing::Test {
 protected:
  void SetUp() override {
    db_ = (std::filesystem::temp_directory_path() /
           absl::StrCat(
               "tf_health_", getpid(), "_",
               ::testing::UnitTest::GetInstance()->current_test_info()->name(),
               ".db"))
              .string();
    auto tokens = std::make_shared<auth::TokenSet>();
    reader_token_ = *auth::GenerateToken();
    ASSERT_TRUE(tokens
                    ->Add(auth::TokenEntry::ForToken(
                        reader_token_, auth::Role::kReader, "dashboard"))
                    .ok());
    server::ServerOptions options;
    options.listen = "127.0.0.1:0";
    options.db_path = db_;
    options.verbose = false;
    options.resume_jobs = false;
    options.tokens = tokens;
    auto started = server::Server::Start(options);
    ASSERT_TRUE(started.ok()) << started.status();
    server_ = std::move(*started);
    stub_ = std::make_unique<grpc::GenericStub>(grpc::CreateChannel(
        server_->address(), grpc::InsecureChannelCredentials()));
  }
  void TearDown() override {
    stub_.reset();
    server_.reset();
    for (const char* suffix : {"", "-wal", "-shm"}) {
      std::filesystem::remove(db_ + suffix);
    }
  }

  std::string db_;
  std::string reader_token_;
  std::unique_ptr<server::Server> server_;
  std::unique_ptr<grpc::GenericStub> stub_;
};

TEST_F(ServerHealth, HealthAnswersWithoutAToken) {
  for (const std::string service : {"", "tunefleet.v1.TuningService"}) {
    std::string response;
    const grpc::Status s = HealthCheck(*stub_, service, &response);
    EXPECT_TRUE(s.ok()) << "'" << service << "': " << s.error_message();
    EXPECT_EQ(response, kHealthServing) << "'" << service << "'";
  }
  // A token is not looked at: an unknown one changes nothing.
  std::string response;
  const grpc::Status s = HealthCheck(*stub_, "", &response,
                                     {{"authorization", "Bearer not-a-token"}});
  EXPECT_TRUE(s.ok()) << s.error_message();
  EXPECT_EQ(response, kHealthServing);
}

TEST_F(ServerHealth, ReflectionAnswersWithoutATokenButTheServicesDoNot) {
  const std::string services = Reflect(*stub_, ListServicesRequest());
  EXPECT_THAT(services, HasSubstr("tunefleet.v1.TuningService"));
  EXPECT_THAT(services, HasSubstr("tunefleet.v1.AgentService"));
  EXPECT_THAT(services, HasSubstr("grpc.health.v1.Health"));

  // The open door is only the standard services: tunefleet's methods want
  // a token, and a reader's is enough to read.
  std::string response;
  grpc::Status s = GenericUnary(*stub_, "/tunefleet.v1.TuningService/ListJobs",
                                "", &response);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::UNAUTHENTICATED)
      << s.error_message();
  s = GenericUnary(*stub_, "/tunefleet.v1.TuningService/ListJobs", "",
                   &response,
                   {{"authorization", absl::StrCat("Bearer ", reader_token_)}});
  EXPECT_TRUE(s.ok()) << s.error_message();
}

// A grpc.health.v1.Health/Watch of the whole server sees SERVING, then
// NOT_SERVING once Shutdown() begins (before the port closes).
TEST_F(ServerHealth, AWatcherSeesNotServingAtShutdown) {
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() +
                       std::chrono::seconds(20));
  grpc::CompletionQueue cq;
  auto call = stub_->PrepareCall(&context, "/grpc.health.v1.Health/Watch", &cq);
  void* tag = nullptr;
  bool ok = false;
  auto step = [&] { return cq.Next(&tag, &ok) && ok; };
  call->StartCall(reinterpret_cast<void*>(1));
  ASSERT_TRUE(step());
  call->Write(Buffer(HealthRequest("")), reinterpret_cast<void*>(2));
  ASSERT_TRUE(step());
  call->WritesDone(reinterpret_cast<void*>(3));
  ASSERT_TRUE(step());
  grpc::ByteBuffer reply;
  call->Read(&reply, reinterpret_cast<void*>(4));
  ASSERT_TRUE(step());
  EXPECT_EQ(Bytes(reply), kHealthServing);

  std::thread stopper([this] { server_->Shutdown(); });
  call->Read(&reply, reinterpret_cast<void*>(5));
  const bool got = step();
  EXPECT_TRUE(got) << "the watch ended without a NOT_SERVING";
  if (got) {
    EXPECT_EQ(Bytes(reply), kHealthNotServing);
  }
  stopper.join();
  grpc::Status status;
  context.TryCancel();
  call->Finish(&status, reinterpret_cast<void*>(6));
  cq.Next(&tag, &ok);
}

}  // namespace
}  // namespace tunefleet::testing
