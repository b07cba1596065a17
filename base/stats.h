// Order statistics of small samples: the median tunefleet reports for a
// trial's repeated times (as TVM's and Kernel Tuner's timers do) and the
// nearest-rank percentiles of the search benchmarks.
#ifndef TUNEFLEET_BASE_STATS_H_
#define TUNEFLEET_BASE_STATS_H_

#include <cstddef>
#include <vector>

namespace tunefleet::base {

// The median of `values` (the mean of the middle two for an even count); 0
// for none.
double Median(std::vector<double> values);

// The nearest-rank `p`-th percentile (0 < p <= 100) of `values`: the
// smallest value with at least p% of the values at or below it; 0 for
// none.
double NearestRankPercentile(std::vector<double> values, double p);

}  // namespace tunefleet::base

#endif  // TUNEFLEET_BASE_STATS_H_
