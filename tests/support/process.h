// A child process for fleet tests: a tunefleet-server or tunefleet-agent
// started from the build tree, its output in a log file, killed (SIGKILL)
// when the handle goes away.
#ifndef TUNEFLEET_TESTS_PROCESS_H_
#define TUNEFLEET_TESTS_PROCESS_H_

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>
#include <vector>

namespace tunefleet::testing {

// Not thread-safe.
class Process {
 public:
  // Starts `argv` (argv[0] a path) with stdout and stderr appended to
  // `log_path`. pid() is -1 when fork failed.
  Process(const std::vector<std::string>& argv, const std::string& log_path) {
    pid_ = fork();
    if (pid_ != 0) return;
    const int fd = open(log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (fd >= 0) {
      dup2(fd, 1);
      dup2(fd, 2);
      close(fd);
    }
    std::vector<char*> args;
    for (const std::string& a : argv)
      args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execv(args[0], args.data());
    _exit(127);
  }
  ~Process() { Kill(SIGKILL); }
  Process(const Process&) = delete;
  Process& operator=(const Process&) = delete;

  pid_t pid() const { return pid_; }
  bool running() const { return pid_ > 0; }

  // Sends `signal`; SIGKILL and SIGTERM also reap the process.
  void Kill(int signal) {
    if (pid_ <= 0) return;
    ::kill(pid_, signal);
    if (signal == SIGKILL || signal == SIGTERM) Wait();
  }
  // Waits for the exit; returns the exit code, or 128 + signal.
  int Wait() {
    if (pid_ <= 0) return -1;
    int status = 0;
    waitpid(pid_, &status, 0);
    pid_ = -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }

 private:
  pid_t pid_ = -1;
};

}  // namespace tunefleet::testing

#endif  // TUNEFLEET_TESTS_PROCESS_H_
