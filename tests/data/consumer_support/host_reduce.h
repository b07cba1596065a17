// For the programs under tests/data/ built against an emitted library, and
// for tests/integration/data_ops_template_test.cc: the reduce op's fn over
// a column of values, computed on the host in double. Header-only: each
// consumer is its own CMake project (C++17).
#ifndef TUNEFLEET_TESTS_DATA_CONSUMER_SUPPORT_HOST_REDUCE_H_
#define TUNEFLEET_TESTS_DATA_CONSUMER_SUPPORT_HOST_REDUCE_H_

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

namespace consumer_support {

// `fn` (one of the reduce op's: sum, mean, max, min, prod, sumsquare, l1,
// l2, logsum, logsumexp) over `v`; an fn it does not know reads as sum.
inline double HostReduce(const std::string& fn, const std::vector<double>& v) {
  double sum = 0, sq = 0, l1 = 0, prod = 1, mx = -INFINITY, mn = INFINITY;
  for (double e : v) {
    sum += e, sq += e * e, l1 += std::fabs(e), prod *= e;
    mx = std::max(mx, e), mn = std::min(mn, e);
  }
  if (fn == "mean") return sum / v.size();
  if (fn == "max") return mx;
  if (fn == "min") return mn;
  if (fn == "prod") return prod;
  if (fn == "sumsquare") return sq;
  if (fn == "l1") return l1;
  if (fn == "l2") return std::sqrt(sq);
  if (fn == "logsum") return std::log(sum);
  if (fn == "logsumexp") {
    double e = 0;
    for (double x : v) e += std::exp(x - mx);
    return mx + std::log(e);
  }
  return sum;
}

}  // namespace consumer_support

#endif  // TUNEFLEET_TESTS_DATA_CONSUMER_SUPPORT_HOST_REDUCE_H_
