#include "store/file_lock.h"

#include <fcntl.h>

#include <cerrno>

namespace tunefleet::store {

int SetFileLock(int fd, short type, bool wait) {
  struct flock lock {};
  lock.l_type = type;
  lock.l_whence = SEEK_SET;
  lock.l_start = 0;
  lock.l_len = 0;  // the whole file
  lock.l_pid = 0;  // required for OFD locks
  while (fcntl(fd, wait ? F_OFD_SETLKW : F_OFD_SETLK, &lock) != 0) {
    if (errno != EINTR) return errno;
  }
  return 0;
}

}  // namespace tunefleet::store
