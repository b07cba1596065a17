#include "store/backup.h"

#include <sqlite3.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <memory>
#include <thread>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "store/sqlite.h"

namespace tunefleet::store {
namespace {

// Finishes an unfinished backup (an error path); the success path calls
// sqlite3_backup_finish itself to read its result.
struct BackupFinisher {
  void operator()(sqlite3_backup* b) const { sqlite3_backup_finish(b); }
};
using BackupHandle = std::unique_ptr<sqlite3_backup, BackupFinisher>;

absl::Status BackupError(sqlite3* destination, int rc,
                         const std::string& path) {
  const std::string message = sqlite3_errmsg(destination);
  if ((rc & 0xff) == SQLITE_FULL) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "backup disk full: ", path, ": free space and retry (", message, ")"));
  }
  return absl::InternalError(absl::StrCat("backup to ", path, ": ",
                                          sqlite3_errstr(rc), ": ", message));
}

}  // namespace

absl::StatusOr<BackupStats> BackupDatabase(const std::string& source,
                                           const std::string& destination,
                                           const BackupOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  if (access(source.c_str(), F_OK) != 0) {
    return absl::NotFoundError(absl::StrCat("no database at ", source));
  }
  const std::string partial = destination + ".partial";
  std::remove(partial.c_str());
  TUNEFLEET_ASSIGN_OR_RETURN(Database src, Database::Open(source));
  absl::StatusOr<Database> dst = Database::Open(partial);
  if (!dst.ok()) return dst.status();
  // One read transaction over the whole copy: every step reads the same
  // snapshot, so commits of other connections neither restart the copy
  // nor show in it.
  TUNEFLEET_RETURN_IF_ERROR(
      src.Exec("BEGIN; SELECT count(*) FROM sqlite_schema;"));
  TUNEFLEET_ASSIGN_OR_RETURN(std::optional<int64_t> page_size_row,
                             src.FirstInt("PRAGMA page_size"));
  const int64_t page_size = page_size_row.value_or(0);
  BackupHandle backup(
      sqlite3_backup_init(dst->get(), "main", src.get(), "main"));
  if (backup == nullptr) {
    std::remove(partial.c_str());
    return absl::InternalError(
        absl::StrCat("backup of ", source, ": ", sqlite3_errmsg(dst->get())));
  }
  const int step = options.pages_per_step > 0 ? options.pages_per_step : -1;
  int rc = SQLITE_OK;
  while (true) {
    rc = sqlite3_backup_step(backup.get(), step);
    const int64_t total = sqlite3_backup_pagecount(backup.get());
    const int64_t copied = total - sqlite3_backup_remaining(backup.get());
    if (options.progress) options.progress(copied, total);
    if (rc == SQLITE_DONE) break;
    if (rc == SQLITE_BUSY || rc == SQLITE_LOCKED) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
      continue;
    }
    if (rc != SQLITE_OK) break;
  }
  BackupStats stats;
  stats.pages = sqlite3_backup_pagecount(backup.get());
  stats.bytes = stats.pages * page_size;
  const int finished = sqlite3_backup_finish(backup.release());
  (void)src.Exec("COMMIT");
  if (rc != SQLITE_DONE || finished != SQLITE_OK) {
    absl::Status error =
        BackupError(dst->get(), rc != SQLITE_DONE ? rc : finished, destination);
    std::remove(partial.c_str());
    return error;
  }
  // Close the copy (its WAL folded in) before it takes its final name.
  TUNEFLEET_RETURN_IF_ERROR(dst->Exec("PRAGMA wal_checkpoint(TRUNCATE)"));
  *dst = Database();
  std::remove((partial + "-wal").c_str());
  std::remove((partial + "-shm").c_str());
  if (std::rename(partial.c_str(), destination.c_str()) != 0) {
    return absl::UnavailableError(absl::StrCat(
        "cannot rename ", partial, " to ", destination, ": ", strerror(errno)));
  }
  stats.ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                 std::chrono::steady_clock::now() - start)
                 .count();
  return stats;
}

}  // namespace tunefleet::store
