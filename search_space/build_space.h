// The search space of a task built from its template: the template's knobs
// (value lists, size-like flags) under its constraints for one workload on
// one device (KernelTemplate::ConfigValid). What the server builds for every
// task it tunes and `tunefleet space` prints.
#ifndef TUNEFLEET_SEARCH_SPACE_BUILD_SPACE_H_
#define TUNEFLEET_SEARCH_SPACE_BUILD_SPACE_H_

#include <memory>

#include "kernels_templates/kernel_template.h"
#include "kernels_templates/workload.h"
#include "search_space/space.h"

namespace tunefleet::search_space {

// The space of `tmpl` for `workload` under `limits`. The space's validity
// check refers to `tmpl`, which must outlive it (templates live in the
// registry); `workload` and `limits` are copied. Never null.
std::unique_ptr<SearchSpace> BuildSpace(const templates::KernelTemplate& tmpl,
                                        const templates::Workload& workload,
                                        const templates::DeviceLimits& limits);

}  // namespace tunefleet::search_space

#endif  // TUNEFLEET_SEARCH_SPACE_BUILD_SPACE_H_
