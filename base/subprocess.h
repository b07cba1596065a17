// Child processes with deadlines: a spawned program (the agent's
// measurement worker, the embedded agent, a test's server) owned by a
// handle that kills and reaps it, reads from a pipe that give up at a
// deadline, and a function run in a forked child so that a crash or a hang
// in it (a third-party parser on hostile input) costs a refusal, not the
// process.
#ifndef TUNEFLEET_BASE_SUBPROCESS_H_
#define TUNEFLEET_BASE_SUBPROCESS_H_

#include <sys/types.h>

#include <chrono>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace tunefleet::base {

using Deadline = std::chrono::steady_clock::time_point;

// `ms` milliseconds from now.
Deadline DeadlineIn(double ms);

// How a child process ended.
struct ExitStatus {
  bool signaled = false;
  int code = 0;  // the exit code, or the signal number when signaled

  bool success() const { return !signaled && code == 0; }
  // "exit code 3" or "signal 9 (Killed)".
  std::string ToString() const;
};

// A program started with posix_spawn. The handle kills (SIGKILL) and reaps
// it when destroyed, so no child outlives its owner by accident.
// Move-only; not thread-safe.
class Subprocess {
 public:
  struct Options {
    // Descriptors the child receives: {child_fd, parent_fd} pairs, dup2'ed
    // in the child (the parent's descriptors should be O_CLOEXEC).
    std::vector<std::pair<int, int>> fds;
    // When set, the child's stdout and stderr are appended to this file
    // (created with mode 0644); else it inherits the parent's.
    std::string output_path;
    // "NAME=value" entries added to (or replacing those of) the parent's
    // environment.
    std::vector<std::string> env;
    // Start the child in a process group of its own, so that a terminal's
    // Ctrl-C reaches only the parent, which decides the child's end.
    bool own_process_group = false;
  };

  // Starts `argv` (argv[0] is the program's path). Errors: INVALID_ARGUMENT
  // for an empty argv; UNAVAILABLE "cannot start <path>: <reason>".
  static absl::StatusOr<Subprocess> Spawn(const std::vector<std::string>& argv,
                                          const Options& options);

  // Takes ownership of a child this process forked itself.
  static Subprocess Adopt(pid_t pid) { return Subprocess(pid); }

  Subprocess() = default;
  Subprocess(Subprocess&& other) noexcept;
  Subprocess& operator=(Subprocess&& other) noexcept;
  Subprocess(const Subprocess&) = delete;
  Subprocess& operator=(const Subprocess&) = delete;
  ~Subprocess();

  pid_t pid() const { return pid_; }
  // True until Wait() or Kill() has reaped the child.
  bool running() const { return pid_ > 0; }

  // Sends `signal` to a running child. Errors: FAILED_PRECONDITION when it
  // was already reaped.
  absl::Status Signal(int signal);
  // Waits for the child to end, up to `deadline`. Errors:
  // DEADLINE_EXCEEDED (the child still runs); FAILED_PRECONDITION when it
  // was already reaped.
  absl::StatusOr<ExitStatus> Wait(Deadline deadline = Deadline::max());
  // True when the child has ended (it is then reaped and *status, when
  // not null, says how); false while it runs.
  bool Exited(ExitStatus* status);
  // SIGKILL, then reaps. Returns how it ended ({} when not running).
  ExitStatus Kill();

 private:
  explicit Subprocess(pid_t pid) : pid_(pid) {}
  pid_t pid_ = -1;
};

// Reads exactly `size` bytes from `fd` into `data` by `deadline`. Errors:
// DEADLINE_EXCEEDED; OUT_OF_RANGE at end of file (the writer closed or
// died); INTERNAL for a read error.
absl::Status ReadFull(int fd, void* data, size_t size, Deadline deadline);

// Reads from `fd` until end of file. Errors: DEADLINE_EXCEEDED when the
// deadline passes first; INTERNAL for a read error.
absl::StatusOr<std::string> ReadToEof(int fd, Deadline deadline);

// What RunInChild's child produced.
struct ChildOutput {
  ExitStatus exit;
  std::string bytes;  // what `work` returned, when the child exited 0
};

// Forks, runs `work` in the child and returns its bytes through a pipe.
// The child's stderr goes to /dev/null and a crash kills only it (default
// signal handlers); it leaves without running exit handlers. Returns how
// it ended. Errors: DEADLINE_EXCEEDED when it did not finish in
// `timeout_ms` (it is then killed); INTERNAL when no pipe or child can be
// made.
absl::StatusOr<ChildOutput> RunInChild(const std::function<std::string()>& work,
                                       double timeout_ms);

}  // namespace tunefleet::base

#endif  // TUNEFLEET_BASE_SUBPROCESS_H_
