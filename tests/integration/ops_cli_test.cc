// The ops of issue 35 through the tunefleet binary: `tune --op copy` end to
// end (a workload of 0 FLOPs: time and bandwidth, no GFLOP/s), and `emit`
// of records of copy, fill, reduce and eltwise's new fns into a library
// whose Run() a consumer project builds and checks on PoCL against host
// implementations (tests/data/emit_ops_consumer).
#include <unistd.h>

#include <filesystem>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/support/command_runner.h"

namespace tunefleet {
namespace {

using testing::CliBinary;
using ::testing::HasSubstr;
using testing::RunCommand;

class OpsCli : public ::testing::Test {
 protected:
  void SetUp() override {
    bin_ = CliBinary();
    work_ = testing::FreshTempDir("ops_cli_test");
    db_ = work_ + "/t.db";
  }
  void TearDown() override { std::filesystem::remove_all(work_); }

  // `tune --json` of `op` and `shape` with `trials` trials into db_.
  nlohmann::json Tune(const std::string& op, const std::string& shape,
                      int trials) {
    auto r = RunCommand(bin_ + " tune --json --quiet --op " + op +
                        " --shape '" + shape + "' --trials " +
                        std::to_string(trials) + " --db " + db_);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return r.exit_code == 0 ? nlohmann::json::parse(r.out) : nlohmann::json();
  }

  std::string bin_, work_, db_;
};

// A transpose of rank 5, perm (2, 0, 3, 1, 4) of a 2x3x4x5x6 tensor.
constexpr char kTranspose[] =
    "D1=4,D2=2,D3=5,D4=3,D5=6,IS1=30,IS2=360,IS3=6,IS4=120,IS5=1,"
    "OS1=180,OS2=90,OS3=18,OS4=6,OS5=1,IE=720,OE=720";

TEST_F(OpsCli, TunesACopyEndToEnd) {
  const nlohmann::json j = Tune("copy", kTranspose, 4);
  ASSERT_FALSE(j.is_null());
  EXPECT_EQ(j["workload_key"],
            "copy D0=1 D1=4 D2=2 D3=5 D4=3 D5=6 IS0=0 IS1=30 IS2=360 IS3=6 "
            "IS4=120 IS5=1 IO=0 OS0=0 OS1=180 OS2=90 OS3=18 OS4=6 OS5=1 OO=0 "
            "IE=720 OE=720 fp32");
  EXPECT_EQ(j["errors"]["OK"], 4) << j.dump();
  ASSERT_FALSE(j["best"].is_null());
  EXPECT_EQ(j["best"]["gflops"], 0);
  EXPECT_GT(j["best"]["time_ns"].get<double>(), 0);
  EXPECT_GT(j["best_gbps"].get<double>(), 0);
  EXPECT_GT(j["speedup_vs_reference"].get<double>(), 0);
  // Text: the bandwidth, not 0 GFLOP/s.
  auto text = RunCommand(bin_ + " tune --op copy --shape '" +
                         std::string(kTranspose) + "' --trials 2 --db " + db_);
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_THAT(text.out, HasSubstr(" GB/s"));
  EXPECT_THAT(text.out, ::testing::Not(HasSubstr("GFLOP/s")));
  // A box past its buffer is refused, naming it.
  auto bad = RunCommand(bin_ +
                        " tune --op copy --shape D5=8,IS5=1,OS5=1,"
                        "IE=7,OE=8 --trials 1 --db " +
                        db_);
  EXPECT_NE(bad.exit_code, 0);
  EXPECT_THAT(bad.err, HasSubstr("past the input's IE=7 elements"));
}

TEST_F(OpsCli, EmittedLibraryRunsEveryNewOp) {
  const std::vector<std::pair<std::string, std::string>> tasks = {
      {"copy", kTranspose},
      {"fill", "E=37,O=5,OE=50"},
      {"reduce", "O=3,R=40,I=5,fn=logsumexp"},
      {"reduce", "O=4,R=9,fn=l2"},
      {"eltwise", "C=3,H=5,W=7,fn=pow,b=scalar,act=clip"},
  };
  std::vector<std::string> workloads;
  std::string key;
  for (const auto& [op, shape] : tasks) {
    const nlohmann::json j = Tune(op, shape, 2);
    ASSERT_FALSE(j.is_null()) << op << " " << shape;
    ASSERT_FALSE(j["best"].is_null()) << j.dump();
    workloads.push_back(j["workload_key"]);
    key = j["device_key"];
  }
  auto emit = RunCommand(bin_ + " emit --json --db " + db_ + " --device-key " +
                         key + " --out " + work_ + "/lib");
  ASSERT_EQ(emit.exit_code, 0) << emit.err;
  EXPECT_EQ(nlohmann::json::parse(emit.out)["entries"], tasks.size());
  auto build = testing::BuildEmittedLibrary(work_, "emit_ops_consumer");
  ASSERT_EQ(build.exit_code, 0) << build.out << build.err;
  std::string args;
  for (const std::string& w : workloads) args += " '" + w + "'";
  auto run = RunCommand(work_ + "/consumer/emit_ops_consumer" + args);
  EXPECT_EQ(run.exit_code, 0) << run.out << run.err;
  std::istringstream lines(run.out);
  std::string line;
  int ok = 0;
  while (std::getline(lines, line)) {
    if (line.find(" OK ") != std::string::npos) ++ok;
    if (line.rfind("describe ", 0) == 0) {
      EXPECT_EQ(line, "describe " + key);
    }
  }
  EXPECT_EQ(ok, static_cast<int>(tasks.size())) << run.out;
}

}  // namespace
}  // namespace tunefleet
