// A clock for tests: its time (Unix ms) moves only when the test says, so
// that lease and job deadlines can be crossed without waiting for them.
#ifndef TUNEFLEET_TESTS_FAKE_CLOCK_H_
#define TUNEFLEET_TESTS_FAKE_CLOCK_H_

#include <atomic>
#include <cstdint>

#include "base/time.h"

namespace tunefleet::testing {

// Thread-safe: the code under test reads it from its own threads while the
// test moves it.
class FakeClock final : public base::Clock {
 public:
  // 2023-11-14 22:13:20 UTC: a plausible Unix time, far from 0.
  static constexpr int64_t kDefaultStartMs = 1'700'000'000'000;

  explicit FakeClock(int64_t start_ms = kDefaultStartMs) : now_ms_(start_ms) {}

  int64_t NowMs() const override { return now_ms_.load(); }
  // Moves the time forward by `ms` (>= 0).
  void Advance(int64_t ms) { now_ms_.fetch_add(ms); }
  // Sets the time to `ms` (Unix ms); it may also go back.
  void Set(int64_t ms) { now_ms_.store(ms); }

 private:
  std::atomic<int64_t> now_ms_;
};

}  // namespace tunefleet::testing

#endif  // TUNEFLEET_TESTS_FAKE_CLOCK_H_
