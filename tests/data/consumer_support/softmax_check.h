// For the programs under tests/data/ built against an emitted library: the
// host softmax a run's output is checked against, and the "run" line they
// print. Header-only: each consumer is its own CMake project.
#ifndef TUNEFLEET_TESTS_DATA_CONSUMER_SUPPORT_SOFTMAX_CHECK_H_
#define TUNEFLEET_TESTS_DATA_CONSUMER_SUPPORT_SOFTMAX_CHECK_H_

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdio>
#include <vector>

namespace consumer_support {

// Prints "run OK|FAIL <max abs error>" for `out`, the softmax over each of
// the `n` rows of `d` values of `in`, against the same in double on the
// host; returns whether the error is at most 1e-5.
inline bool CheckSoftmax(const std::vector<float>& in,
                         const std::vector<float>& out, int n, int d) {
  double worst = 0;
  for (int r = 0; r < n; ++r) {
    const float* x = &in[static_cast<size_t>(r) * d];
    const float m = *std::max_element(x, x + d);
    double sum = 0;
    for (int i = 0; i < d; ++i) sum += std::exp(double(x[i]) - m);
    for (int i = 0; i < d; ++i) {
      const double want = std::exp(double(x[i]) - m) / sum;
      worst = std::max(worst,
                       std::fabs(want - out[static_cast<size_t>(r) * d + i]));
    }
  }
  const bool ok = worst <= 1e-5;
  std::printf("run %s %.3g\n", ok ? "OK" : "FAIL", worst);
  return ok;
}

}  // namespace consumer_support

#endif  // TUNEFLEET_TESTS_DATA_CONSUMER_SUPPORT_SOFTMAX_CHECK_H_
