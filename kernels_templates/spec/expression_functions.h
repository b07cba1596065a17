// The functions and operators of template spec expressions (see
// expression.h) and the conversions of their values to sizes and integers.
// Header-only and dependent on the C++17 standard library alone: the tuner
// registers these very functions with muParser, and `tunefleet emit` copies
// this file verbatim into every emitted kernel library, whose generated
// code calls them, so tuned and shipped values cannot disagree.
#ifndef TUNEFLEET_KERNELS_TEMPLATES_SPEC_EXPRESSION_FUNCTIONS_H_
#define TUNEFLEET_KERNELS_TEMPLATES_SPEC_EXPRESSION_FUNCTIONS_H_

#include <cmath>
#include <cstdint>
#include <initializer_list>

namespace tunefleet_expr {

// a % b as fmod; a zero divisor gives NaN, not a trap.
inline double Mod(double a, double b) { return b == 0 ? NAN : std::fmod(a, b); }
inline double Neg(double a) { return -a; }
inline double Plus(double a) { return a; }
inline double Pow(double a, double b) { return std::pow(a, b); }

inline double Ceil(double a) { return std::ceil(a); }
inline double Floor(double a) { return std::floor(a); }
inline double Trunc(double a) { return std::trunc(a); }
// Half-way cases away from zero upwards, as muParser's rint.
inline double Rint(double a) { return std::floor(a + 0.5); }
inline double Abs(double a) { return std::fabs(a); }
inline double Sign(double a) { return a < 0 ? -1.0 : a > 0 ? 1.0 : 0.0; }
inline double Sqrt(double a) { return std::sqrt(a); }
inline double Exp(double a) { return std::exp(a); }
inline double Ln(double a) { return std::log(a); }
inline double Log2(double a) { return std::log2(a); }
inline double Log10(double a) { return std::log10(a); }
inline double Sin(double a) { return std::sin(a); }
inline double Cos(double a) { return std::cos(a); }
inline double Tan(double a) { return std::tan(a); }
inline double Asin(double a) { return std::asin(a); }
inline double Acos(double a) { return std::acos(a); }
inline double Atan(double a) { return std::atan(a); }
inline double Sinh(double a) { return std::sinh(a); }
inline double Cosh(double a) { return std::cosh(a); }
inline double Tanh(double a) { return std::tanh(a); }
inline double Asinh(double a) { return std::asinh(a); }
inline double Acosh(double a) { return std::acosh(a); }
inline double Atanh(double a) { return std::atanh(a); }
inline double Atan2(double y, double x) { return std::atan2(y, x); }

// Functions of any number (>= 1) of arguments.
inline double Min(const double* a, int n) {
  double r = a[0];
  for (int i = 1; i < n; ++i) r = a[i] < r ? a[i] : r;
  return r;
}
inline double Max(const double* a, int n) {
  double r = a[0];
  for (int i = 1; i < n; ++i) r = a[i] > r ? a[i] : r;
  return r;
}
inline double Sum(const double* a, int n) {
  double r = 0;
  for (int i = 0; i < n; ++i) r += a[i];
  return r;
}
inline double Avg(const double* a, int n) { return Sum(a, n) / n; }
inline double Min(std::initializer_list<double> a) {
  return Min(a.begin(), static_cast<int>(a.size()));
}
inline double Max(std::initializer_list<double> a) {
  return Max(a.begin(), static_cast<int>(a.size()));
}
inline double Sum(std::initializer_list<double> a) {
  return Sum(a.begin(), static_cast<int>(a.size()));
}
inline double Avg(std::initializer_list<double> a) {
  return Avg(a.begin(), static_cast<int>(a.size()));
}

// Whether a check's value passes: finite and not zero.
inline bool Holds(double v) { return std::isfinite(v) && v != 0; }

// A size (elements, work-items): truncated toward zero and clamped into
// 1..2^53 when positive; zero and negative values give 0, values that are
// not finite give 1. The clamp keeps the conversion defined for any
// double.
inline uint64_t Size(double v) {
  constexpr double kMax = 9007199254740992.0;  // 2^53
  if (!std::isfinite(v)) return 1;
  if (!(v > 0)) return 0;
  if (v < 1) return 1;
  return static_cast<uint64_t>(v < kMax ? v : kMax);
}

// A 32-bit kernel argument: truncated and clamped into int32 (NaN: 0).
inline int32_t Int32(double v) {
  if (std::isnan(v)) return 0;
  if (v <= -2147483648.0) return INT32_MIN;
  if (v >= 2147483647.0) return INT32_MAX;
  return static_cast<int32_t>(v);
}

// An integer for text (build options, messages): truncated and clamped
// into +-2^62 (NaN: 0).
inline int64_t Int64(double v) {
  constexpr double kLimit = 4611686018427387904.0;  // 2^62
  if (std::isnan(v)) return 0;
  if (v <= -kLimit) return -static_cast<int64_t>(kLimit);
  if (v >= kLimit) return static_cast<int64_t>(kLimit);
  return static_cast<int64_t>(v);
}

// A float kernel argument, clamped into float's range (NaN: 0).
inline float Float(double v) {
  constexpr double kMax = 3.4028234663852886e38;  // FLT_MAX
  if (std::isnan(v)) return 0;
  return static_cast<float>(v < -kMax ? -kMax : v > kMax ? kMax : v);
}

}  // namespace tunefleet_expr

#endif  // TUNEFLEET_KERNELS_TEMPLATES_SPEC_EXPRESSION_FUNCTIONS_H_
