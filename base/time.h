// Time: wall-clock milliseconds since the Unix epoch (what the store and
// leases record), elapsed host time, and the clock the server's scheduler
// and jobs read, so that tests can drive it (tests/support/fake_clock.h).
#ifndef TUNEFLEET_BASE_TIME_H_
#define TUNEFLEET_BASE_TIME_H_

#include <chrono>
#include <cstdint>

namespace tunefleet::base {

// Milliseconds since the Unix epoch, from the system clock.
int64_t NowMs();

// Host wall time since `start`, in ms.
double MsSince(std::chrono::steady_clock::time_point start);

// A source of the current time in Unix ms. Implementations are
// thread-safe.
class Clock {
 public:
  virtual ~Clock() = default;
  virtual int64_t NowMs() const = 0;
};

// The system clock (base::NowMs()). Lives for the whole program.
const Clock& RealClock();

}  // namespace tunefleet::base

#endif  // TUNEFLEET_BASE_TIME_H_
