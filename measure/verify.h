// Output verification: compares a candidate's output with the reference's.
#ifndef TUNEFLEET_MEASURE_VERIFY_H_
#define TUNEFLEET_MEASURE_VERIFY_H_

#include <span>

namespace tunefleet::measure {

// max_i |out_i - ref_i| / max(max_i |ref_i|, 1e-30): the error relative to
// the output's scale, so summation order (which grows with K in a GEMM) and
// fused multiply-adds stay inside a per-dtype tolerance while a wrong element
// does not. Returns +inf when sizes differ, when one of `out` and `ref` holds
// a NaN where the other does not, or an infinity where the other holds
// another value. (Outputs start as NaNs before both runs, so an output a
// kernel writes only in part verifies when the candidate leaves the same
// elements alone as the reference.)
double MaxRelativeError(std::span<const float> out, std::span<const float> ref);

}  // namespace tunefleet::measure

#endif  // TUNEFLEET_MEASURE_VERIFY_H_
