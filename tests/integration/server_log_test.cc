// The tunefleet-server and tunefleet-agent binaries' log (logging/log.h,
// docs/FLEET.md "Logs"): --log-level leaves out the lines below it and adds
// debug ones; with stderr the journal (JOURNAL_STREAM naming it, as systemd
// sets it) every line is the message after its sd-daemon priority, with no time
// of its own; elsewhere each line has a time and a level.
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/support/command_runner.h"
#include "tests/support/free_port.h"

namespace tunefleet::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

constexpr auto kLogLimit = std::chrono::seconds(60);

// A directory of one test (the database, cmd.out, cmd.err), removed at
// the end.
class ServerLog : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = (std::filesystem::temp_directory_path() /
            absl::StrCat("tf_log_", info->name(), "_", getpid()))
               .string();
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // The server's command line with `flags`, a database in the directory.
  std::string Server(const std::string& flags) const {
    return absl::StrCat(BinaryDir(), "/server/tunefleet-server --no-auth --db ",
                        dir_, "/log.db ", flags);
  }

  // Polls `command`'s stderr until it holds `text`.
  static bool AwaitErr(const BackgroundCommand& command,
                       const std::string& text) {
    const auto end = std::chrono::steady_clock::now() + kLogLimit;
    while (std::chrono::steady_clock::now() < end) {
      if (command.err().find(text) != std::string::npos) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return false;
  }

  // "DEVICE:INODE" of the stderr file a command run in `dir` (default: the
  // test's) will write (made now; the shell's redirection truncates it and
  // keeps its inode).
  std::string StderrStream(std::string dir = "") const {
    const std::string path = (dir.empty() ? dir_ : dir) + "/cmd.err";
    std::ofstream(path).flush();
    struct stat st {};
    EXPECT_EQ(stat(path.c_str(), &st), 0);
    return absl::StrCat(st.st_dev, ":", st.st_ino);
  }

  std::string dir_;
};

