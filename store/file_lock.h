// Open file description (OFD) locks on a whole file, as the openers lock
// (openers_lock.h) and the owner lock (owner_lock.h) take them: held by the
// open file, not the process, so two opens in one process exclude each
// other (fcntl(2), F_OFD_SETLK).
#ifndef TUNEFLEET_STORE_FILE_LOCK_H_
#define TUNEFLEET_STORE_FILE_LOCK_H_

namespace tunefleet::store {

// Sets a lock of `type` (F_RDLCK, F_WRLCK or F_UNLCK) on the whole file
// `fd`; `wait`: blocks until it is granted (F_OFD_SETLKW), else fails at
// once (F_OFD_SETLK). Retries on EINTR. Returns 0, or the errno
// (EAGAIN/EACCES: another open file holds a conflicting lock).
int SetFileLock(int fd, short type, bool wait);

}  // namespace tunefleet::store

#endif  // TUNEFLEET_STORE_FILE_LOCK_H_
