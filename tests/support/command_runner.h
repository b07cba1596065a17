// Runs a shell command for tests and captures its exit code and output.
#ifndef TUNEFLEET_TESTS_COMMAND_RUNNER_H_
#define TUNEFLEET_TESTS_COMMAND_RUNNER_H_

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

namespace tunefleet::testing {

struct CommandResult {
  int exit_code = -1;
  std::string out;
  std::string err;
};

inline std::string ReadAll(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
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

// The build tree (binaries) and the source tree (test data), as
// tests/CMakeLists.txt compiles them in.
inline std::string BinaryDir() { return TUNEFLEET_BINARY_DIR; }
inline std::string SourceDir() { return TUNEFLEET_SOURCE_DIR; }

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

}  // namespace tunefleet::testing

#endif  // TUNEFLEET_TESTS_COMMAND_RUNNER_H_