// Polls until something accepts connections on 127.0.0.1:`port`.
bool AwaitListening(int port) {
  const auto end = std::chrono::steady_clock::now() + kLogLimit;
  while (std::chrono::steady_clock::now() < end) {
    const int fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = htons(port);
    const bool up =
        connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0;
    close(fd);
    if (up) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return false;
}

TEST_F(ServerLog, AtWarnTheInfoLinesAreLeftOut) {
  const int port = testing::FreePort();
  ASSERT_GT(port, 0);
  BackgroundCommand server(
      Server(absl::StrCat("--listen 127.0.0.1:", port, " --log-level warn")),
      dir_);
  ASSERT_TRUE(AwaitListening(port)) << server.err();
  // SIGHUP without --tokens: a warning, written.
  server.Signal(SIGHUP);
  ASSERT_TRUE(AwaitErr(server, "SIGHUP")) << server.err();
  server.Signal(SIGTERM);
  EXPECT_EQ(server.Wait(kLogLimit), 0) << server.err();
  const std::string err = server.err();
  EXPECT_THAT(err,
              HasSubstr("] [warning] tunefleet-server: SIGHUP: no --tokens "
                        "to reload\n"));
  EXPECT_THAT(err, Not(HasSubstr("listening on")));
  EXPECT_THAT(err, Not(HasSubstr("stopped")));
  EXPECT_THAT(err, Not(HasSubstr("[debug]")));
}

TEST_F(ServerLog, AtDebugTheSettingsAreLoggedToo) {
  BackgroundCommand server(Server("--listen 127.0.0.1:0 --log-level debug"),
                           dir_);
  ASSERT_TRUE(AwaitErr(server, "listening on")) << server.err();
  server.Signal(SIGTERM);
  EXPECT_EQ(server.Wait(kLogLimit), 0) << server.err();
  const std::string err = server.err();
  EXPECT_THAT(err, HasSubstr("] [debug] tunefleet-server: log level debug; "
                             "heartbeat 5000 ms;"));
  EXPECT_THAT(err, HasSubstr("] [info] tunefleet-server: listening on "
                             "127.0.0.1:"));
  EXPECT_THAT(err, HasSubstr("] [info] tunefleet-server: stopped\n"));
  // The default level, info, leaves the debug line out.
  const std::string quiet_dir = dir_ + "/quiet";  // its own cmd.err
  std::filesystem::create_directories(quiet_dir);
  BackgroundCommand quiet(Server("--listen 127.0.0.1:0"), quiet_dir);
  ASSERT_TRUE(AwaitErr(quiet, "listening on")) << quiet.err();
  quiet.Signal(SIGTERM);
  EXPECT_EQ(quiet.Wait(kLogLimit), 0) << quiet.err();
  EXPECT_THAT(quiet.err(), Not(HasSubstr("log level")));
}

TEST_F(ServerLog, IntoTheJournalLinesCarryTheirPriorityAndNoTime) {
  const std::string stream = StderrStream();
  BackgroundCommand server(
      absl::StrCat("env JOURNAL_STREAM=", stream, " ",
                   Server("--listen 127.0.0.1:0 --log-level debug")),
      dir_);
  ASSERT_TRUE(AwaitErr(server, "listening on")) << server.err();
  server.Signal(SIGTERM);
  EXPECT_EQ(server.Wait(kLogLimit), 0) << server.err();
  const std::string err = server.err();
  EXPECT_THAT(err, HasSubstr("<7>tunefleet-server: log level debug;"));
  EXPECT_THAT(err, HasSubstr("<6>tunefleet-server: listening on 127.0.0.1:"));
  EXPECT_THAT(err, HasSubstr("<6>tunefleet-server: stopped\n"));
  for (absl::string_view line : absl::StrSplit(err, '\n', absl::SkipEmpty())) {
    EXPECT_THAT(std::string(line), ::testing::MatchesRegex("<[0-7]>[^[].*"));
  }

  // An error: priority 3 (the refusal of --listen without a port, exit 2).
  const std::string stream2 = StderrStream();
  BackgroundCommand refused(absl::StrCat("env JOURNAL_STREAM=", stream2, " ",
                                         Server("--listen 127.0.0.1")),
                            dir_);
  EXPECT_EQ(refused.Wait(kLogLimit), 2) << refused.err();
  EXPECT_THAT(refused.err(),
              ::testing::StartsWith("<3>tunefleet-server: --listen "
                                    "'127.0.0.1': no port"));
}

TEST_F(ServerLog, AJournalStreamThatIsNotStderrIsIgnored) {
  // As a child of a service whose stderr went to a file inherits it.
  const std::string stream = StderrStream();
  std::ofstream(dir_ + "/other").flush();
  struct stat other {};
  ASSERT_EQ(stat((dir_ + "/other").c_str(), &other), 0);
  BackgroundCommand server(
      absl::StrCat("env JOURNAL_STREAM=", other.st_dev, ":", other.st_ino, " ",
                   Server("--listen 127.0.0.1:0")),
      dir_);
  ASSERT_TRUE(AwaitErr(server, "listening on")) << server.err();
  server.Signal(SIGTERM);
  EXPECT_EQ(server.Wait(kLogLimit), 0) << server.err();
  EXPECT_THAT(server.err(), ::testing::StartsWith("["));
  EXPECT_THAT(server.err(), Not(HasSubstr("<6>")));
  EXPECT_THAT(server.err(),
              HasSubstr("] [info] tunefleet-server: listening on"));
}

// The agent takes the same flag and form: at warn its connection is left
// out; at info, into the journal, it is a line of priority 6.
TEST_F(ServerLog, TheAgentLogsTheSameWay) {
  BackgroundCommand server(Server("--listen 127.0.0.1:0"), dir_);
  ASSERT_TRUE(AwaitErr(server, "listening on")) << server.err();
  const std::string err = server.err();
  const size_t at = err.find("listening on ") + 13;
  const std::string address = err.substr(at, err.find(' ', at) - at);
  auto agent_dir = [&](const std::string& name) {
    std::filesystem::create_directories(dir_ + "/" + name);
    return dir_ + "/" + name;
  };
  const std::string agent = BinaryDir() + "/device_agent/tunefleet-agent";

  BackgroundCommand quiet(
      absl::StrCat(agent, " --server ", address,
                   " --key log-warn --log-level warn --no-binary-cache"),
      agent_dir("warn"));
  ASSERT_TRUE(AwaitErr(server, "connected: key log-warn")) << server.err();
  quiet.Signal(SIGTERM);
  EXPECT_EQ(quiet.Wait(kLogLimit), 0) << quiet.err();
  EXPECT_THAT(quiet.err(), Not(HasSubstr("connected to")));
  EXPECT_THAT(quiet.err(), Not(HasSubstr("tunefleet-agent: device")));

  const std::string journal_dir = agent_dir("journal");
  BackgroundCommand journal(
      absl::StrCat("env JOURNAL_STREAM=", StderrStream(journal_dir), " ", agent,
                   " --server ", address, " --key log-info --no-binary-cache"),
      journal_dir);
  ASSERT_TRUE(AwaitErr(journal, "connected to")) << journal.err();
  journal.Signal(SIGTERM);
  EXPECT_EQ(journal.Wait(kLogLimit), 0) << journal.err();
  EXPECT_THAT(journal.err(), HasSubstr("<6>tunefleet-agent: device '"));
  EXPECT_THAT(journal.err(),
              HasSubstr(absl::StrCat("<6>[agent log-info] connected to ",
                                     address, " as agent-")));
  server.Signal(SIGTERM);
  EXPECT_EQ(server.Wait(kLogLimit), 0) << server.err();
}

}  // namespace
}  // namespace tunefleet::testing
