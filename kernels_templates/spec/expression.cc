#include "kernels_templates/spec/expression.h"

#include <muParser.h>

#include <cmath>

#include "absl/strings/str_cat.h"

namespace tunefleet::templates {
namespace {

double Mod(double a, double b) { return b == 0 ? NAN : std::fmod(a, b); }
double Ceil(double a) { return std::ceil(a); }
double Floor(double a) { return std::floor(a); }

}  // namespace

struct ExpressionSet::Compiled {
  mu::Parser parser;
  std::string text;
  std::string what;
};

ExpressionSet::ExpressionSet(std::vector<std::string> variables)
    : variables_(std::move(variables)), storage_(variables_.size(), 0.0) {}

ExpressionSet::~ExpressionSet() = default;

absl::StatusOr<int> ExpressionSet::Add(const std::string& expression,
                                       const std::string& what) {
  if (expression.size() > kMaxExpressionLength) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": expression of ", expression.size(),
                     " characters; at most ", kMaxExpressionLength));
  }
  auto c = std::make_unique<Compiled>();
  c->text = expression;
  c->what = what;
  absl::MutexLock lock(&mu_);
  // muParser reports errors by throwing; they stop here.
  try {
    c->parser.DefineOprt("%", Mod, mu::prMUL_DIV, mu::oaLEFT, true);
    c->parser.DefineFun("ceil", Ceil);
    c->parser.DefineFun("floor", Floor);
    for (size_t i = 0; i < variables_.size(); ++i) {
      c->parser.DefineVar(variables_[i], &storage_[i]);
    }
    c->parser.SetExpr(expression);
    c->parser.Eval();  // compiles, and reports unknown names
  } catch (const mu::Parser::exception_type& e) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": expression '", expression, "': ", e.GetMsg()));
  }
  expressions_.push_back(std::move(c));
  return static_cast<int>(expressions_.size() - 1);
}

absl::StatusOr<std::vector<double>> ExpressionSet::Evaluate(
    const std::vector<int>& handles,
    const std::map<std::string, double>& values) const {
  absl::MutexLock lock(&mu_);
  for (size_t i = 0; i < variables_.size(); ++i) {
    auto it = values.find(variables_[i]);
    storage_[i] = it == values.end() ? 0.0 : it->second;
  }
  std::vector<double> out;
  for (int h : handles) {
    const Compiled& c = *expressions_[h];
    double v = 0;
    try {
      v = c.parser.Eval();
    } catch (const mu::Parser::exception_type& e) {
      return absl::InvalidArgumentError(
          absl::StrCat(c.what, ": expression '", c.text, "': ", e.GetMsg()));
    }
    if (!std::isfinite(v)) {
      return absl::InvalidArgumentError(absl::StrCat(
          c.what, ": expression '", c.text, "' is not finite (", v, ")"));
    }
    out.push_back(v);
  }
  return out;
}

absl::StatusOr<double> ExpressionSet::Evaluate(
    int handle, const std::map<std::string, double>& values) const {
  absl::StatusOr<std::vector<double>> v =
      Evaluate(std::vector<int>{handle}, values);
  if (!v.ok()) return v.status();
  return v->front();
}

}  // namespace tunefleet::templates
