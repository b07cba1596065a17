// The tunefleet binary's handling of bad input: a clear message on stderr,
// exit code 2, and nothing written; and query's and jobs' tables cut to the
// terminal's width.
#include <filesystem>
#include <sstream>
#include <string>

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/support/command_runner.h"

namespace tunefleet {
namespace {

using testing::CliBinary;
using testing::RunCommand;

class Cli : public ::testing::Test {
 protected:
  void SetUp() override {
    bin_ = CliBinary();
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
  auto bad = RunCommand(
      bin_ + " measure --shape M=8,N=8,K=8 --config " +
      "MWG=16,NWG=16,KWG=8,MWI=2,NWI=2,VW=4,SA=0,SB=0,KUNROLL=1,HALF=0,IMB=0");
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("VW must divide NWI"), std::string::npos) << bad.err;
  auto ok = RunCommand(
      bin_ + " measure --json --shape M=9,N=7,K=5 --config " +
      "MWG=16,NWG=16,KWG=8,MWI=2,NWI=2,VW=2,SA=1,SB=1,KUNROLL=2,HALF=0,IMB=0");
  ASSERT_EQ(ok.exit_code, 0) << ok.err;
  auto j = nlohmann::json::parse(ok.out);
  EXPECT_EQ(j["error"], "OK");
  EXPECT_GT(j["gflops"].get<double>(), 0);
}

// --inspect reports what the driver built: local memory as the descriptor
// computes it, (DB + 1) * BK * (BM + 4 + BN) * 4 bytes, a work-group limit
// that admits the config, and the binary --binary-out wrote.
TEST_F(Cli, MeasureInspectReportsTheBuild) {
  const std::string binary = work_ + "/gemm_gpu.bin";
  auto r = RunCommand(bin_ + " measure --json --inspect --template gemm_gpu" +
                      " --shape M=64,N=64,K=64 --binary-out " + binary +
                      " --config "
                      "BM=64,BN=64,BK=16,TM=4,TN=4,LOADV=4,DB=1,STRN=1,WTILE=1,"
                      "ASYNC=0,KSPLIT=1");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["error"], "OK");
  const nlohmann::json& build = j["build"];
  EXPECT_EQ(build["local_mem_bytes"].get<uint64_t>(), 2u * 16 * 132 * 4);
  EXPECT_GE(build["work_group_size"].get<uint64_t>(), 256u);
  EXPECT_GT(build["binary_bytes"].get<uint64_t>(), 0u);
  EXPECT_EQ(std::filesystem::file_size(binary),
            build["binary_bytes"].get<uint64_t>());
  // A build option the compiler refuses is a clear error, not a crash.
  auto bad = RunCommand(
      bin_ + " measure --inspect --template gemm_gpu --shape M=64,N=64,K=64" +
      " --extra-options -DBM=oops" +
      " --config "
      "BM=64,BN=64,BK=16,TM=4,TN=4,LOADV=4,DB=1,STRN=1,WTILE=1,ASYNC=0,KSPLIT="
      "1");
  EXPECT_EQ(bad.exit_code, 2) << bad.out;
  EXPECT_NE(bad.err.find("build failed"), std::string::npos) << bad.err;
}

TEST_F(Cli, HelpAndUnknownFlags) {
  auto help = RunCommand(bin_ + " tune --help");
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_NE(help.out.find("--trials"), std::string::npos);
  auto unknown = RunCommand(bin_ + " tune --shape M=1,N=1,K=1 --frobnicate");
  EXPECT_EQ(unknown.exit_code, 2);
}

// Characters of UTF-8 `text` ("…" is one).
size_t Chars(const std::string& text) {
  size_t n = 0;
  for (const char c : text) n += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  return n;
}

// `query` and `jobs` cut a conv's long workload to the terminal's width
// ($COLUMNS when stdout is a pipe); --wide and --json print it whole.
TEST_F(Cli, QueryAndJobsTablesFitTheWidthAndWidePrintsInFull) {
  auto tune = RunCommand(bin_ +
                         " tune --quiet --op conv2d --shape "
                         "N=1,C=4,H=9,W=9,K=4,R=3,S=3 --trials 2 "
                         "--skip-reference --db " +
                         db_);
  ASSERT_EQ(tune.exit_code, 0) << tune.err;
  auto json = RunCommand(bin_ + " query --json --db " + db_);
  ASSERT_EQ(json.exit_code, 0) << json.err;
  const nlohmann::json records = nlohmann::json::parse(json.out);
  ASSERT_EQ(records.size(), 1u);
  const std::string workload = records[0]["workload_key"];
  ASSERT_GT(workload.size(), 60u) << workload;

  for (const char* cmd : {" query", " jobs"}) {
    auto cut = RunCommand("COLUMNS=80 " + bin_ + cmd + " --db " + db_);
    ASSERT_EQ(cut.exit_code, 0) << cmd << ": " << cut.err;
    EXPECT_EQ(cut.out.find(workload), std::string::npos) << cut.out;
    EXPECT_NE(cut.out.find("conv2d N=1 C=4"), std::string::npos) << cut.out;
    EXPECT_NE(cut.out.find("…"), std::string::npos) << cut.out;
    std::istringstream lines(cut.out);
    int n = 0;
    for (std::string line; std::getline(lines, line); ++n) {
      EXPECT_LE(Chars(line), 80u) << cmd << ": " << line;
    }
    EXPECT_EQ(n, 2) << cut.out;

    auto wide = RunCommand("COLUMNS=80 " + bin_ + cmd + " --wide --db " + db_);
    ASSERT_EQ(wide.exit_code, 0) << cmd << ": " << wide.err;
    EXPECT_NE(wide.out.find(workload), std::string::npos) << wide.out;
    EXPECT_EQ(wide.out.find("…"), std::string::npos) << wide.out;
  }

  // An op no template runs is a typo, not an empty result (issue 37); a
  // known op without records is one.
  auto typo = RunCommand(bin_ + " query --op nosuchop --db " + db_);
  EXPECT_EQ(typo.exit_code, 2) << typo.out;
  EXPECT_NE(typo.err.find("--op nosuchop: no such op"), std::string::npos)
      << typo.err;
  auto none = RunCommand(bin_ + " query --op gemm --db " + db_);
  EXPECT_EQ(none.exit_code, 0) << none.err;
  EXPECT_EQ(none.out, "no records\n");
}

// A model file that cannot be read says why (issue 37).
TEST_F(Cli, AMissingModelFileSaysWhy) {
  auto r = RunCommand(bin_ + " tasks --onnx " + work_ + "/missing.onnx");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("missing.onnx: No such file or directory"),
            std::string::npos)
      << r.err;
  r = RunCommand(bin_ + " tasks --onnx " + work_);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find(": Is a directory"), std::string::npos) << r.err;
}

TEST(Simulate, CommandPrintsTheIssuesJsonShape) {
  const std::string bin = testing::CliBinary();
  auto r = testing::RunCommand(
      bin +
      " simulate --json --strategy random --trials 50 --seeds 4 --table " +
      testing::SourceDir() +
      "/tests/data/tables/clblast_xgemm_1_32_pocl_256.json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["strategy"], "random");
  EXPECT_EQ(j["seeds"], 4);
  EXPECT_TRUE(j["trials_to_95"].contains("median"));
  EXPECT_TRUE(j["trials_to_99"].contains("p90"));
  auto bad = testing::RunCommand(bin + " simulate --table /nonexistent.csv");
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("cannot read table"), std::string::npos);
}

}  // namespace
}  // namespace tunefleet
