// DiskGuard: refuses new work while the filesystem of the server's SQLite
// database is full, so that a full disk costs new submissions (refused with
// a cause the client can act on) and never the results already in flight.
#ifndef TUNEFLEET_SERVER_DISK_GUARD_H_
#define TUNEFLEET_SERVER_DISK_GUARD_H_

#include <atomic>
#include <cstdint>
#include <string>
#include <utility>

#include "absl/status/status.h"

namespace tunefleet::server {

// Thread-safe.
class DiskGuard {
 public:
  // Free space (bytes) below which new work is refused.
  static constexpr uint64_t kDefaultMinFreeBytes = uint64_t{1} << 20;

  // `db_path` empty or ":memory:": Check() always passes.
  explicit DiskGuard(std::string db_path = "",
                     uint64_t min_free_bytes = kDefaultMinFreeBytes)
      : db_path_(std::move(db_path)), min_free_bytes_(min_free_bytes) {}

  // OK when the database's directory has at least min_free_bytes free
  // (statvfs f_bavail * f_frsize) and, after a store error that said the
  // disk was full (Note), twice that, so that a disk hovering at the edge
  // does not flap. Otherwise RESOURCE_EXHAUSTED: "database disk full:
  // <path>: free space and retry (<n> bytes free, <m> needed)". A directory
  // statvfs cannot read does not refuse: the store's own error will tell.
  absl::Status Check();

  // Remembers a store error: a RESOURCE_EXHAUSTED one (SQLITE_FULL, see
  // store/sqlite.cc) raises the bar Check() applies until space returns.
  void Note(const absl::Status& status);

  // Bytes free to unprivileged writers on the filesystem of `path`'s
  // directory; -1 when statvfs fails.
  static int64_t FreeBytes(const std::string& path);

 private:
  const std::string db_path_;
  const uint64_t min_free_bytes_;
  std::atomic<bool> full_seen_{false};
};

}  // namespace tunefleet::server

#endif  // TUNEFLEET_SERVER_DISK_GUARD_H_
