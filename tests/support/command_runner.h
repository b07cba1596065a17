// Runs a shell command for tests and captures its exit code and output.
#ifndef TUNEFLEET_TESTS_COMMAND_RUNNER_H_
#define TUNEFLEET_TESTS_COMMAND_RUNNER_H_

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"

namespace tunefleet::testing {

struct CommandResult {
  int exit_code = -1;
  std::string out;
  std::string err;
};

// The folder ::testing::TempDir()/<name>_<pid>, empty: what an earlier
// run left there is removed first. Its path.
inline std::string FreshTempDir(const std::string& name) {
  const std::string dir =
      ::testing::TempDir() + "/" + name + "_" + std::to_string(getpid());
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

inline std::string ReadAll(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Every file under `dir`, by path relative to it, with its contents (an
// emitted library's folder, compared byte for byte).
inline std::map<std::string, std::string> ReadTree(const std::string& dir) {
  std::map<std::string, std::string> files;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(dir)) {
    if (!entry.is_regular_file()) continue;
    files[std::filesystem::relative(entry.path(), dir).string()] =
        ReadAll(entry.path().string());
  }
  return files;
}

// Runs `command` with /bin/sh; stdout and stderr are captured separately.
inline CommandResult RunCommand(const std::string& command) {
  static int counter = 0;
  const std::string base =
      std::string(std::getenv("TMPDIR") ? std::getenv("TMPDIR") : "/tmp") +
      "/tf_cmd_" + std::to_string(getpid()) + "_" + std::to_string(counter++);
  const int status =
      std::system((command + " >" + base + ".out 2>" + base + ".err").c_str());
  CommandResult r;
  r.exit_code =
      WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r.out = ReadAll(base + ".out");
  r.err = ReadAll(base + ".err");
  std::remove((base + ".out").c_str());
  std::remove((base + ".err").c_str());
  return r;
}

// A shell command line running in the background, its stdout and stderr
// in `dir`/cmd.out and cmd.err; killed (SIGKILL) and reaped when the object
// goes away.
class BackgroundCommand {
 public:
  BackgroundCommand(const std::string& command_line, const std::string& dir)
      : out_(dir + "/cmd.out"), err_(dir + "/cmd.err") {
    pid_ = fork();
    if (pid_ != 0) return;
    const std::string command =
        "exec " + command_line + " >" + out_ + " 2>" + err_;
    execl("/bin/sh", "sh", "-c", command.c_str(), nullptr);
    _exit(127);
  }
  ~BackgroundCommand() {
    if (pid_ > 0) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
  }
  BackgroundCommand(const BackgroundCommand&) = delete;
  BackgroundCommand& operator=(const BackgroundCommand&) = delete;

  void Signal(int signal) {
    if (pid_ > 0) kill(pid_, signal);
  }
  // The exit code (128 + signal when killed), or nullopt if it still runs
  // after `limit`.
  std::optional<int> Wait(std::chrono::seconds limit) {
    const auto end = std::chrono::steady_clock::now() + limit;
    while (pid_ > 0) {
      int status = 0;
      if (waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = -1;
        return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      }
      if (std::chrono::steady_clock::now() > end) return std::nullopt;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return std::nullopt;
  }
  std::string out() const { return ReadAll(out_); }
  std::string err() const { return ReadAll(err_); }

 private:
  std::string out_, err_;
  pid_t pid_ = -1;
};

// The build tree (binaries) and the source tree (test data), as
// tests/CMakeLists.txt compiles them in. TUNEFLEET_TEST_BINARY_DIR names
// another build tree to run the tests' processes from (e.g. a build of an
// older commit, to see a test fail there).
inline std::string BinaryDir() {
  const char* other = std::getenv("TUNEFLEET_TEST_BINARY_DIR");
  return other != nullptr && *other != '\0' ? other : TUNEFLEET_BINARY_DIR;
}
inline std::string SourceDir() { return TUNEFLEET_SOURCE_DIR; }
// The build tree's `tunefleet` (the CLI).
inline std::string CliBinary() { return BinaryDir() + "/cli/tunefleet"; }

// The build tree's `tunefleet` with `args`, running in the background.
class CliCommand : public BackgroundCommand {
 public:
  CliCommand(const std::string& args, const std::string& dir)
      : BackgroundCommand(CliBinary() + " " + args, dir) {}
};

// A CA with server, agent and client certificates written into `dir` by
// deploy/make-certs.sh (docs/SECURITY.md); fails the test when the script
// does. Returns `dir`.
inline std::string MakeCerts(const std::string& dir) {
  auto r = RunCommand("bash " + SourceDir() + "/deploy/make-certs.sh " + dir);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return dir;
}

// Builds and installs the library `tunefleet emit` wrote to <work>/lib
// (into <work>/prefix), then builds the consumer project
// tests/data/<consumer> against it with find_package (in <work>/consumer).
inline CommandResult BuildEmittedLibrary(const std::string& work,
                                         const std::string& consumer) {
  return RunCommand("cmake -S " + work + "/lib -B " + work +
                    "/lib-build -DCMAKE_INSTALL_PREFIX=" + work +
                    "/prefix && cmake --build " + work +
                    "/lib-build -j2 && cmake --install " + work +
                    "/lib-build && cmake -S " + SourceDir() + "/tests/data/" +
                    consumer + " -B " + work +
                    "/consumer -DCMAKE_PREFIX_PATH=" + work +
                    "/prefix && cmake --build " + work + "/consumer -j2");
}

// Whether `table` (an emitted library's table.tftable) has a line of
// device driver `driver` as its driver revision `revision`.
inline bool HasDriverRevision(const std::string& table,
                              const std::string& driver, int revision) {
  return table.find("\t" + driver + "\t" + std::to_string(revision) + "\n") !=
         std::string::npos;
}

// The lines of a program's `output` that start with `prefix` + " ", that
// prefix cut, in order (the consumers of tests/data/ print "entry ...",
// "run ...", "load ..." lines).
inline std::vector<std::string> PrefixedLines(const std::string& output,
                                              const std::string& prefix) {
  std::vector<std::string> found;
  std::istringstream in(output);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(prefix + " ", 0) == 0) {
      found.push_back(line.substr(prefix.size() + 1));
    }
  }
  return found;
}

}  // namespace tunefleet::testing

#endif  // TUNEFLEET_TESTS_COMMAND_RUNNER_H_
