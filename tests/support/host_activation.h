// The epilogue activations of the templates (kernels_templates/common/
// epilogue.cl) on the host, for tests that compute expected outputs.
#ifndef TUNEFLEET_TESTS_HOST_ACTIVATION_H_
#define TUNEFLEET_TESTS_HOST_ACTIVATION_H_

#include <algorithm>
#include <cmath>
#include <string>
#include <type_traits>

namespace tunefleet::testing {

// `act` (relu, clip, hardsigmoid, hardswish, leakyrelu, sigmoid, silu;
// anything else is none) of `y` with the activation's parameters `a` and
// `b` (clip's bounds, hardsigmoid's alpha and beta, leakyrelu's slope),
// computed in T (float or double).
template <typename T>
T HostActivation(const std::string& act, T y, std::type_identity_t<T> a,
                 std::type_identity_t<T> b) {
  if (act == "relu") return std::max(y, T{0});
  if (act == "clip") return std::min(std::max(y, a), b);
  if (act == "hardsigmoid") return std::clamp(a * y + b, T{0}, T{1});
  if (act == "hardswish") return y * std::clamp(a * y + b, T{0}, T{1});
  if (act == "leakyrelu") return y >= 0 ? y : a * y;
  if (act == "sigmoid") return T{1} / (T{1} + std::exp(-y));
  if (act == "silu") return y / (T{1} + std::exp(-y));
  return y;
}

}  // namespace tunefleet::testing

#endif  // TUNEFLEET_TESTS_HOST_ACTIVATION_H_
