// The library emitter: turns the best records of some device keys into a
// small C++ library with the kernel sources, a lookup table keyed by device
// and workload, one call per op, and a CMake package. The runtime files
// come from emitter/runtime/; only src/tuned_table.cc is generated: the
// table, and for shape-generic templates (spec_template.h) their checks
// and launches as C++ translated from their specs (shape_code.h), so that
// any shape runs with the config of the nearest tuned one. Records come
// from a RecordSource: a database, or a server through the CLI. A
// template's scratch buffers (fill = "zero") are not the caller's: exact
// entries list them as scratch arguments with their size in bytes, which
// the library's runtime allocates per command queue; shape-generic
// templates with scratch are emitted as exact entries only. Nothing here
// depends on a template's name.
#ifndef TUNEFLEET_EMITTER_EMITTER_H_
#define TUNEFLEET_EMITTER_EMITTER_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "store/store.h"
#include "tunefleet/v1/common.pb.h"
#include "tunefleet/v1/tuning.pb.h"

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

// Where the emitter reads what it emits: a database (StoreRecords) or a
// server (`tunefleet emit --server`). Two sources of the same records give
// the same library.
class RecordSource {
 public:
  virtual ~RecordSource() = default;

  // Every device key the source knows, in its order.
  virtual absl::StatusOr<std::vector<std::string>> DeviceKeys() = 0;
  // The device a key's records were measured on. Errors: NOT_FOUND "no
  // device with key '<key>'" for a key never seen; the source's own.
  virtual absl::StatusOr<tunefleet::v1::DeviceInfo> GetDevice(
      const std::string& key) = 0;
  // The best successful record per (workload, template) of a device key,
  // ordered by op, shape, dtype and template (store::Store::QueryRecords
  // with best_only).
  virtual absl::StatusOr<std::vector<tunefleet::v1::TuningRecord>> BestRecords(
      const std::string& key) = 0;
  // The fastest time of the naive reference kernel, in ns, over the jobs of
  // a device key, workload (canonical string) and template; nullopt when
  // none measured it (store::Store::ReferenceTime).
  virtual absl::StatusOr<std::optional<double>> ReferenceTime(
      const std::string& key, const std::string& workload,
      const std::string& template_name) = 0;
  // The OpenCL source of a template version. Errors: NOT_FOUND.
  virtual absl::StatusOr<std::string> TemplateSource(const std::string& name,
                                                     int version) = 0;
  // The driver revisions of a device key (docs/DRIVER_DRIFT.md), oldest
  // first; only `revision` and `driver_version` are read. Empty (the
  // default): the source does not tell drivers apart, and the key is
  // emitted as one revision of GetDevice()'s driver with BestRecords().
  virtual absl::StatusOr<std::vector<tunefleet::v1::DriverRevision>>
  DriverRevisions(const std::string& key) {
    return std::vector<tunefleet::v1::DriverRevision>();
  }
  // BestRecords() of the trials of `key` measured on `driver` only (those
  // of its re-validation jobs included); `first_revision`: `driver` is the
  // key's first, which trials stored without a driver version were
  // measured on (store::Store::BestRecordsOnDriver). Called only for keys
  // with two revisions or more. Default: UNIMPLEMENTED.
  virtual absl::StatusOr<std::vector<tunefleet::v1::TuningRecord>>
  BestRecordsOnDriver(const std::string& key, const std::string& driver,
                      bool first_revision);
};

// The records of a database. `store` must outlive it.
class StoreRecords : public RecordSource {
 public:
  explicit StoreRecords(store::Store* store) : store_(store) {}

  absl::StatusOr<std::vector<std::string>> DeviceKeys() override;
  absl::StatusOr<tunefleet::v1::DeviceInfo> GetDevice(
      const std::string& key) override;
  absl::StatusOr<std::vector<tunefleet::v1::TuningRecord>> BestRecords(
      const std::string& key) override;
  absl::StatusOr<std::optional<double>> ReferenceTime(
      const std::string& key, const std::string& workload,
      const std::string& template_name) override;
  absl::StatusOr<std::string> TemplateSource(const std::string& name,
                                             int version) override;
  absl::StatusOr<std::vector<tunefleet::v1::DriverRevision>> DriverRevisions(
      const std::string& key) override;
  absl::StatusOr<std::vector<tunefleet::v1::TuningRecord>> BestRecordsOnDriver(
      const std::string& key, const std::string& driver,
      bool first_revision) override;

 private:
  store::Store* store_;  // not owned
};

// Writes the library of the best records `records` holds for
// options.device_keys into options.out_dir (created if needed; files there
// of the same names are replaced). Errors: INVALID_ARGUMENT without device
// keys or out_dir; NOT_FOUND for a device key the source never saw or with
// no valid record; UNAVAILABLE when a file cannot be written; the source's
// errors.
absl::StatusOr<EmitSummary> EmitLibrary(RecordSource& records,
                                        const EmitOptions& options);

}  // namespace tunefleet::emitter

#endif  // TUNEFLEET_EMITTER_EMITTER_H_
