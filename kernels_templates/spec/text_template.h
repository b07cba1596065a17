// Text with expressions in braces, as template specs write build options
// and reasons: "-DMWG={MWG} -DEDGE_M={M % MWG != 0}" or "{workload}: groups
// G={G} must divide C={C}". Each {expression} prints as an integer
// (tunefleet_expr::Int64); {workload} prints the workload's canonical
// string and {template} the template's name.
#ifndef TUNEFLEET_KERNELS_TEMPLATES_SPEC_TEXT_TEMPLATE_H_
#define TUNEFLEET_KERNELS_TEMPLATES_SPEC_TEXT_TEMPLATE_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "kernels_templates/spec/expression.h"

namespace tunefleet::templates {

class TextTemplate {
 public:
  // One piece of the text: literal text, an expression or a name.
  struct Piece {
    enum Kind { kText, kExpression, kWorkload, kTemplate };
    Kind kind = kText;
    std::string text;     // kText
    int expression = -1;  // kExpression: a handle of the set
  };

  TextTemplate() = default;

  // Parses `text`, compiling each {expression} into `expressions`. Errors:
  // INVALID_ARGUMENT naming `what` for an unmatched brace or a bad
  // expression.
  static absl::StatusOr<TextTemplate> Parse(absl::string_view text,
                                            ExpressionSet& expressions,
                                            const std::string& what);
  // Plain text, braces included.
  static TextTemplate Literal(std::string text);

  // The text with each piece filled in: expressions read `slots` (one value
  // per variable of the set Parse() compiled them into).
  std::string Render(const ExpressionSet& expressions, const double* slots,
                     absl::string_view workload,
                     absl::string_view template_name) const;

  // The text when it is plain (one piece of text), else null.
  const std::string* StaticText() const {
    return pieces_.size() == 1 && pieces_[0].kind == Piece::kText
               ? &pieces_[0].text
               : nullptr;
  }
  // Whether some piece is an expression, or {workload}.
  bool HasExpressions() const;
  bool HasWorkload() const;
  // Handles of the expressions, in order.
  std::vector<int> Expressions() const;
  const std::vector<Piece>& pieces() const { return pieces_; }

 private:
  std::vector<Piece> pieces_;
};

}  // namespace tunefleet::templates

#endif  // TUNEFLEET_KERNELS_TEMPLATES_SPEC_TEXT_TEMPLATE_H_
