// An online copy of a live tunefleet database with SQLite's backup API
// (https://www.sqlite.org/backup.html: sqlite3_backup_init / _step /
// _finish). The copy is one consistent snapshot: the source's read
// transaction is held from the first page to the last, so writers of other
// processes go on (WAL mode) while the copy sees none of their commits
// after it started.
#ifndef TUNEFLEET_STORE_BACKUP_H_
#define TUNEFLEET_STORE_BACKUP_H_

#include <cstdint>
#include <functional>
#include <string>

#include "absl/status/statusor.h"

namespace tunefleet::store {

struct BackupStats {
  int64_t pages = 0;  // database pages copied
  int64_t bytes = 0;  // pages * page size, bytes
  int64_t ms = 0;     // wall time of the copy, ms
};

struct BackupOptions {
  // Pages copied per sqlite3_backup_step; progress is reported after each.
  int pages_per_step = 1024;
  // Called after each step with the pages copied so far and the total.
  std::function<void(int64_t copied, int64_t total)> progress;
};

// Copies the database at `source` to `destination`. The copy is written to
// "<destination>.partial" (mode 0600) and renamed over `destination` only
// once complete, so a failed or interrupted copy never leaves a partial
// file under the destination's name.
// Errors: NOT_FOUND when `source` does not exist; UNAVAILABLE when a file
// cannot be opened or the rename fails; RESOURCE_EXHAUSTED when the
// destination's disk fills up; INTERNAL with SQLite's message otherwise.
absl::StatusOr<BackupStats> BackupDatabase(const std::string& source,
                                           const std::string& destination,
                                           const BackupOptions& options = {});

}  // namespace tunefleet::store

#endif  // TUNEFLEET_STORE_BACKUP_H_
