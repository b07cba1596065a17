// `tunefleet tune --log-level` (docs/FLEET.md, "Logs"): the embedded
// default passes its level to the server in the CLI's process and to the
// tunefleet-agent it starts; --help names the flag and a level that is
// none of trace, debug, info, warn, error is refused before anything runs.
#include <unistd.h>

#include <filesystem>
#include <string>

#include "gtest/gtest.h"
#include "tests/support/command_runner.h"

namespace tunefleet {
namespace {

using testing::CliBinary;
using testing::RunCommand;

class CliLogLevel : public ::testing::Test {
 protected:
  void SetUp() override {
    work_ = ::testing::TempDir() + "/cli_log_level_" + std::to_string(getpid());
    std::filesystem::create_directories(work_);
    db_ = work_ + "/t.db";
  }
  void TearDown() override { std::filesystem::remove_all(work_); }

  // An embedded `tunefleet tune --verbose` of two trials, with `flags`.
  testing::CommandResult Tune(const std::string& flags) {
    return RunCommand(CliBinary() + " tune --verbose --db " + db_ +
                      " --shape M=16,N=16,K=16 --trials 2 --strategy random "
                      "--no-transfer --skip-reference" +
                      flags);
  }

  std::string work_, db_;
};

TEST_F(CliLogLevel, HelpNamesTheFlagAndABadLevelIsRefused) {
  auto help = RunCommand(CliBinary() + " tune --help");
  ASSERT_EQ(help.exit_code, 0) << help.err;
  EXPECT_NE(help.out.find("--log-level"), std::string::npos) << help.out;
  auto bad = Tune(" --log-level loud");
  EXPECT_EQ(bad.exit_code, 2) << bad.err;
  EXPECT_NE(bad.err.find("--log-level"), std::string::npos) << bad.err;
  EXPECT_FALSE(std::filesystem::exists(db_));
}

// At the default level (info) the agent's and the server's info lines show
// with --verbose; at warn neither writes one.
TEST_F(CliLogLevel, EmbeddedServerAndAgentTakeTheLevel) {
  auto info = Tune("");
  ASSERT_EQ(info.exit_code, 0) << info.err;
  EXPECT_NE(info.err.find("[info] tunefleet-agent: device '"),
            std::string::npos)
      << info.err;
  EXPECT_NE(info.err.find("[info] [server]"), std::string::npos) << info.err;

  auto warn = Tune(" --log-level warn");
  ASSERT_EQ(warn.exit_code, 0) << warn.err;
  EXPECT_EQ(warn.err.find("[info]"), std::string::npos) << warn.err;
}

}  // namespace
}  // namespace tunefleet
