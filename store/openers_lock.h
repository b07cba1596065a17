// Whether other processes have a database open. Every Store holds a shared
// lock on a file beside the database ("<db>-openers") for as long as it is
// open: a tunefleet-server, an embedded `tunefleet tune`, a `tunefleet jobs
// --db`. A Store that can turn its lock exclusive is the database's only
// opener, so no live process can be running its jobs (Store::
// InterruptAbandonedJobs). The locks are open file description locks
// (fcntl F_OFD_SETLK, Linux 3.15+): two Stores of one process count as two
// openers, a conversion is atomic, and the kernel drops the lock when the
// process dies, SIGKILL included. They never touch the database file, so
// they cannot interfere with SQLite's own POSIX locks.
#ifndef TUNEFLEET_STORE_OPENERS_LOCK_H_
#define TUNEFLEET_STORE_OPENERS_LOCK_H_

#include <string>

#include "absl/status/statusor.h"
#include "base/files.h"

namespace tunefleet::store {

class OpenersLock {
 public:
  // No lock: SoleOpener() is false.
  OpenersLock() = default;

  // The lock file's path for the database at `db_path`.
  static std::string PathFor(const std::string& db_path);

  // Opens (creating, mode 0600) the lock file of `db_path` and takes the
  // shared lock, waiting while another opener holds it exclusively (for
  // the moment its check takes). ":memory:" takes no lock and is always
  // its sole opener. Errors: UNAVAILABLE when the lock file cannot be
  // created or locked.
  static absl::StatusOr<OpenersLock> Acquire(const std::string& db_path);

  // True when no other opener holds the lock: takes it exclusively, without
  // waiting. Keep it exclusive only briefly: others wait in Acquire();
  // EndSole() makes it shared again.
  bool TrySole();
  void EndSole();

 private:
  explicit OpenersLock(base::UniqueFd fd, bool memory)
      : fd_(std::move(fd)), memory_(memory) {}

  base::UniqueFd fd_;
  bool memory_ = false;  // a ":memory:" database: nobody else can open it
};

}  // namespace tunefleet::store

#endif  // TUNEFLEET_STORE_OPENERS_LOCK_H_
