// What runs each workload on a device key, as the emitted kernel table
// (emitter.h) and the model plan (plan_builder/) choose it: per workload,
// the fastest of every template's best record, library templates' calls
// and the naive reference kernels measured for the workload (of every
// generated template that accepts it, a template whose configs all failed
// included).
#ifndef TUNEFLEET_EMITTER_CHOICE_H_
#define TUNEFLEET_EMITTER_CHOICE_H_

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "data_source/data_source.h"
#include "kernels_templates/kernel_template.h"
#include "kernels_templates/workload.h"
#include "tunefleet/v1/common.pb.h"
#include "tunefleet/v1/tuning.pb.h"

namespace tunefleet::emitter {

// The entry of one workload: a template's best record, or a naive
// reference kernel when one measured faster (`tmpl` is then the reference's
// template, and `record` the best record with that template's name and
// version).
struct EntryChoice {
  tunefleet::v1::TuningRecord record;
  const templates::KernelTemplate* tmpl = nullptr;
  templates::Workload workload;
  templates::KnobValues config;
  std::string source;                  // the record's template source
  std::optional<double> reference_ns;  // set: run the reference kernel
  // The reference kernel stands in because no record of the workload was
  // measured on this entry's driver revision (ChooseRevisionEntries);
  // reference_ns is then the key's reference time on any driver, 0 when
  // never measured.
  bool unmeasured = false;
  double time_ns() const { return reference_ns.value_or(record.time_ns()); }
  bool runs_reference() const { return reference_ns.has_value(); }
};

struct DeviceChoices {
  // The key's device; for a revision (ChooseRevisionEntries), its
  // driver_version is the revision's.
  tunefleet::v1::DeviceInfo device;
  int revision = 1;  // the key's driver revision these entries are of
  // By canonical workload string.
  std::map<std::string, EntryChoice> entries;
  // Workload keys in the order the records list them.
  std::vector<std::string> order;
  // Records no entry can use, with the reason ("<key>: ...").
  std::vector<std::string> skipped;
};

// The entries of device key `key`. With `include_library` false, records
// of library templates (KernelTemplate::is_library) are left out, so that
// each workload gets its fastest generated or reference kernel. Errors:
// the source's (NOT_FOUND for an unknown key).
absl::StatusOr<DeviceChoices> ChooseEntries(data_source::RecordReader& records,
                                            const std::string& key,
                                            bool include_library = true);

// The entries of each driver revision of device key `key`
// (docs/DRIVER_DRIFT.md), oldest first. A key of one revision (or a source
// that does not tell drivers apart) gets ChooseEntries(). With two or
// more, each revision gets, per workload, the entry of the records
// measured on its own driver (data_source::RecordReader::BestRecordsOnDriver):
// a re-validation's OK trials are the new driver's records, so a record
// re-validated `same` or `slower` enters the new revision with the time
// measured there. A workload with no OK record on a revision's driver (its
// records were found `wrong` or `failed` there, or not re-validated yet)
// that another revision has gets the naive reference kernel of that
// revision's template there (EntryChoice::unmeasured): never a config
// that was not measured right on the driver. Every revision has the same
// workloads, in the same order. Errors: the source's.
absl::StatusOr<std::vector<DeviceChoices>> ChooseRevisionEntries(
    data_source::RecordReader& records, const std::string& key);

}  // namespace tunefleet::emitter

#endif  // TUNEFLEET_EMITTER_CHOICE_H_
