// A device as an agent would report it, for tests that need one without an
// agent: a mid-range GPU whose limits let every built-in template run.
#ifndef TUNEFLEET_TESTS_SUPPORT_TEST_DEVICE_H_
#define TUNEFLEET_TESTS_SUPPORT_TEST_DEVICE_H_

#include <cstdint>

#include "tunefleet/v1/common.pb.h"

namespace tunefleet::testing {

inline tunefleet::v1::DeviceInfo TestDevice() {
  tunefleet::v1::DeviceInfo d;
  d.set_device_name("Validation GPU");
  d.set_vendor("Acme");
  d.set_max_work_group_size(256);
  for (int i = 0; i < 3; ++i) d.add_max_work_item_sizes(256);
  d.set_local_mem_bytes(32768);
  // A device that claims a TiB per allocation: tunefleet's own cap
  // (validation's kMaxBufferBytes) still holds.
  d.set_max_mem_alloc_bytes(uint64_t{1} << 40);
  d.set_global_mem_bytes(uint64_t{1} << 40);
  d.set_compute_units(4);
  return d;
}

}  // namespace tunefleet::testing

#endif  // TUNEFLEET_TESTS_SUPPORT_TEST_DEVICE_H_
