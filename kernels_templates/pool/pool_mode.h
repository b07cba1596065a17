// The pooling mode that pool2d_direct and global_pool_reduce share: max or
// average, from the workload's attr "mode", and pool_mode.cl, which turns
// the POOL_MAX define into the kernels' PAD_VALUE and COMBINE.
#ifndef TUNEFLEET_KERNELS_TEMPLATES_POOL_POOL_MODE_H_
#define TUNEFLEET_KERNELS_TEMPLATES_POOL_POOL_MODE_H_

#include <string>

#include "absl/strings/string_view.h"
#include "kernels_templates/workload.h"

namespace tunefleet::templates {

// " -DPOOL_MAX=<0|1>" (0 for mode=avg, else 1) followed by the workload's
// PreambleDefines: the mode and dtype build options of the pooling
// kernels, their references included.
std::string PoolModeDefines(const Workload& workload);

// Embedded pool_mode.cl (generated at build time): comes between
// common/vector.cl and pool2d.cl or global_pool.cl.
absl::string_view PoolModeSource();

}  // namespace tunefleet::templates

#endif  // TUNEFLEET_KERNELS_TEMPLATES_POOL_POOL_MODE_H_
