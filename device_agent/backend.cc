#include "device_agent/backend.h"

#include <thread>

namespace tunefleet::agent {

tunefleet::v1::Measurement FakeBackend::Measure(
    const tunefleet::v1::MeasureRequest& request) {
  if (delay_us_ > 0) {
    std::this_thread::sleep_for(std::chrono::microseconds(delay_us_));
  }
  tunefleet::v1::Measurement m;
  m.set_error(tunefleet::v1::Measurement::OK);
  // A deterministic spread of times, 1..2 ms, so searches have a best.
  const double t = 1e6 * (1.0 + static_cast<double>(request.trial_id() % 97) / 97);
  for (int r = 0; r < 3; ++r) m.add_times_ns(t);
  m.set_number(1);
  return m;
}

}  // namespace tunefleet::agent
