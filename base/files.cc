#include "base/files.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"

namespace tunefleet::base {

UniqueFd& UniqueFd::operator=(UniqueFd&& other) noexcept {
  if (this != &other) {
    Reset();
    fd_ = other.Release();
  }
  return *this;
}

int UniqueFd::Release() {
  const int fd = fd_;
  fd_ = -1;
  return fd;
}

void UniqueFd::Reset() {
  if (fd_ >= 0) close(fd_);
  fd_ = -1;
}

absl::Status ErrnoError(absl::string_view what, absl::string_view path) {
  const int err = errno;
  const std::string message =
      absl::StrCat(what, " ", path, ": ", std::strerror(err));
  return err == ENOENT ? absl::NotFoundError(message)
                       : absl::InternalError(message);
}

absl::StatusOr<std::string> ReadWholeFile(const std::string& path,
                                          absl::string_view what) {
  auto refused = [&](const char* reason) {
    return absl::NotFoundError(absl::StrCat(
        "cannot read ", what, what.empty() ? "" : " ", path, ": ", reason));
  };
  UniqueFd fd(open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) return refused(std::strerror(errno));
  struct stat st {};
  if (fstat(fd.get(), &st) == 0 && S_ISDIR(st.st_mode)) {
    return refused(std::strerror(EISDIR));
  }
  std::string bytes;
  char buffer[1 << 16];
  while (true) {
    const ssize_t n = read(fd.get(), buffer, sizeof(buffer));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return refused(std::strerror(errno));
    if (n == 0) break;
    bytes.append(buffer, static_cast<size_t>(n));
  }
  return bytes;
}

bool WriteAll(int fd, absl::string_view bytes) {
  while (!bytes.empty()) {
    const ssize_t n = write(fd, bytes.data(), bytes.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    bytes.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

absl::Status WriteFileAtomically(const std::string& path,
                                 absl::string_view bytes, mode_t mode,
                                 bool sync) {
  // Unique among this process's threads and other processes.
  static std::atomic<uint64_t> counter{0};
  const std::string temp =
      absl::StrCat(path, ".tmp.", getpid(), ".", counter.fetch_add(1));
  absl::Status status;
  {
    UniqueFd fd(open(temp.c_str(),
                     O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW,
                     mode));
    if (!fd.valid()) return ErrnoError("cannot create", temp);
    if (!WriteAll(fd.get(), bytes)) {
      status = ErrnoError("cannot write", temp);
    } else if (sync && fsync(fd.get()) != 0) {
      status = ErrnoError("cannot sync", temp);
    } else if (close(fd.Release()) != 0) {
      status = ErrnoError("cannot close", temp);
    }
  }
  if (status.ok() && rename(temp.c_str(), path.c_str()) != 0) {
    status = ErrnoError("cannot replace", path);
  }
  if (!status.ok()) unlink(temp.c_str());
  return status;
}

}  // namespace tunefleet::base
