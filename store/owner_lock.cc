#include "store/owner_lock.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "store/file_lock.h"

namespace tunefleet::store {
namespace {

// "tunefleet-server (pid 1234) on 127.0.0.1:7878" from the owner's line;
// "another process" when the line is not there yet.
std::string DescribeOwner(int fd) {
  char buffer[512];
  const ssize_t n = pread(fd, buffer, sizeof(buffer) - 1, 0);
  if (n <= 0) return "another process (starting)";
  // "pid=N [address=A] program=P": the program is the rest of the line.
  std::string pid, program, address;
  absl::string_view line = absl::StripAsciiWhitespace(
      absl::string_view(buffer, static_cast<size_t>(n)));
  while (!line.empty()) {
    if (absl::ConsumePrefix(&line, "program=")) {
      program = std::string(line);
      break;
    }
    const size_t space = line.find(' ');
    absl::string_view field = line.substr(0, space);
    line = space == absl::string_view::npos ? absl::string_view()
                                            : line.substr(space + 1);
    if (absl::ConsumePrefix(&field, "pid=")) pid = std::string(field);
    if (absl::ConsumePrefix(&field, "address=")) address = std::string(field);
  }
  std::string who = program.empty() ? "another process" : program;
  if (!pid.empty()) absl::StrAppend(&who, " (pid ", pid, ")");
  absl::StrAppend(
      &who, address.empty() ? ", starting" : absl::StrCat(" on ", address));
  return who;
}

}  // namespace

OwnerLock& OwnerLock::operator=(OwnerLock&& other) noexcept {
  if (this != &other) {
    Release();
    fd_ = std::move(other.fd_);
    path_ = std::move(other.path_);
    program_ = std::move(other.program_);
    address_ = std::move(other.address_);
    created_ = other.created_;
  }
  return *this;
}

OwnerLock::~OwnerLock() { Release(); }

std::string OwnerLock::PathFor(const std::string& db_path) {
  return absl::StrCat(db_path, "-owner");
}

absl::StatusOr<OwnerLock> OwnerLock::Acquire(const std::string& db_path,
                                             const std::string& program) {
  OwnerLock lock;
  if (db_path == ":memory:") return lock;
  lock.path_ = PathFor(db_path);
  lock.program_ = program;
  // A released lock's file is removed under its lock: a file opened just
  // before that removal is locked but no longer the path's, so lock again.
  for (int attempt = 0; attempt < 100; ++attempt) {
    struct stat before {};
    const bool existed = stat(lock.path_.c_str(), &before) == 0;
    base::UniqueFd fd(
        open(lock.path_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600));
    if (!fd.valid()) {
      const int error = errno;
      const std::string message =
          absl::StrCat("cannot create the database's owner lock ", lock.path_,
                       ": ", std::strerror(error));
      return error == ENOENT ? absl::NotFoundError(message)
                             : absl::UnavailableError(message);
    }
    if (const int error = SetFileLock(fd.get(), F_WRLCK, /*wait=*/false);
        error != 0) {
      if (error != EAGAIN && error != EACCES) {
        return absl::UnavailableError(absl::StrCat("cannot lock ", lock.path_,
                                                   ": ", std::strerror(error)));
      }
      return absl::UnavailableError(absl::StrCat(
          "database ", db_path, " is owned by ", DescribeOwner(fd.get()),
          ": one server owns a database. Stop it, or give this one another "
          "database file; read-only commands (tunefleet query, jobs, "
          "dashboard --db, report, backup) work beside it, and `tunefleet "
          "tune --server ADDRESS` runs a job on it"));
    }
    struct stat held {
    }, now{};
    if (fstat(fd.get(), &held) != 0 || stat(lock.path_.c_str(), &now) != 0 ||
        held.st_ino != now.st_ino || held.st_dev != now.st_dev) {
      continue;  // removed by its last owner meanwhile
    }
    lock.fd_ = std::move(fd);
    lock.created_ = !existed;
    if (absl::Status s = lock.Write(); !s.ok()) return s;
    return lock;
  }
  return absl::UnavailableError(
      absl::StrCat("cannot lock ", lock.path_, ": it keeps being replaced"));
}

absl::Status OwnerLock::Write() {
  std::string line = absl::StrCat("pid=", getpid());
  if (!address_.empty()) absl::StrAppend(&line, " address=", address_);
  absl::StrAppend(&line, " program=", program_, "\n");
  if (ftruncate(fd_.get(), 0) != 0 ||
      pwrite(fd_.get(), line.data(), line.size(), 0) !=
          static_cast<ssize_t>(line.size())) {
    return absl::InternalError(
        absl::StrCat("cannot write ", path_, ": ", std::strerror(errno)));
  }
  return absl::OkStatus();
}

absl::Status OwnerLock::SetAddress(const std::string& address) {
  if (!fd_.valid()) return absl::OkStatus();
  address_ = address;
  return Write();
}

void OwnerLock::Release() {
  if (!fd_.valid()) return;
  unlink(path_.c_str());
  fd_.Reset();
}

}  // namespace tunefleet::store
