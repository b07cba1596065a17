// Built OpenCL programs keyed by (source, build options), so that a config
// is built once per process (a retry or a repeated trial finds it in
// memory), optionally once per device and driver (a persistent cache of
// program binaries on disk), and off the critical path (Prefetch() builds
// the next trial's program on a background thread while this one is
// measured).
//
// Persistent binary cache: one file per program in `binary_dir`, named by
// the SHA-256 of (cache format, device name, driver version, platform
// version, build options, source), holding CL_PROGRAM_BINARIES behind a
// header with the payload's length and SHA-256. A hit is
// clCreateProgramWithBinary + clBuildProgram; a file that is truncated,
// corrupt, written for another key or refused by the driver is ignored, the
// program is built from source and the file is replaced. Files are written
// to a temporary name in the same directory and renamed into place, so a
// reader never sees half a file and concurrent agents on one machine may
// share the directory.
#ifndef TUNEFLEET_OPENCL_PROGRAM_CACHE_H_
#define TUNEFLEET_OPENCL_PROGRAM_CACHE_H_

#include <cstdint>
#include <deque>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "opencl/opencl.h"

namespace tunefleet::opencl {

// SHA-256 of `data` as 64 lowercase hex digits (OpenSSL).
std::string Sha256Hex(absl::string_view data);

// Where tunefleet-agent keeps program binaries by default:
// $XDG_CACHE_HOME/tunefleet/binaries, else $HOME/.cache/tunefleet/binaries
// (HOME neither empty nor "/"), else $TMPDIR/tunefleet-<uid>/binaries (a
// phone's adb shell: HOME=/, TMPDIR=/data/local/tmp); "" when none applies.
// ProgramCache does not use a directory that is not this user's or that
// everyone may write.
std::string DefaultBinaryCacheDir();

// Thread-safe: Get() and Prefetch() may be called from any thread. Builds
// run outside the lock (clBuildProgram on distinct program objects is
// thread-safe per the OpenCL spec), so a measurement thread's Get() of one
// program does not wait for the background build of another.
class ProgramCache {
 public:
  struct Options {
    size_t capacity = 256;  // programs kept in memory; oldest released first
    // Directory of the persistent binary cache (created when missing);
    // empty: memory only.
    std::string binary_dir;
    // Most prefetches waiting for a background thread; past it the oldest
    // waiting one is dropped.
    size_t max_queued_prefetches = 4;
    // Background build threads (started by the first Prefetch()); several
    // build the next trials' programs side by side where the driver's
    // compiler runs builds in parallel.
    int prefetch_threads = 1;
  };

  // How Get() obtained a program.
  enum class Origin {
    kBuiltFromSource,  // clBuildProgram on the source, in this call
    kMemory,           // built or loaded earlier, already returned once
    kBinaryCache,      // loaded from binary_dir in this call
    kPrefetched,       // built by Prefetch() in the background
  };

  ProgramCache(cl_context context, cl_device_id device, Options options);
  ProgramCache(cl_context context, cl_device_id device, size_t capacity)
      : ProgramCache(context, device, Options{.capacity = capacity}) {}
  // Waits for a background build in progress; queued prefetches are
  // dropped.
  ~ProgramCache();

  ProgramCache(const ProgramCache&) = delete;
  ProgramCache& operator=(const ProgramCache&) = delete;

  struct Built {
    // A reference of the caller's own (retained): valid while held, even if
    // the cache evicts the program meanwhile.
    ClProgram program;
    // Host wall time this call spent obtaining the program, in ms: the
    // source build, the binary load, or the wait for a prefetch still
    // building; 0 when the program was ready.
    double compile_ms = 0;
    // The program was ready in memory (kMemory, or a finished prefetch).
    bool cache_hit = false;
    Origin origin = Origin::kBuiltFromSource;
  };

  // Finds or builds the program. Errors: INVALID_ARGUMENT with the build log
  // when the source does not compile, INTERNAL for other CL failures. A
  // failed build is not cached.
  absl::StatusOr<Built> Get(const std::string& source,
                            const std::string& options);

  // Starts building the program on the background thread unless it is
  // cached, queued or building. Returns at once; never fails (a build error
  // is returned by the Get() that asks for the program).
  void Prefetch(const std::string& source, const std::string& options);

  // Blocks until no prefetch is queued or building (tests, benchmarks).
  void WaitForPrefetches();

  struct Stats {
    size_t hits = 0;           // Get() found the program in memory
    size_t misses = 0;         // Get() had to build or load it
    size_t prefetch_hits = 0;  // Get() found a prefetched program (a hit)
    size_t prefetches = 0;     // background builds started
    size_t disk_hits = 0;      // programs loaded from binary_dir
    size_t disk_writes = 0;    // binaries written to binary_dir
    size_t disk_rejects = 0;   // cache files ignored (corrupt, refused)
    double store_ms = 0;       // host ms fetching and writing binaries
  };
  Stats stats() const;
  size_t hits() const { return stats().hits; }
  size_t misses() const { return stats().misses; }

  // The cache file of (source, options) in binary_dir ("" without one).
  std::string BinaryPath(const std::string& source,
                         const std::string& options) const;

 private:
  enum class State { kQueued, kBuilding, kReady, kFailed };
  struct Entry {
    State state = State::kQueued;
    ClProgram program;
    absl::Status error;
    Origin origin = Origin::kBuiltFromSource;
    bool by_prefetch = false;  // built by the background thread
    bool returned = false;     // Get() has returned it once
  };
  struct BuildOutcome {
    absl::StatusOr<ClProgram> program;
    Origin origin = Origin::kBuiltFromSource;
  };

  std::string Key(const std::string& source, const std::string& options) const;
  // Builds without holding mu_: from binary_dir when it has a good file,
  // else from source (and then writes the file).
  BuildOutcome Build(const std::string& key, const std::string& source,
                     const std::string& options);
  absl::StatusOr<ClProgram> LoadBinary(const std::string& path,
                                       const std::string& key,
                                       const std::string& options);
  void StoreBinary(cl_program program, const std::string& path,
                   const std::string& key);
  // Records a finished build in entries_ and wakes waiters.
  void Finish(const std::string& key, BuildOutcome outcome, bool by_prefetch)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Evicts the oldest entries until there is room for one more.
  void EvictIfFull(const std::string& keep) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void PrefetchLoop();

  cl_context context_;
  cl_device_id device_;
  Options options_;
  std::string fingerprint_;  // device, driver and platform identity

  mutable absl::Mutex mu_;
  std::map<std::string, Entry> entries_ ABSL_GUARDED_BY(mu_);
  std::deque<std::string> ready_order_ ABSL_GUARDED_BY(mu_);  // for eviction
  // Prefetches waiting for the thread: key, source, options.
  struct Job {
    std::string key, source, options;
  };
  std::deque<Job> queue_ ABSL_GUARDED_BY(mu_);
  int building_in_background_ ABSL_GUARDED_BY(mu_) = 0;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  Stats stats_ ABSL_GUARDED_BY(mu_);
  std::vector<std::thread> threads_;  // started by the first Prefetch()
  bool threads_started_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace tunefleet::opencl

#endif  // TUNEFLEET_OPENCL_PROGRAM_CACHE_H_
