// Who owns a database: the one process that runs its jobs and writes it (a
// tunefleet-server, or the server inside an embedded `tunefleet tune`).
// The owner holds an exclusive lock on a file beside the database
// ("<db>-owner", mode 0600) in which it writes one line naming itself:
//   pid=1234 address=127.0.0.1:7878 program=tunefleet-server
// A second would-be owner is refused, naming the first, before it listens
// or opens the database. Readers (`tunefleet query`, `jobs`, `dashboard
// --db`, `report`, `backup`) take no owner lock and work beside the owner
// (store/openers_lock.h counts them). The lock is an open file description
// lock (fcntl F_OFD_SETLK): the kernel drops it when the owner dies,
// SIGKILL included, so a stale file never blocks the next owner, which
// overwrites its line. A clean release removes the file.
#ifndef TUNEFLEET_STORE_OWNER_LOCK_H_
#define TUNEFLEET_STORE_OWNER_LOCK_H_

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "base/files.h"

namespace tunefleet::store {

class OwnerLock {
 public:
  // Holds nothing.
  OwnerLock() = default;
  // The moved-from lock holds nothing (its descriptor moved).
  OwnerLock(OwnerLock&& other) noexcept = default;
  // Releases what this one holds first.
  OwnerLock& operator=(OwnerLock&& other) noexcept;
  OwnerLock(const OwnerLock&) = delete;
  OwnerLock& operator=(const OwnerLock&) = delete;
  // Release().
  ~OwnerLock();

  // The lock file's path for the database at `db_path`.
  static std::string PathFor(const std::string& db_path);

  // Takes ownership of the database at `db_path` for `program` (this
  // process's pid is written with it), without waiting. ":memory:" takes no
  // lock. Errors: UNAVAILABLE "database PATH is owned by PROGRAM (pid N) on
  // ADDRESS; ..." when another process owns it; UNAVAILABLE when the lock
  // file cannot be created or locked (a directory that does not exist:
  // NOT_FOUND).
  static absl::StatusOr<OwnerLock> Acquire(const std::string& db_path,
                                           const std::string& program);

  // Names the address this owner serves on in its line. Errors: INTERNAL
  // when the file cannot be written (the lock is kept).
  absl::Status SetAddress(const std::string& address);

  // Gives up ownership: removes the file (while still holding its lock),
  // then drops the lock. Idempotent.
  void Release();

  // Whether this object holds the lock.
  bool held() const { return fd_.valid(); }
  // Whether Acquire() created the lock file (it did not exist before).
  bool created() const { return created_; }

 private:
  absl::Status Write();

  base::UniqueFd fd_;
  std::string path_;
  std::string program_;
  std::string address_;
  bool created_ = false;
};

}  // namespace tunefleet::store

#endif  // TUNEFLEET_STORE_OWNER_LOCK_H_
