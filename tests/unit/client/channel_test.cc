// The plaintext-token rule of client/channel.h: a token goes in clear text
// only to a loopback server, unless TLS (--ca) or --insecure.
#include "client/channel.h"

#include <filesystem>
#include <fstream>
#include <string>

#include "absl/status/status.h"
#include "base/host_port.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tunefleet::client {
namespace {

using ::testing::HasSubstr;

// A file under the test's temporary directory holding `text`.
std::string WriteFile(const std::string& name, const std::string& text) {
  const std::filesystem::path path =
      std::filesystem::path(::testing::TempDir()) / name;
  std::ofstream(path) << text;
  return path.string();
}

ChannelFiles WithToken() {
  ChannelFiles files;
  files.token = "s3cret-token";
  return files;
}

TEST(IsLoopbackHostTest, LoopbackAddressesAndLocalhost) {
  EXPECT_TRUE(base::IsLoopbackHost("127.0.0.1"));
  EXPECT_TRUE(base::IsLoopbackHost("127.1.2.3"));
  EXPECT_TRUE(base::IsLoopbackHost("::1"));
  EXPECT_TRUE(base::IsLoopbackHost("::ffff:127.0.0.1"));
  EXPECT_TRUE(base::IsLoopbackHost("localhost"));
  EXPECT_TRUE(base::IsLoopbackHost("LocalHost"));
  EXPECT_FALSE(base::IsLoopbackHost("192.168.1.20"));
  EXPECT_FALSE(base::IsLoopbackHost("0.0.0.0"));
  EXPECT_FALSE(base::IsLoopbackHost("128.0.0.1"));
  EXPECT_FALSE(base::IsLoopbackHost("::"));
  EXPECT_FALSE(base::IsLoopbackHost("fe80::1"));
  EXPECT_FALSE(base::IsLoopbackHost("::ffff:10.0.0.1"));
  EXPECT_FALSE(base::IsLoopbackHost("tuner.lan"));
  EXPECT_FALSE(base::IsLoopbackHost("localhost.evil.example"));
}

TEST(ConnectionToTest, TokenInPlaintextToLoopbackIsAllowed) {
  for (const char* address :
       {"127.0.0.1:7878", "127.0.0.2:7878", "[::1]:7878", "localhost:7878"}) {
    absl::StatusOr<ServerConnection> connection =
        ConnectionTo(address, WithToken());
    ASSERT_TRUE(connection.ok()) << address << ": " << connection.status();
    EXPECT_EQ(connection->channel.token, "s3cret-token");
    EXPECT_FALSE(connection->tls());
  }
}

TEST(ConnectionToTest, TokenInPlaintextToLanAddressIsRefused) {
  for (const char* address :
       {"192.168.1.20:7878", "tuner.lan:7878", "[fe80::1]:7878"}) {
    absl::StatusOr<ServerConnection> connection =
        ConnectionTo(address, WithToken());
    ASSERT_FALSE(connection.ok()) << address;
    EXPECT_TRUE(absl::IsInvalidArgument(connection.status()));
    EXPECT_THAT(connection.status().message(), HasSubstr(address));
    EXPECT_THAT(connection.status().message(), HasSubstr("--ca CA.pem"));
    EXPECT_THAT(connection.status().message(), HasSubstr("--insecure"));
  }
}

TEST(ConnectionToTest, TokenFileCountsAsAToken) {
  ChannelFiles files;
  files.token_file = WriteFile("token", "from-a-file\n");
  absl::StatusOr<ServerConnection> connection =
      ConnectionTo("10.0.0.5:7878", files);
  ASSERT_FALSE(connection.ok());
  EXPECT_TRUE(absl::IsInvalidArgument(connection.status()));
}

TEST(ConnectionToTest, TlsAllowsATokenToALanAddress) {
  ChannelFiles files = WithToken();
  // Any CA text: the channel is not dialled here.
  files.ca_file = WriteFile("ca.pem", "-----BEGIN CERTIFICATE-----\n");
  absl::StatusOr<ServerConnection> connection =
      ConnectionTo("192.168.1.20:7878", files);
  ASSERT_TRUE(connection.ok()) << connection.status();
  EXPECT_TRUE(connection->tls());
  EXPECT_EQ(connection->channel.token, "s3cret-token");
}

TEST(ConnectionToTest, InsecureAllowsATokenInPlaintextToALanAddress) {
  ChannelFiles files = WithToken();
  files.insecure = true;
  absl::StatusOr<ServerConnection> connection =
      ConnectionTo("192.168.1.20:7878", files);
  ASSERT_TRUE(connection.ok()) << connection.status();
  EXPECT_FALSE(connection->tls());
  EXPECT_EQ(connection->address, "192.168.1.20:7878");
}

TEST(ConnectionToTest, NoTokenNeedsNeitherTlsNorInsecure) {
  absl::StatusOr<ServerConnection> connection =
      ConnectionTo("192.168.1.20:7878", ChannelFiles());
  ASSERT_TRUE(connection.ok()) << connection.status();
  EXPECT_TRUE(connection->channel.token.empty());
}

TEST(CheckTokenTransportTest, WhitespaceOnlyTokenIsNoToken) {
  ChannelFiles files;
  files.token = "   ";
  EXPECT_TRUE(ConnectionTo("192.168.1.20:7878", files).ok());
}

}  // namespace
}  // namespace tunefleet::client
