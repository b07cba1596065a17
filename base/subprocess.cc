#include "base/subprocess.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "base/files.h"

extern char** environ;

namespace tunefleet::base {
namespace {

ExitStatus FromWaitStatus(int status) {
  if (WIFSIGNALED(status)) return {true, WTERMSIG(status)};
  return {false, WEXITSTATUS(status)};
}

// The parent's environment with `extra` NAME=value entries added or
// replacing those of the same name.
std::vector<std::string> MergedEnvironment(
    const std::vector<std::string>& extra) {
  std::vector<std::string> env = extra;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    const std::string entry(*e);
    const std::string name = entry.substr(0, entry.find('=') + 1);
    const bool replaced = std::any_of(
        extra.begin(), extra.end(),
        [&](const std::string& x) { return absl::StartsWith(x, name); });
    if (!replaced) env.push_back(entry);
  }
  return env;
}

std::vector<char*> CStrings(std::vector<std::string>& strings) {
  std::vector<char*> out;
  out.reserve(strings.size() + 1);
  for (std::string& s : strings) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

// Milliseconds left until `deadline`, for poll(): at most a second, so a
// long wait re-checks the deadline; 0 once it has passed.
int PollMs(Deadline deadline) {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
      deadline - std::chrono::steady_clock::now());
  return static_cast<int>(std::clamp<int64_t>(left.count(), 0, 1000));
}

}  // namespace

Deadline DeadlineIn(double ms) {
  return std::chrono::steady_clock::now() +
         std::chrono::microseconds(static_cast<int64_t>(ms * 1000));
}

std::string ExitStatus::ToString() const {
  if (signaled)
    return absl::StrCat("signal ", code, " (", strsignal(code), ")");
  return absl::StrCat("exit code ", code);
}

absl::StatusOr<Subprocess> Subprocess::Spawn(
    const std::vector<std::string>& argv, const Options& options) {
  if (argv.empty()) return absl::InvalidArgumentError("no program to start");
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  for (const auto& [child_fd, parent_fd] : options.fds) {
    posix_spawn_file_actions_adddup2(&actions, parent_fd, child_fd);
  }
  if (!options.output_path.empty()) {
    posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO,
                                     options.output_path.c_str(),
                                     O_WRONLY | O_CREAT | O_APPEND, 0644);
    posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
  }
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  if (options.own_process_group) {
    posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETPGROUP);
    posix_spawnattr_setpgroup(&attributes, 0);
  }
  std::vector<std::string> args = argv;
  std::vector<std::string> env = MergedEnvironment(options.env);
  std::vector<char*> c_args = CStrings(args);
  std::vector<char*> c_env = CStrings(env);
  pid_t pid = -1;
  const int rc = posix_spawn(&pid, argv[0].c_str(), &actions, &attributes,
                             c_args.data(), c_env.data());
  posix_spawnattr_destroy(&attributes);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) {
    return absl::UnavailableError(
        absl::StrCat("cannot start ", argv[0], ": ", std::strerror(rc)));
  }
  return Subprocess(pid);
}

Subprocess::Subprocess(Subprocess&& other) noexcept : pid_(other.pid_) {
  other.pid_ = -1;
}

Subprocess& Subprocess::operator=(Subprocess&& other) noexcept {
  if (this != &other) {
    Kill();
    pid_ = other.pid_;
    other.pid_ = -1;
  }
  return *this;
}

Subprocess::~Subprocess() { Kill(); }

absl::Status Subprocess::Signal(int signal) {
  if (pid_ <= 0) return absl::FailedPreconditionError("the process has ended");
  if (kill(pid_, signal) != 0) return ErrnoError("cannot signal", "process");
  return absl::OkStatus();
}

bool Subprocess::Exited(ExitStatus* status) {
  if (pid_ <= 0) return true;
  int raw = 0;
  pid_t r = waitpid(pid_, &raw, WNOHANG);
  while (r < 0 && errno == EINTR) r = waitpid(pid_, &raw, WNOHANG);
  if (r == 0) return false;
  pid_ = -1;
  if (status != nullptr) *status = FromWaitStatus(raw);
  return true;
}

absl::StatusOr<ExitStatus> Subprocess::Wait(Deadline deadline) {
  if (pid_ <= 0) return absl::FailedPreconditionError("the process has ended");
  if (deadline == Deadline::max()) {
    int raw = 0;
    while (waitpid(pid_, &raw, 0) < 0 && errno == EINTR) {
    }
    pid_ = -1;
    return FromWaitStatus(raw);
  }
  ExitStatus status;
  while (!Exited(&status)) {
    if (std::chrono::steady_clock::now() >= deadline) {
      return absl::DeadlineExceededError("the process is still running");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return status;
}

ExitStatus Subprocess::Kill() {
  if (pid_ <= 0) return {};
  kill(pid_, SIGKILL);
  absl::StatusOr<ExitStatus> status = Wait();
  return status.ok() ? *status : ExitStatus{};
}

absl::Status ReadFull(int fd, void* data, size_t size, Deadline deadline) {
  char* p = static_cast<char*>(data);
  while (size > 0) {
    if (std::chrono::steady_clock::now() >= deadline) {
      return absl::DeadlineExceededError("no data before the deadline");
    }
    pollfd pfd{fd, POLLIN, 0};
    const int ready = poll(&pfd, 1, PollMs(deadline));
    if (ready <= 0) continue;  // EINTR or time: re-check the deadline
    const ssize_t n = read(fd, p, size);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return ErrnoError("cannot read", "pipe");
    if (n == 0) return absl::OutOfRangeError("end of file");
    p += n;
    size -= static_cast<size_t>(n);
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> ReadToEof(int fd, Deadline deadline) {
  std::string out;
  char buffer[1 << 16];
  while (true) {
    if (std::chrono::steady_clock::now() >= deadline) {
      return absl::DeadlineExceededError("no end of file before the deadline");
    }
    pollfd pfd{fd, POLLIN, 0};
    const int ready = poll(&pfd, 1, PollMs(deadline));
    if (ready <= 0) continue;
    const ssize_t n = read(fd, buffer, sizeof(buffer));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return ErrnoError("cannot read", "pipe");
    if (n == 0) return out;
    out.append(buffer, static_cast<size_t>(n));
  }
}

absl::StatusOr<ChildOutput> RunInChild(const std::function<std::string()>& work,
                                       double timeout_ms) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return ErrnoError("cannot create", "pipe");
  UniqueFd read_end(fds[0]), write_end(fds[1]);
  const pid_t pid = fork();
  if (pid < 0) return ErrnoError("cannot fork", "child");
  if (pid == 0) {
    read_end.Reset();
    for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT}) {
      signal(sig, SIG_DFL);
    }
    const int null_fd = open("/dev/null", O_WRONLY);
    if (null_fd >= 0) dup2(null_fd, STDERR_FILENO);
    const std::string bytes = work();
    _exit(WriteAll(write_end.get(), bytes) ? 0 : 1);
  }
  write_end.Reset();
  Subprocess child = Subprocess::Adopt(pid);
  absl::StatusOr<std::string> bytes =
      ReadToEof(read_end.get(), DeadlineIn(timeout_ms));
  if (!bytes.ok()) {
    child.Kill();
    return bytes.status();
  }
  ChildOutput out;
  out.exit = *child.Wait();
  if (out.exit.success()) out.bytes = *std::move(bytes);
  return out;
}

}  // namespace tunefleet::base
