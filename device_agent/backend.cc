#include "device_agent/backend.h"

#include <thread>

namespace tunefleet::device_agent {

tunefleet::v1::DeviceInfo FakeBackend::FakeDevice(const std::string& name) {
  tunefleet::v1::DeviceInfo d;
  d.set_device_name("fake device (" + name + ")");
  d.set_vendor("tunefleet fake backend");
  d.set_driver_version("0");
  d.set_compute_units(16);
  d.set_max_work_group_size(1024);
  d.set_local_mem_bytes(64 << 10);
  d.set_global_mem_bytes(uint64_t{4} << 30);
  d.set_max_mem_alloc_bytes(uint64_t{1} << 30);
  for (int i = 0; i < 3; ++i) d.add_max_work_item_sizes(1024);
  d.set_device_type("GPU");
  d.set_address_bits(64);
  d.set_device_version("OpenCL 3.0 fake");
  return d;
}

tunefleet::v1::Measurement FakeBackend::Measure(
    const tunefleet::v1::MeasureRequest& request) {
  if (delay_us_ > 0) {
    std::this_thread::sleep_for(std::chrono::microseconds(delay_us_));
  }
  tunefleet::v1::Measurement m;
  m.set_error(tunefleet::v1::Measurement::OK);
  // A deterministic spread of times, 1..2 ms, so searches have a best.
  const double t =
      1e6 * (1.0 + static_cast<double>(request.trial_id() % 97) / 97);
  for (int r = 0; r < 3; ++r) m.add_times_ns(t);
  m.set_number(1);
  return m;
}

}  // namespace tunefleet::device_agent
