// Output verification: compares a candidate's output with the reference's.
#ifndef TUNEFLEET_DEVICE_AGENT_VERIFY_H_
#define TUNEFLEET_DEVICE_AGENT_VERIFY_H_

#include <span>

namespace tunefleet::agent {

// max_i |out_i - ref_i| / max(max_i |ref_i|, 1e-30): the error relative to
// the output's scale, so summation order (which grows with K in a GEMM) and
// fused multiply-adds stay inside a per-dtype tolerance while a wrong element
// does not. Returns +inf when sizes differ or `out` holds a NaN or Inf where
// `ref` is finite.
double MaxRelativeError(std::span<const float> out, std::span<const float> ref);

}  // namespace tunefleet::agent

#endif  // TUNEFLEET_DEVICE_AGENT_VERIFY_H_
