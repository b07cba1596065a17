#include "base/time.h"

namespace tunefleet::base {
namespace {

class SystemClock final : public Clock {
 public:
  int64_t NowMs() const override { return base::NowMs(); }
};

}  // namespace

int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

double MsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(
             std::chrono::steady_clock::now() - start)
      .count();
}

const Clock& RealClock() {
  static const SystemClock clock;
  return clock;
}

}  // namespace tunefleet::base
