// The library emitter: turns the best records of some device keys into a
// small C++ library with the kernel sources, a lookup table keyed by device
// and workload, one call per op, and a CMake package. The runtime files
// come from emitter/runtime/; only src/tuned_table.cc is generated: the
// table, and for shape-generic templates (spec_template.h) their checks
// and launches as C++ translated from their specs (shape_code.h), so that
// any shape runs with the config of the nearest tuned one. Nothing here
// depends on a template's name.
#ifndef TUNEFLEET_EMITTER_EMITTER_H_
#define TUNEFLEET_EMITTER_EMITTER_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "store/store.h"

namespace tunefleet::emitter {

struct EmitOptions {
  std::vector<std::string> device_keys;  // at least one
  std::string out_dir;
};

struct EmitSummary {
  std::vector<std::string> files;    // written, relative to out_dir
  int entries = 0;                   // tuned (device, workload) entries
  std::vector<std::string> skipped;  // records no emitted op can run
  // Entries that ship the naive reference kernel: it measured faster than
  // every tuned config of its task.
  int reference_entries = 0;
};

// Writes the library into options.out_dir (created if needed; files there
// of the same names are replaced). Errors: INVALID_ARGUMENT without device
// keys or out_dir; NOT_FOUND for a device key the store never saw or with
// no valid record; UNAVAILABLE when a file cannot be written.
absl::StatusOr<EmitSummary> EmitLibrary(store::Store& store,
                                        const EmitOptions& options);

}  // namespace tunefleet::emitter

#endif  // TUNEFLEET_EMITTER_EMITTER_H_
