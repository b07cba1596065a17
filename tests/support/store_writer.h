// A writer child process for crash and backup tests: forks, opens the
// database through the Store API and commits device rows as fast as it can
// until it is killed, reporting each committed row count on a pipe. The
// parent reads the counts to know what was acknowledged before the kill.
#ifndef TUNEFLEET_TESTS_SUPPORT_STORE_WRITER_H_
#define TUNEFLEET_TESTS_SUPPORT_STORE_WRITER_H_

#include <fcntl.h>
#include <signal.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <string>

#include "absl/strings/str_cat.h"
#include "store/store.h"

namespace tunefleet::testing {

// Not thread-safe. The child is SIGKILLed when the handle goes away.
class StoreWriter {
 public:
  // Starts the child; it writes rows "w<first>", "w<first+1>", ... Each
  // row carries a ~1 KiB device name, so that the file grows by many pages
  // and B-tree pages split all the time.
  StoreWriter(const std::string& db_path, int64_t first) {
    int fds[2];
    if (pipe(fds) != 0) return;
    pid_ = fork();
    if (pid_ == 0) {
      close(fds[0]);
      Run(db_path, first, fds[1]);
      _exit(0);
    }
    close(fds[1]);
    read_fd_ = fds[0];
    fcntl(read_fd_, F_SETFL, O_NONBLOCK);
  }
  ~StoreWriter() {
    Kill();
    if (read_fd_ >= 0) close(read_fd_);
  }
  StoreWriter(const StoreWriter&) = delete;
  StoreWriter& operator=(const StoreWriter&) = delete;

  bool started() const { return pid_ > 0; }

  // SIGKILLs and reaps the child.
  void Kill() {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
    pid_ = -1;
  }

  // Rows the child has reported committed so far (reads what the pipe
  // holds).
  int64_t Committed() {
    int64_t value = 0;
    while (read_fd_ >= 0 && read(read_fd_, &value, sizeof(value)) ==
                                static_cast<ssize_t>(sizeof(value))) {
      committed_ = value;
    }
    return committed_;
  }

 private:
  static void Run(const std::string& db_path, int64_t first, int fd) {
    auto store = store::Store::Open(db_path);
    if (!store.ok()) _exit(3);
    tunefleet::v1::DeviceInfo info;
    info.set_device_name(std::string(1000, 'x'));
    info.set_vendor("writer");
    for (int64_t i = first;; ++i) {
      // Keys in a scattered order: inserts land all over the index.
      const std::string key = absl::StrCat("w", (i * 7919) % 1000003, "_", i);
      if (!(*store)->UpsertDevice(key, info).ok()) _exit(4);
      const int64_t committed = i - first + 1;
      if (write(fd, &committed, sizeof(committed)) < 0) _exit(5);
    }
  }

  pid_t pid_ = -1;
  int read_fd_ = -1;
  int64_t committed_ = 0;
};

// "ok" when SQLite finds the file sound; its first complaint otherwise.
inline std::string IntegrityCheck(const std::string& db_path) {
  sqlite3* db = nullptr;
  if (sqlite3_open_v2(db_path.c_str(), &db, SQLITE_OPEN_READWRITE, nullptr) !=
      SQLITE_OK) {
    sqlite3_close_v2(db);
    return "cannot open";
  }
  std::string result = "no answer";
  sqlite3_stmt* stmt = nullptr;
  if (sqlite3_prepare_v2(db, "PRAGMA integrity_check", -1, &stmt, nullptr) ==
          SQLITE_OK &&
      sqlite3_step(stmt) == SQLITE_ROW) {
    result = reinterpret_cast<const char*>(sqlite3_column_text(stmt, 0));
  }
  sqlite3_finalize(stmt);
  sqlite3_close_v2(db);
  return result;
}

// Rows of the devices table written by StoreWriter; -1 on error.
inline int64_t WriterRows(const std::string& db_path) {
  sqlite3* db = nullptr;
  int64_t rows = -1;
  sqlite3_stmt* stmt = nullptr;
  if (sqlite3_open_v2(db_path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) ==
          SQLITE_OK &&
      sqlite3_prepare_v2(db,
                         "SELECT count(*) FROM devices WHERE vendor = 'writer'",
                         -1, &stmt, nullptr) == SQLITE_OK &&
      sqlite3_step(stmt) == SQLITE_ROW) {
    rows = sqlite3_column_int64(stmt, 0);
  }
  sqlite3_finalize(stmt);
  sqlite3_close_v2(db);
  return rows;
}

}  // namespace tunefleet::testing

#endif  // TUNEFLEET_TESTS_SUPPORT_STORE_WRITER_H_
