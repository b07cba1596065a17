// Built OpenCL programs keyed by (source, build options), so a config
// measured again (a retry, a repeated trial) is not rebuilt.
#ifndef TUNEFLEET_DEVICE_AGENT_PROGRAM_CACHE_H_
#define TUNEFLEET_DEVICE_AGENT_PROGRAM_CACHE_H_

#include <deque>
#include <map>
#include <string>

#include "absl/status/statusor.h"
#include "device_agent/opencl.h"

namespace tunefleet::agent {

// Not thread-safe: owned by one measurement thread.
class ProgramCache {
 public:
  // `capacity`: programs kept; the oldest is released first.
  ProgramCache(cl_context context, cl_device_id device, size_t capacity);

  struct Built {
    cl_program program;  // owned by the cache, valid until evicted
    double compile_ms;   // 0 on a cache hit
    bool cache_hit;
  };

  // Builds (or finds) the program. Errors: INVALID_ARGUMENT with the build
  // log when the source does not compile, INTERNAL for other CL failures.
  absl::StatusOr<Built> Get(const std::string& source,
                            const std::string& options);

  size_t hits() const { return hits_; }
  size_t misses() const { return misses_; }

 private:
  cl_context context_;
  cl_device_id device_;
  size_t capacity_;
  std::map<std::string, ClProgram> programs_;
  std::deque<std::string> order_;  // insertion order, for eviction
  size_t hits_ = 0;
  size_t misses_ = 0;
};

}  // namespace tunefleet::agent

#endif  // TUNEFLEET_DEVICE_AGENT_PROGRAM_CACHE_H_
