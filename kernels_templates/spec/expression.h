// Arithmetic expressions of template specs ("ceil(N / (WG * VW)) * WG",
// "WG <= max_work_group_size && N % VW == 0"), evaluated with muParser
// (https://beltoforion.de/en/muparser/): + - * / ^, comparisons, && ||,
// ?:, min, max, and tunefleet's %, ceil and floor. A zero divisor gives
// NaN, not a trap.
#ifndef TUNEFLEET_KERNELS_TEMPLATES_SPEC_EXPRESSION_H_
#define TUNEFLEET_KERNELS_TEMPLATES_SPEC_EXPRESSION_H_

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"

namespace tunefleet::templates {

// Longest expression Add() compiles.
inline constexpr size_t kMaxExpressionLength = 1024;

// A set of named variables and the expressions over them. Expressions are
// compiled once; Evaluate() sets the variables and evaluates under a mutex,
// so an ExpressionSet is thread-safe.
class ExpressionSet {
 public:
  explicit ExpressionSet(std::vector<std::string> variables);
  ~ExpressionSet();

  // Compiles an expression and returns its handle. Errors: INVALID_ARGUMENT
  // with muParser's message (unknown variable, syntax), or for one longer
  // than kMaxExpressionLength, naming `what`.
  absl::StatusOr<int> Add(const std::string& expression,
                          const std::string& what);

  // Evaluates expressions with variables taken from `values` (missing
  // ones are 0). Errors: INVALID_ARGUMENT when a result is not finite.
  absl::StatusOr<std::vector<double>> Evaluate(
      const std::vector<int>& handles,
      const std::map<std::string, double>& values) const;
  absl::StatusOr<double> Evaluate(
      int handle, const std::map<std::string, double>& values) const;

 private:
  struct Compiled;
  const std::vector<std::string> variables_;
  mutable absl::Mutex mu_;
  std::vector<std::unique_ptr<Compiled>> expressions_ ABSL_GUARDED_BY(mu_);
  mutable std::vector<double> storage_ ABSL_GUARDED_BY(mu_);
};

}  // namespace tunefleet::templates

#endif  // TUNEFLEET_KERNELS_TEMPLATES_SPEC_EXPRESSION_H_
