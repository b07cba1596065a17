// The cost-model features of a task's configs (docs/ARCHITECTURE.md, Search and
// cost model): knob values (log2 for size-like knobs), the template's derived
// features, the workload's dims (log2) and the device's properties. Shapes and
// devices are part of every row, so one model carries over across them
// (transfer learning).
#ifndef TUNEFLEET_SEARCH_SPACE_TASK_FEATURES_H_
#define TUNEFLEET_SEARCH_SPACE_TASK_FEATURES_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "kernels_templates/kernel_template.h"
#include "kernels_templates/workload.h"
#include "search_space/space.h"
#include "search_space/table.h"
#include "tunefleet/v1/common.pb.h"

namespace tunefleet::search_space {

// Copyable; the template must outlive it.
class TaskFeatures {
 public:
  TaskFeatures(const templates::KernelTemplate& tmpl,
               templates::Workload workload, templates::DeviceLimits limits);

  // Features of a config given in the template's knob order.
  std::vector<float> operator()(const templates::KnobValues& config) const;
  // Names of the features, in order.
  std::vector<std::string> Names() const;
  const templates::KernelTemplate& tmpl() const { return *tmpl_; }

 private:
  const templates::KernelTemplate* tmpl_;
  templates::Workload workload_;
  templates::DeviceLimits limits_;
  std::vector<bool> size_like_;
};

// A feature function over a space whose knobs are `space_knobs` (in any
// order; each must be a knob of the template, with integer values). A
// knob of the template that the space lacks (one added in a later template
// version than a table's) takes its first value, which a template keeps as
// its earlier kernel (gemm_gpu v3's ASYNC = 0 is v2).
// Errors: INVALID_ARGUMENT when a knob of the space is not the template's.
absl::StatusOr<std::function<std::vector<float>(uint64_t)>> SpaceFeatures(
    const search_space::SearchSpace& space, TaskFeatures features);

// The task a tunefleet table was recorded for, from its metadata
// ("template", "workload", "device"): its features, or NOT_FOUND when the
// table does not say (foreign formats), or INVALID_ARGUMENT when what it
// says does not parse.
absl::StatusOr<TaskFeatures> TableTaskFeatures(
    const search_space::Table& table);

}  // namespace tunefleet::search_space

#endif  // TUNEFLEET_SEARCH_SPACE_TASK_FEATURES_H_
