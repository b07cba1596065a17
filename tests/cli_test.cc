// The tunefleet binary's handling of bad input: a clear message on stderr,
// exit code 2, and nothing written.
#include <filesystem>

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/command_runner.h"

namespace tunefleet {
namespace {

using testing::BinaryDir;
using testing::RunCommand;

class Cli : public ::testing::Test {
 protected:
  void SetUp() override {
    bin_ = BinaryDir() + "/cli/tunefleet";
    work_ = ::testing::TempDir() + "/cli_test_" + std::to_string(getpid());
    std::filesystem::create_directories(work_);
    db_ = work_ + "/t.db";
    std::filesystem::remove(db_);
  }
  void TearDown() override { std::filesystem::remove_all(work_); }
  std::string bin_, work_, db_;
};

TEST_F(Cli, BadShapesFailCleanlyAndCreateNoDatabase) {
  for (const char* shape : {"M=0,N=4,K=4", "M=4,N=-2,K=4", "M=4,N=4",
                            "M=4,N=4,K=x", "M=99999999999,N=4,K=4"}) {
    auto r = RunCommand(bin_ + " tune --shape " + shape + " --db " + db_);
    EXPECT_EQ(r.exit_code, 2) << shape << ": " << r.err;
    EXPECT_NE(r.err.find("tunefleet tune: "), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("shape"), std::string::npos) << r.err;
    EXPECT_FALSE(std::filesystem::exists(db_)) << shape;
  }
}

TEST_F(Cli, UnknownStrategyAndOpAreRefusedBeforeAnythingRuns) {
  auto r = RunCommand(bin_ +
                      " tune --shape M=4,N=4,K=4 --strategy guess --db " + db_);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("unknown strategy 'guess'"), std::string::npos) << r.err;
  r = RunCommand(bin_ + " tune --op conv9d --shape M=4 --db " + db_);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("unknown op 'conv9d'"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(db_));
}

TEST_F(Cli, MissingDatabaseIsNotCreatedByReaders) {
  for (const char* cmd : {" query --db ", " devices --db "}) {
    auto r = RunCommand(bin_ + cmd + db_);
    EXPECT_EQ(r.exit_code, 2) << cmd;
    EXPECT_NE(r.err.find("no database at"), std::string::npos) << r.err;
  }
  auto r = RunCommand(bin_ + " emit --db " + db_ + " --device-key k --out " +
                      work_ + "/o");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_FALSE(std::filesystem::exists(db_));
}

TEST_F(Cli, MeasureClassifiesConfigs) {
  auto bad =
      RunCommand(bin_ + " measure --shape M=8,N=8,K=8 --config " +
                 "MWG=16,NWG=16,KWG=8,MWI=2,NWI=2,VW=4,SA=0,SB=0,KUNROLL=1");
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("VW must divide NWI"), std::string::npos) << bad.err;
  auto ok =
      RunCommand(bin_ + " measure --json --shape M=9,N=7,K=5 --config " +
                 "MWG=16,NWG=16,KWG=8,MWI=2,NWI=2,VW=2,SA=1,SB=1,KUNROLL=2");
  ASSERT_EQ(ok.exit_code, 0) << ok.err;
  auto j = nlohmann::json::parse(ok.out);
  EXPECT_EQ(j["error"], "OK");
  EXPECT_GT(j["gflops"].get<double>(), 0);
}

TEST_F(Cli, HelpAndUnknownFlags) {
  auto help = RunCommand(bin_ + " tune --help");
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_NE(help.out.find("--trials"), std::string::npos);
  auto unknown = RunCommand(bin_ + " tune --shape M=1,N=1,K=1 --frobnicate");
  EXPECT_EQ(unknown.exit_code, 2);
}

}  // namespace
}  // namespace tunefleet
