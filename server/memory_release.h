// Hands the allocator's free memory back to the operating system, so that
// the memory of a large job that ended (a model job of thousands of tasks)
// leaves the server's resident set at once rather than whenever the
// allocator gets to it.
#ifndef TUNEFLEET_SERVER_MEMORY_RELEASE_H_
#define TUNEFLEET_SERVER_MEMORY_RELEASE_H_

namespace tunefleet::server {

// With jemalloc (tunefleet-server links it where found) purges every
// arena's unused pages (mallctl "arena.<all>.purge"); with glibc's malloc,
// malloc_trim(0). Thread-safe; takes a few ms.
void ReleaseFreeMemory();

}  // namespace tunefleet::server

#endif  // TUNEFLEET_SERVER_MEMORY_RELEASE_H_
