#include "server/disk_guard.h"

#include <sys/statvfs.h>

#include <filesystem>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace tunefleet::server {

int64_t DiskGuard::FreeBytes(const std::string& path) {
  std::filesystem::path dir = std::filesystem::path(path).parent_path();
  if (dir.empty()) dir = ".";
  struct statvfs fs {};
  if (statvfs(dir.c_str(), &fs) != 0) return -1;
  return static_cast<int64_t>(fs.f_bavail) * static_cast<int64_t>(fs.f_frsize);
}

absl::Status DiskGuard::Check() {
  if (db_path_.empty() || db_path_ == ":memory:") return absl::OkStatus();
  const int64_t free = FreeBytes(db_path_);
  if (free < 0) return absl::OkStatus();
  const uint64_t needed =
      full_seen_.load() ? 2 * min_free_bytes_ : min_free_bytes_;
  if (static_cast<uint64_t>(free) >= needed) {
    full_seen_ = false;
    return absl::OkStatus();
  }
  return absl::ResourceExhaustedError(
      absl::StrCat("database disk full: ", db_path_, ": free space and retry (",
                   free, " bytes free, ", needed, " needed)"));
}

void DiskGuard::Note(const absl::Status& status) {
  if (absl::IsResourceExhausted(status) &&
      absl::StrContains(status.message(), "database disk full")) {
    full_seen_ = true;
  }
}

}  // namespace tunefleet::server
