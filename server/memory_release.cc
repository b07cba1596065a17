#include "server/memory_release.h"

#include <malloc.h>

#include <cstddef>

// jemalloc's control interface; null where the process runs on another
// allocator (the CLI's embedded server, sanitizer builds).
extern "C" int mallctl(const char* name, void* oldp, size_t* oldlenp,
                       void* newp, size_t newlen) __attribute__((weak));

namespace tunefleet::server {

void ReleaseFreeMemory() {
  if (mallctl != nullptr) {
    // MALLCTL_ARENAS_ALL (4096): every arena.
    mallctl("arena.4096.purge", nullptr, nullptr, nullptr, 0);
    return;
  }
  malloc_trim(0);
}

}  // namespace tunefleet::server
