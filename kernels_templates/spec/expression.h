// Arithmetic expressions of template specs ("ceil(N / (WG * VW)) * WG",
// "WG <= max_work_group_size && N % VW == 0"), parsed by muParser
// (https://beltoforion.de/en/muparser/): + - * / ^, comparisons, && ||,
// ?:, tunefleet's %, and the functions abs, ceil, floor, trunc, rint,
// sign, sqrt, exp, ln, log (natural), log2, log10, the trigonometric ones,
// and min, max, sum, avg of any number of arguments
// (expression_functions.h defines them all). A zero divisor of % gives NaN,
// not a trap; values are doubles throughout.
//
// Each expression is compiled once into a small stack program over
// variable slots: slot i holds variable i of the set, and callers pass the
// values as an array. Evaluation reads no shared mutable state, so it is
// thread-safe and takes no lock. The same program prints as a C++
// expression for emitted libraries (ToCxx).
#ifndef TUNEFLEET_KERNELS_TEMPLATES_SPEC_EXPRESSION_H_
#define TUNEFLEET_KERNELS_TEMPLATES_SPEC_EXPRESSION_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/statusor.h"
#include "base/pass_key.h"

namespace tunefleet::templates {

// A set of named variables and the expressions over them. Add() is for
// set-up (not thread-safe); everything else is const and thread-safe.
class ExpressionSet {
 public:
  // Longest expression Add() compiles.
  static constexpr size_t kMaxExpressionLength = 1024;
  // Deepest evaluation stack an expression may need (nesting depth, about).
  static constexpr int kMaxExpressionStack = 64;

  // Errors: INVALID_ARGUMENT for a name muParser cannot take as a
  // variable (e.g. one of its functions' or constants' names).
  static absl::StatusOr<std::unique_ptr<ExpressionSet>> Create(
      std::vector<std::string> variables);
  ~ExpressionSet();

  // Compiles an expression and returns its handle (0, 1, ...). Errors:
  // INVALID_ARGUMENT naming `what` with muParser's message (unknown
  // variable, syntax), or for one longer than kMaxExpressionLength, nested
  // deeper than kMaxExpressionStack, with several comma-separated values
  // or with an assignment.
  absl::StatusOr<int> Add(const std::string& expression,
                          const std::string& what);

  // The value of expression `handle` with variable i read from slots[i]
  // (`slots` has one value per variable). Never fails: a value that is not
  // finite is returned as such.
  double Evaluate(int handle, const double* slots) const;
  // As Evaluate(). Errors: INVALID_ARGUMENT naming the expression when its
  // value is not finite.
  absl::StatusOr<double> EvaluateFinite(int handle, const double* slots) const;

  // The slots an expression reads, ascending.
  const std::vector<int>& Reads(int handle) const;
  // The expression as written, and the `what` it was added with.
  const std::string& Text(int handle) const;
  const std::string& What(int handle) const;
  // A C++17 expression of type double computing exactly what Evaluate()
  // does, variable i spelled variable(i); it calls the functions of
  // expression_functions.h (namespace tunefleet_expr).
  std::string ToCxx(int handle,
                    absl::FunctionRef<std::string(int)> variable) const;

  const std::vector<std::string>& variables() const { return variables_; }
  // Expressions added.
  int size() const;

 private:
  struct Program;
  class Compiler;

 public:
  // Use Create().
  explicit ExpressionSet(base::PassKey<ExpressionSet>);

 private:
  std::vector<std::string> variables_;
  std::vector<Program> programs_;
  // muParser, bound to dummy storage: only Add() uses it.
  std::unique_ptr<Compiler> compiler_;
};

}  // namespace tunefleet::templates

#endif  // TUNEFLEET_KERNELS_TEMPLATES_SPEC_EXPRESSION_H_
