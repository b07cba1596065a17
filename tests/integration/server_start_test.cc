// What a server's start and its standard services promise: a port in use or
// an address without a port is refused with a message that says what to do
// (the server in-process and the tunefleet-server binary), and generic
// gRPC tools find the health service and server reflection without the
// .proto files.
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "grpcpp/generic/generic_stub.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "server/server.h"
#include "tests/support/command_runner.h"
#include "tests/support/standard_services.h"
#include "tests/support/temp_store.h"

namespace tunefleet {
namespace {

using ::testing::HasSubstr;
using tunefleet::testing::BinaryDir;
using tunefleet::testing::RunCommand;

// Database paths of one test, named after the test binary's process, their
// files (with -wal, -shm and -openers) removed when the test ends.
class ServerStart : public ::testing::Test {
 protected:
  std::string TempDb(const std::string& name) {
    paths_.push_back((std::filesystem::temp_directory_path() /
                      absl::StrCat("tf_start_", name, "_", getpid(), ".db"))
                         .string());
    return paths_.back();
  }
  void TearDown() override {
    for (const std::string& path : paths_) testing::RemoveDatabaseFiles(path);
  }

 private:
  std::vector<std::string> paths_;
};

absl::StatusOr<std::unique_ptr<server::Server>> StartOn(
    const std::string& listen, const std::string& db) {
  server::ServerOptions options;
  options.listen = listen;
  options.db_path = db;
  options.no_auth = true;
  options.verbose = false;
  return server::Server::Start(options);
}

TEST_F(ServerStart, ASecondServerOnTheSamePortIsRefused) {
  auto first = StartOn("127.0.0.1:0", TempDb("first"));
  ASSERT_TRUE(first.ok()) << first.status();
  const std::string address = (*first)->address();

  auto second = StartOn(address, TempDb("second"));
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(second.status().message(), HasSubstr("in use"));
  EXPECT_THAT(second.status().message(), HasSubstr("another tunefleet-server"));

  // The binary says so and exits non-zero instead of sharing the port.
  const auto r = RunCommand(
      absl::StrCat(BinaryDir(), "/server/tunefleet-server --no-auth --listen ",
                   address, " --db ", TempDb("binary")));
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_THAT(r.err, HasSubstr("in use"));
  EXPECT_THAT(r.err, ::testing::Not(HasSubstr("listening")));
}

TEST_F(ServerStart, AnAddressWithoutAPortIsRefused) {
  for (const std::string listen : {"127.0.0.1", "http://127.0.0.1:7878",
                                   "127.0.0.1:", "127.0.0.1:99999"}) {
    auto server = StartOn(listen, TempDb("noport"));
    ASSERT_FALSE(server.ok()) << listen;
    EXPECT_EQ(server.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(server.status().message(), HasSubstr("--listen"));
    EXPECT_THAT(server.status().message(), HasSubstr("HOST:PORT"));
  }
  const auto r = RunCommand(absl::StrCat(
      BinaryDir(),
      "/server/tunefleet-server --no-auth --listen 127.0.0.1 --db ",
      TempDb("binary_noport")));
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_THAT(r.err, HasSubstr("HOST:PORT"));
}

TEST_F(ServerStart, VersionIsPrinted) {
  const auto r = RunCommand(BinaryDir() + "/server/tunefleet-server --version");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out,
              HasSubstr(absl::StrCat("tunefleet-server ", TUNEFLEET_VERSION)));
}

TEST_F(ServerStart, HealthAndReflectionServeGenericTools) {
  auto server = StartOn("127.0.0.1:0", TempDb("health"));
  ASSERT_TRUE(server.ok()) << server.status();
  grpc::GenericStub stub(grpc::CreateChannel(
      (*server)->address(), grpc::InsecureChannelCredentials()));

  for (const std::string service :
       {"", "tunefleet.v1.TuningService", "tunefleet.v1.AgentService"}) {
    std::string response;
    grpc::Status s = testing::HealthCheck(stub, service, &response);
    EXPECT_TRUE(s.ok()) << service << ": " << s.error_message();
    EXPECT_EQ(response, testing::kHealthServing) << service;
  }
  std::string response;
  EXPECT_EQ(
      testing::HealthCheck(stub, "no.such.Service", &response).error_code(),
      grpc::StatusCode::NOT_FOUND);

  // list_services (field 7) names both services.
  const std::string services =
      testing::Reflect(stub, testing::ListServicesRequest());
  EXPECT_THAT(services, HasSubstr("tunefleet.v1.TuningService"));
  EXPECT_THAT(services, HasSubstr("tunefleet.v1.AgentService"));
  // file_containing_symbol (field 4) returns the file that defines it.
  const std::string file = testing::Reflect(
      stub, testing::StringField(4, "tunefleet.v1.TuningService"));
  EXPECT_THAT(file, HasSubstr("tunefleet/v1/tuning.proto"));
  EXPECT_THAT(file, HasSubstr("QueryRecordsRequest"));
}

}  // namespace
}  // namespace tunefleet
