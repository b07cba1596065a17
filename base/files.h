// Files and file descriptors: reading a whole file, writing all of a
// buffer, replacing a file atomically, and an owning descriptor. Every part
// of tunefleet that touches files (template specs, ONNX models, token and
// certificate files, the agent's binary cache, the emitted library) uses
// these.
#ifndef TUNEFLEET_BASE_FILES_H_
#define TUNEFLEET_BASE_FILES_H_

#include <sys/types.h>

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace tunefleet::base {

// An owned file descriptor, closed on destruction. Move-only.
class UniqueFd {
 public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) : fd_(fd) {}
  UniqueFd(UniqueFd&& other) noexcept : fd_(other.Release()) {}
  UniqueFd& operator=(UniqueFd&& other) noexcept;
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;
  ~UniqueFd() { Reset(); }

  int get() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  // Gives up ownership; returns the descriptor.
  int Release();
  // Closes the descriptor held (if any).
  void Reset();

 private:
  int fd_ = -1;
};

// The status of a failed system call on `path`, from errno: NOT_FOUND for
// ENOENT, INTERNAL otherwise; the message is "<what> <path>: <strerror>".
absl::Status ErrnoError(absl::string_view what, absl::string_view path);

// The bytes of the file at `path`. Errors: NOT_FOUND "cannot read <what>
// <path>: <reason>" (`what` names the file's role, e.g. "CA file"; may be
// empty; the reason is strerror's: "No such file or directory", "Is a
// directory", "Permission denied").
absl::StatusOr<std::string> ReadWholeFile(const std::string& path,
                                          absl::string_view what = "");

// Writes all of `bytes` to `fd`, retrying short writes and EINTR. False on
// any other error (errno tells which).
bool WriteAll(int fd, absl::string_view bytes);

// Replaces the file at `path` with `bytes`: writes a new file beside it
// (mode `mode`, never following a link), optionally fsyncs it, and renames
// it over `path`, so that readers see the old file or the whole new one.
// Errors: ErrnoError's naming the step that failed; the temporary file is
// removed.
absl::Status WriteFileAtomically(const std::string& path,
                                 absl::string_view bytes, mode_t mode = 0644,
                                 bool sync = false);

}  // namespace tunefleet::base

#endif  // TUNEFLEET_BASE_FILES_H_
