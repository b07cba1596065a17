// Record bundles between two sites (issue 39, docs/BUNDLES.md), through the
// binaries: tune on site A (the embedded default on PoCL), start two
// tunefleet-servers with separate SQLite files, export A's records over
// ExportRecords (signed by the CLI), import them into B over ImportRecords
// (B trusts only A's key); `emit` from B then writes byte for byte what
// `emit` from A writes for that device key; a second import changes
// nothing; a flipped byte, a truncated file and a bundle signed by an
// untrusted key are each refused with their cause, and B is unchanged.
#include <openssl/evp.h>
#include <openssl/pem.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/support/command_runner.h"
#include "tests/support/fleet_harness.h"

namespace tunefleet::testing {
namespace {

using ::testing::HasSubstr;

// Writes a fresh Ed25519 key pair to `dir`/`name`.pem (private) and
// `name`.pub (public), as `openssl genpkey -algorithm ed25519` and `openssl
// pkey -pubout` would.
void WriteKeyPair(const std::string& dir, const std::string& name) {
  EVP_PKEY* key = EVP_PKEY_Q_keygen(nullptr, nullptr, "ED25519");
  ASSERT_NE(key, nullptr);
  FILE* f = std::fopen((dir + "/" + name + ".pem").c_str(), "w");
  ASSERT_NE(f, nullptr);
  PEM_write_PrivateKey(f, key, nullptr, nullptr, 0, nullptr, nullptr);
  std::fclose(f);
  f = std::fopen((dir + "/" + name + ".pub").c_str(), "w");
  ASSERT_NE(f, nullptr);
  PEM_write_PUBKEY(f, key);
  std::fclose(f);
  EVP_PKEY_free(key);
}

class Bundles : public ::testing::Test {
 protected:
  void SetUp() override { work_ = testing::FreshTempDir("bundles_test"); }
  void TearDown() override { std::filesystem::remove_all(work_); }

  testing::CommandResult Cli(const std::string& args) {
    return RunCommand(bin_ + " " + args);
  }
  // The emitted library of `key` from database `db`, file by file.
  std::map<std::string, std::string> Emit(const std::string& db,
                                          const std::string& key,
                                          const std::string& name) {
    const std::string out = work_ + "/emit-" + name;
    auto r = Cli("emit --db " + db + " --device-key " + key + " --out " + out);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return testing::ReadTree(out);
  }
  // Every record of `db` (query --all --json).
  nlohmann::json Records(const std::string& db) {
    auto r = Cli("query --all --json --db " + db);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return r.exit_code == 0 ? nlohmann::json::parse(r.out) : nlohmann::json();
  }

