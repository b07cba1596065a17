#include "store/openers_lock.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"
#include "store/file_lock.h"

namespace tunefleet::store {

std::string OpenersLock::PathFor(const std::string& db_path) {
  return absl::StrCat(db_path, "-openers");
}

absl::StatusOr<OpenersLock> OpenersLock::Acquire(const std::string& db_path) {
  if (db_path == ":memory:") return OpenersLock(base::UniqueFd(), true);
  const std::string path = PathFor(db_path);
  base::UniqueFd fd(open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600));
  if (!fd.valid()) {
    return absl::UnavailableError(absl::StrCat(
        "cannot create the lock file ", path, ": ", std::strerror(errno)));
  }
  if (const int error = SetFileLock(fd.get(), F_RDLCK, /*wait=*/true); error) {
    return absl::UnavailableError(
        absl::StrCat("cannot lock ", path, ": ", std::strerror(error)));
  }
  return OpenersLock(std::move(fd), false);
}

bool OpenersLock::TrySole() {
  if (memory_) return true;
  if (!fd_.valid()) return false;
  // An OFD lock conversion is atomic: on failure the shared lock stays.
  return SetFileLock(fd_.get(), F_WRLCK, /*wait=*/false) == 0;
}

void OpenersLock::EndSole() {
  if (!fd_.valid()) return;
  // Downgrading never conflicts, so it cannot fail.
  (void)SetFileLock(fd_.get(), F_RDLCK, /*wait=*/false);
}

}  // namespace tunefleet::store
