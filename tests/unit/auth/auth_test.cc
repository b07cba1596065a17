// Unit tests of tunefleet_auth: tokens (generation, hashing, the tokens
// file format), the role each RPC needs, and which listen addresses are
// loopback.
#include <cctype>
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "auth/authorizer.h"
#include "auth/roles.h"
#include "auth/tls.h"
#include "auth/tokens.h"
#include "google/protobuf/descriptor.h"
#include "gtest/gtest.h"
#include "tunefleet/v1/agent.pb.h"
#include "tunefleet/v1/tuning.pb.h"

namespace tunefleet::auth {
namespace {

// One token of each role, and the set the server accepts.
struct Tokens {
  std::string agent, tuner, reader;
  std::shared_ptr<TokenSet> set = std::make_shared<TokenSet>();
};

Tokens MakeTokens() {
  Tokens t;
  t.agent = *GenerateToken();
  t.tuner = *GenerateToken();
  t.reader = *GenerateToken();
  EXPECT_TRUE(
      t.set->Add(TokenEntry::ForToken(t.agent, Role::kAgent, "board-1")).ok());
  EXPECT_TRUE(
      t.set->Add(TokenEntry::ForToken(t.tuner, Role::kTuner, "alice")).ok());
  EXPECT_TRUE(
      t.set->Add(TokenEntry::ForToken(t.reader, Role::kReader, "dashboard"))
          .ok());
  return t;
}

TEST(TokenFile, GeneratedTokensAreLongRandomAndUrlSafe) {
  const std::string a = *GenerateToken();
  const std::string b = *GenerateToken();
  EXPECT_EQ(a.size(), 43u);  // 32 bytes, base64url without padding
  EXPECT_NE(a, b);
  for (char c : a) {
    EXPECT_TRUE(std::isalnum(static_cast<unsigned char>(c)) || c == '-' ||
                c == '_')
        << a;
  }
  EXPECT_EQ(HashToken("abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST(TokenFile, FindMatchesOnlyTheExactToken) {
  Tokens t = MakeTokens();
  const TokenEntry* e = t.set->Find(t.tuner);
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->name, "alice");
  EXPECT_EQ(e->role, Role::kTuner);
  EXPECT_EQ(t.set->Find(t.tuner + "x"), nullptr);
  EXPECT_EQ(t.set->Find(t.tuner.substr(1)), nullptr);
  EXPECT_EQ(t.set->Find(""), nullptr);
  // Names and tokens are unique.
  EXPECT_FALSE(
      t.set->Add(TokenEntry::ForToken("other", Role::kAgent, "alice")).ok());
  EXPECT_FALSE(
      t.set->Add(TokenEntry::ForToken(t.agent, Role::kAgent, "board-2")).ok());
}

TEST(TokenFile, ParseNamesTheBadLine) {
  const std::string good = TokenEntry::ForToken("t", Role::kReader, "r").Line();
  auto set = TokenSet::Parse("# comment\n\n" + good + "\n", "f");
  ASSERT_TRUE(set.ok()) << set.status();
  EXPECT_EQ(set->entries().size(), 1u);
  for (const std::string& bad :
       {std::string("abcd reader r"), good.substr(0, 64) + " admin r",
        good.substr(0, 64) + " reader", good.substr(0, 64) + " reader a b",
        good.substr(0, 64) + " reader bad/name"}) {
    auto parsed = TokenSet::Parse(good + "\n" + bad + "\n", "f");
    EXPECT_TRUE(absl::IsInvalidArgument(parsed.status())) << bad;
    EXPECT_NE(parsed.status().message().find("f:2: "), std::string::npos)
        << parsed.status();
  }
}

TEST(Roles, EveryRpcOfBothServicesHasARole) {
  // Links the generated files, whose descriptors register the services.
  ASSERT_NE(tunefleet::v1::Hello::descriptor(), nullptr);
  ASSERT_NE(tunefleet::v1::SubmitJobRequest::descriptor(), nullptr);
  const auto* pool = google::protobuf::DescriptorPool::generated_pool();
  int methods = 0;
  for (const char* service :
       {"tunefleet.v1.AgentService", "tunefleet.v1.TuningService"}) {
    const google::protobuf::ServiceDescriptor* s =
        pool->FindServiceByName(service);
    ASSERT_NE(s, nullptr) << service;
    for (int i = 0; i < s->method_count(); ++i, ++methods) {
      const std::string full =
          absl::StrCat("/", s->full_name(), "/", s->method(i)->name());
      EXPECT_TRUE(RequiredRole(full).has_value())
          << full << " has no role: add it to RequiredRole and "
          << "server/auth_services.h";
    }
  }
  EXPECT_EQ(methods, 12);
  EXPECT_EQ(RequiredRole(kConnectMethod), Role::kAgent);
  EXPECT_EQ(RequiredRole(kSubmitJobMethod), Role::kTuner);
  EXPECT_EQ(RequiredRole(kCancelJobMethod), Role::kTuner);
  EXPECT_EQ(RequiredRole(kSubmitModelJobMethod), Role::kTuner);
  EXPECT_EQ(RequiredRole(kRunModelMethod), Role::kTuner);
  EXPECT_EQ(RequiredRole(kListJobsMethod), Role::kReader);
  EXPECT_EQ(RequiredRole(kGetJobMethod), Role::kReader);
  EXPECT_EQ(RequiredRole(kWatchJobMethod), Role::kReader);
  EXPECT_EQ(RequiredRole(kListDevicesMethod), Role::kReader);
  EXPECT_EQ(RequiredRole(kQueryRecordsMethod), Role::kReader);
  // The names as the wire spells them (the table builds them).
  EXPECT_STREQ(kSubmitJobMethod, "/tunefleet.v1.TuningService/SubmitJob");
  EXPECT_STREQ(kConnectMethod, "/tunefleet.v1.AgentService/Connect");
  EXPECT_EQ(RequiredRole(kExportRecordsMethod), Role::kReader);
  EXPECT_EQ(RequiredRole(kImportRecordsMethod), Role::kTuner);
  EXPECT_FALSE(RequiredRole("/tunefleet.v1.TuningService/Nope"));
  EXPECT_TRUE(RoleAllows(Role::kTuner, Role::kReader));
  EXPECT_FALSE(RoleAllows(Role::kReader, Role::kTuner));
  EXPECT_FALSE(RoleAllows(Role::kAgent, Role::kReader));
  EXPECT_FALSE(RoleAllows(Role::kTuner, Role::kAgent));
}

TEST(Roles, LoopbackAddresses) {
  for (const char* a :
       {"127.0.0.1:7878", "127.1.2.3:0", "localhost:7878", "[::1]:7878",
        "unix:/tmp/tf.sock", "ipv4:127.0.0.1:1"}) {
    EXPECT_TRUE(IsLoopbackAddress(a)) << a;
  }
  for (const char* a : {"0.0.0.0:7878", "[::]:7878", ":7878", "10.0.0.1:7878",
                        "example.com:7878", "128.0.0.1:1"}) {
    EXPECT_FALSE(IsLoopbackAddress(a)) << a;
  }
}

}  // namespace
}  // namespace tunefleet::auth