  std::string bin_ = CliBinary();
  std::string work_;
};

TEST_F(Bundles, TravelBetweenTwoServersAndMergeOnce) {
  testing::FleetHarness a("bundles_a"), b("bundles_b");
  // Site A: two small workloads tuned on the local device.
  std::string key;
  for (const char* shape : {"M=64,N=48,K=40", "M=8,N=8,K=8"}) {
    auto tune = Cli(absl::StrCat("tune --json --shape ", shape,
                                 " --trials 3 --db ", a.db_path()));
    ASSERT_EQ(tune.exit_code, 0) << tune.err;
    key = nlohmann::json::parse(tune.out)["device_key"];
  }
  WriteKeyPair(work_, "site-a");
  WriteKeyPair(work_, "stranger");
  ASSERT_TRUE(a.StartServer());
  ASSERT_TRUE(b.StartServer({"--bundle-trust", work_ + "/site-a.pub"}));
  const std::string as_reader_of_a = " --token " + a.reader_token();
  const std::string as_tuner_of_b = " --token " + b.tuner_token();

  // Provenance on every record of A.
  const nlohmann::json a_records = Records(a.db_path());
  ASSERT_GE(a_records.size(), 6u);
  for (const auto& r : a_records) {
    const auto& p = r["provenance"];
    EXPECT_FALSE(p["driver_version"].get<std::string>().empty()) << r.dump();
    EXPECT_EQ(p["kernel_sha256"].get<std::string>().size(), 64u) << r.dump();
    EXPECT_EQ(p["tunefleet_version"], TUNEFLEET_VERSION);
    EXPECT_FALSE(p["imported"].get<bool>());
  }
  auto wide = Cli("query --wide --db " + a.db_path());
  EXPECT_THAT(wide.out, HasSubstr("KERNEL SHA-256"));
  // Each best record's kernel hash, as --json gives it, is in the table.
  auto best = Cli("query --json --db " + a.db_path());
  ASSERT_EQ(best.exit_code, 0) << best.err;
  for (const auto& r : nlohmann::json::parse(best.out)) {
    EXPECT_THAT(wide.out,
                HasSubstr(r["provenance"]["kernel_sha256"].get<std::string>()));
  }

  // Export over ExportRecords, signed here with A's key.
  const std::string bundle = work_ + "/a.bundle";
  auto exported = Cli("records export --json --server " + a.address() +
                      as_reader_of_a + " --device-key " + key + " --sign " +
                      work_ + "/site-a.pem --out " + bundle);
  ASSERT_EQ(exported.exit_code, 0) << exported.err;
  EXPECT_EQ(nlohmann::json::parse(exported.out)["signed"], true);

  // Bad copies first: each refused with its cause, B left empty.
  const std::string good = ReadAll(bundle);
  std::string flipped = good;
  flipped[flipped.size() / 2] ^= 0x20;
  std::ofstream(work_ + "/flipped.bundle", std::ios::binary) << flipped;
  std::ofstream(work_ + "/truncated.bundle", std::ios::binary)
      << good.substr(0, good.size() - 100);
  auto stranger =
      Cli("records export --db " + a.db_path() + " --sign " + work_ +
          "/stranger.pem --out " + work_ + "/stranger.bundle");
  ASSERT_EQ(stranger.exit_code, 0) << stranger.err;
  const std::map<std::string, std::string> refusals = {
      {"flipped.bundle", "SHA-256 mismatch"},
      {"truncated.bundle", "truncated"},
      {"stranger.bundle", "untrusted key"}};
  for (const auto& [file, cause] : refusals) {
    auto r = Cli("records import " + work_ + "/" + file + " --server " +
                 b.address() + as_tuner_of_b);
    EXPECT_NE(r.exit_code, 0) << file;
    EXPECT_THAT(r.err, HasSubstr(cause)) << file;
    EXPECT_TRUE(Records(b.db_path()).empty()) << file;
  }
  // The client refuses an untrusted bundle itself with --trust, sending
  // nothing.
  auto local =
      Cli("records import " + work_ + "/stranger.bundle --server " +
          b.address() + as_tuner_of_b + " --trust " + work_ + "/site-a.pub");
  EXPECT_NE(local.exit_code, 0);
  EXPECT_THAT(local.err, HasSubstr("untrusted key"));

  // The good bundle: merged into B.
  auto imported = Cli("records import --json " + bundle + " --server " +
                      b.address() + as_tuner_of_b);
  ASSERT_EQ(imported.exit_code, 0) << imported.err;
  const nlohmann::json first = nlohmann::json::parse(imported.out);
  EXPECT_EQ(first["trials_added"], a_records.size());
  EXPECT_EQ(first["jobs_added"], 2);

  const auto from_a = Emit(a.db_path(), key, "a");
  const auto from_b = Emit(b.db_path(), key, "b");
  ASSERT_FALSE(from_a.empty());
  ASSERT_EQ(from_a.size(), from_b.size());
  for (const auto& [name, text] : from_a) {
    ASSERT_EQ(from_b.count(name), 1u) << name;
    EXPECT_TRUE(from_b.at(name) == text) << name << " differs";
  }
  const nlohmann::json b_records = Records(b.db_path());
  ASSERT_EQ(b_records.size(), a_records.size());
  for (size_t i = 0; i < b_records.size(); ++i) {
    EXPECT_EQ(b_records[i]["provenance"]["measurement_id"],
              a_records[i]["provenance"]["measurement_id"]);
    EXPECT_TRUE(b_records[i]["provenance"]["imported"].get<bool>());
  }

  // Twice: nothing changes.
  auto again = Cli("records import --json " + bundle + " --server " +
                   b.address() + as_tuner_of_b);
  ASSERT_EQ(again.exit_code, 0) << again.err;
  const nlohmann::json second = nlohmann::json::parse(again.out);
  EXPECT_EQ(second["trials_added"], 0);
  EXPECT_EQ(second["jobs_added"], 0);
  EXPECT_EQ(second["trials_present"], a_records.size());
  EXPECT_EQ(Records(b.db_path()), b_records);
  EXPECT_EQ(Emit(b.db_path(), key, "b2"), from_b);

  // A reader may not import.
  auto reader = Cli("records import " + bundle + " --server " + b.address() +
                    " --token " + b.reader_token());
  EXPECT_NE(reader.exit_code, 0);
  EXPECT_THAT(reader.err, HasSubstr("needs a token of role tuner"));
}

TEST_F(Bundles, ImportIntoADatabaseFileVerifiesBeforeCreatingIt) {
  const std::string db = work_ + "/none.db";
  std::ofstream(work_ + "/junk.bundle") << "tunefleet-bundle 1\nnope\n";
  auto r = Cli("records import " + work_ + "/junk.bundle --db " + db);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_THAT(r.err, HasSubstr("not a tunefleet record bundle"));
  EXPECT_FALSE(std::filesystem::exists(db));
  auto both = Cli("records export --db a --server b --out x");
  EXPECT_EQ(both.exit_code, 2);
  EXPECT_THAT(both.err, HasSubstr("one of --db and --server"));
}

}  // namespace
}  // namespace tunefleet::testing
