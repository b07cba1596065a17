#include "emitter/choice.h"

#include <set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "kernels_templates/registry.h"
#include "trial/trial_request.h"

namespace tunefleet::emitter {
namespace {

// The record's parts, or why it cannot be used (FAILED_PRECONDITION: an
// unknown template or version, a config or template source the records
// lack).
absl::StatusOr<EntryChoice> ReadRecord(data_source::RecordReader& records,
                                       tunefleet::v1::TuningRecord r) {
  auto tmpl = templates::FindTemplate(r.workload().op(), r.template_name());
  auto workload = trial::WorkloadFromProto(r.workload());
  if (!tmpl.ok() || !workload.ok()) {
    return absl::FailedPreconditionError(
        absl::StrCat(r.workload_key(), " (", r.template_name(),
                     "): template unknown to this build"));
  }
  if ((*tmpl)->version() != r.template_version()) {
    return absl::FailedPreconditionError(
        absl::StrCat(r.workload_key(), ": tuned with ", r.template_name(), " v",
                     r.template_version(), ", this build has v",
                     (*tmpl)->version(), "; tune again"));
  }
  std::vector<std::pair<std::string, int64_t>> pairs;
  for (const auto& k : r.config().knobs()) {
    pairs.emplace_back(k.name(), k.value());
  }
  auto config = (*tmpl)->ConfigFromPairs(pairs);
  auto source = records.TemplateSource(r.template_name(), r.template_version());
  if (!config.ok() || !source.ok()) {
    return absl::FailedPreconditionError(absl::StrCat(
        r.workload_key(), ": ",
        !config.ok() ? config.status().message() : source.status().message()));
  }
  return EntryChoice{std::move(r),         *tmpl,
                     *std::move(workload), *std::move(config),
                     *std::move(source),   std::nullopt};
}

// Makes `c` run the fastest naive reference kernel measured on `key` for
// its workload, of any generated template that accepts the workload (the
// record's own included), where one measured faster than its record. A task
// whose every config failed (none fits the kernel's work-group limit, say)
// leaves no record but still measured its template's reference kernel, which
// may beat every other template's record: on an H200, a 1x1 convolution of 8
// channels to 2 ran 44 us through a vendor library while its conv2d_1x1_gemm
// reference had measured 5.5 us.
absl::Status PreferFastestReference(data_source::RecordReader& records,
                                    const std::string& key, EntryChoice& c) {
  const std::string workload = c.workload.Canonical();
  for (const templates::KernelTemplate* t : templates::AllTemplates()) {
    if (t != c.tmpl && (t->is_library() || !t->Accepts(c.workload))) continue;
    TUNEFLEET_ASSIGN_OR_RETURN(
        std::optional<double> reference,
        records.ReferenceTime(key, workload, std::string(t->name())));
    if (!reference.has_value() || *reference <= 0 ||
        *reference >= c.time_ns()) {
      continue;
    }
    c.tmpl = t;
    c.reference_ns = reference;
    c.record.set_template_name(std::string(t->name()));
    c.record.set_template_version(t->version());
    c.source = std::string(t->source());
  }
  return absl::OkStatus();
}

// The entries of `best` (best records of `key`, one per task) on `out`.
absl::Status Choose(data_source::RecordReader& records, const std::string& key,
                    std::vector<tunefleet::v1::TuningRecord> best,
                    bool include_library, DeviceChoices& out) {
  for (tunefleet::v1::TuningRecord& r : best) {
    absl::StatusOr<EntryChoice> usable = ReadRecord(records, std::move(r));
    if (!usable.ok()) {
      out.skipped.push_back(absl::StrCat(key, ": ", usable.status().message()));
      continue;
    }
    EntryChoice c = *std::move(usable);
    if (!include_library && c.tmpl->is_library()) continue;
    const std::string workload = c.record.workload_key();
    auto it = out.entries.find(workload);
    if (it == out.entries.end()) {
      out.order.push_back(workload);
      out.entries.emplace(workload, std::move(c));
    } else if (c.time_ns() < it->second.time_ns()) {
      it->second = std::move(c);
    }
  }
  for (auto& [workload, c] : out.entries) {
    TUNEFLEET_RETURN_IF_ERROR(PreferFastestReference(records, key, c));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<DeviceChoices> ChooseEntries(data_source::RecordReader& records,
                                            const std::string& key,
                                            bool include_library) {
  DeviceChoices out;
  TUNEFLEET_ASSIGN_OR_RETURN(out.device, records.GetDevice(key));
  TUNEFLEET_ASSIGN_OR_RETURN(std::vector<tunefleet::v1::TuningRecord> best,
                             records.BestRecords(key));
  TUNEFLEET_RETURN_IF_ERROR(
      Choose(records, key, std::move(best), include_library, out));
  return out;
}

absl::StatusOr<std::vector<DeviceChoices>> ChooseRevisionEntries(
    data_source::RecordReader& records, const std::string& key) {
  TUNEFLEET_ASSIGN_OR_RETURN(
      std::vector<tunefleet::v1::DriverRevision> revisions,
      records.DriverRevisions(key));
  std::vector<DeviceChoices> out;
  if (revisions.size() <= 1) {
    TUNEFLEET_ASSIGN_OR_RETURN(DeviceChoices one, ChooseEntries(records, key));
    if (revisions.size() == 1) {
      one.revision = static_cast<int>(revisions[0].revision());
    }
    out.push_back(std::move(one));
    return out;
  }
  TUNEFLEET_ASSIGN_OR_RETURN(tunefleet::v1::DeviceInfo device,
                             records.GetDevice(key));
  // Every workload some revision has an entry of, in the order the
  // revisions list them (oldest first).
  std::vector<std::string> all;
  std::set<std::string> seen;
  for (size_t i = 0; i < revisions.size(); ++i) {
    const tunefleet::v1::DriverRevision& r = revisions[i];
    DeviceChoices choices;
    choices.device = device;
    choices.device.set_driver_version(r.driver_version());
    choices.revision = static_cast<int>(r.revision());
    TUNEFLEET_ASSIGN_OR_RETURN(
        std::vector<tunefleet::v1::TuningRecord> best,
        records.BestRecordsOnDriver(key, r.driver_version(), i == 0));
    TUNEFLEET_RETURN_IF_ERROR(
        Choose(records, key, std::move(best), true, choices));
    for (const std::string& w : choices.order) {
      if (seen.insert(w).second) all.push_back(w);
    }
    out.push_back(std::move(choices));
  }
  // A workload a revision has no record of: the naive reference kernel of
  // the template of the newest other revision's entry.
  for (DeviceChoices& choices : out) {
    for (const std::string& w : all) {
      if (choices.entries.contains(w)) continue;
      const EntryChoice* other = nullptr;
      for (auto it = out.rbegin(); it != out.rend() && other == nullptr; ++it) {
        auto found = it->entries.find(w);
        if (found != it->entries.end() && !found->second.unmeasured) {
          other = &found->second;
        }
      }
      EntryChoice naive = *other;
      TUNEFLEET_ASSIGN_OR_RETURN(
          std::optional<double> reference,
          records.ReferenceTime(key, w, naive.record.template_name()));
      naive.reference_ns = reference.value_or(0.0);
      naive.unmeasured = true;
      choices.entries.emplace(w, std::move(naive));
    }
    choices.order = all;
  }
  return out;
}

}  // namespace tunefleet::emitter
