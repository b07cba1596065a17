// The library emitter: turns the best records of some device keys into a
// small C++ library with the kernel sources, a lookup table keyed by device
// and workload, one call per op, and a CMake package. The runtime files
// come from emitter/runtime/; only src/tuned_table.cc is generated: the
// table, and for shape-generic templates (spec_template.h) their checks
// and launches as C++ translated from their specs (shape_code.h), so that
// any shape runs with the config of the nearest tuned one. Records come
// from a data_source::RecordReader: a database's, or a server's through
// the CLI. A template's scratch buffers (fill = "zero") are not the
// caller's: exact entries list them as scratch arguments with their size
// in bytes, which the library's runtime allocates per command queue;
// shape-generic templates with scratch are emitted as exact entries only.
// Nothing here depends on a template's name.
#ifndef TUNEFLEET_EMITTER_EMITTER_H_
#define TUNEFLEET_EMITTER_EMITTER_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "data_source/data_source.h"

namespace tunefleet::emitter {

struct EmitOptions {
  std::vector<std::string> device_keys;  // at least one
  std::string out_dir;
  // Kernel sources to compile in besides the entries' (kSources): those of
  // the model plans written beside the library (`emit --onnx`), so that
  // the library's LoadModelPlan(), which accepts only plans whose sources
  // are built in, loads them and newer plans of the same sources.
  std::vector<std::string> extra_sources;
};

struct EmitSummary {
  std::vector<std::string> files;  // written, relative to out_dir
  // Driver revisions emitted (a device line each), over all device keys;
  // a key whose records are of one driver counts once.
  int driver_revisions = 0;
  // Tuned (device, workload) entries: per workload the fastest of every
  // template's best record and their naive reference kernels.
  int entries = 0;
  std::vector<std::string> skipped;  // records no emitted op can run
  // Entries that ship the naive reference kernel: it measured faster than
  // every tuned config of its task.
  int reference_entries = 0;
  // Entries that call a vendor library (a library template's record,
  // library_backends/library.h): it measured fastest for its workload.
  int library_entries = 0;
  // Reference entries of a driver revision that has no record of their
  // workload (EntryChoice::unmeasured); counted in reference_entries too.
  int unmeasured_entries = 0;
};

// Writes the library of the best records `records` holds for
// options.device_keys into options.out_dir (created if needed; files there
// of the same names are replaced). Errors: INVALID_ARGUMENT without device
// keys or out_dir; NOT_FOUND for a device key the source never saw or with
// no valid record; UNAVAILABLE when a file cannot be written; the source's
// errors.
absl::StatusOr<EmitSummary> EmitLibrary(data_source::RecordReader& records,
                                        const EmitOptions& options);

}  // namespace tunefleet::emitter

#endif  // TUNEFLEET_EMITTER_EMITTER_H_
