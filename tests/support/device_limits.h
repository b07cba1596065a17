// The limits of a GPU-like device for template tests and fuzz targets that
// check configs off the device.
#ifndef TUNEFLEET_TESTS_SUPPORT_DEVICE_LIMITS_H_
#define TUNEFLEET_TESTS_SUPPORT_DEVICE_LIMITS_H_

#include <cstdint>

#include "kernels_templates/kernel_template.h"

namespace tunefleet::testing {

// Device limits of a GPU-like device: work-groups of up to `group`
// work-items, `local_kib` KiB of local memory, 1 GiB allocations.
inline templates::DeviceLimits GpuLimits(uint64_t group = 1024,
                                         uint64_t local_kib = 48,
                                         uint32_t compute_units = 16) {
  templates::DeviceLimits d;
  d.max_work_group_size = group;
  d.max_work_item_sizes = {group, group, 64};
  d.local_mem_bytes = local_kib * 1024;
  d.max_mem_alloc_bytes = uint64_t{1} << 30;
  d.compute_units = compute_units;
  return d;
}

}  // namespace tunefleet::testing

#endif  // TUNEFLEET_TESTS_SUPPORT_DEVICE_LIMITS_H_
