#include "kernels_templates/spec/text_template.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "kernels_templates/spec/expression_functions.h"

namespace tunefleet::templates {

absl::StatusOr<TextTemplate> TextTemplate::Parse(absl::string_view text,
                                                 ExpressionSet& expressions,
                                                 const std::string& what) {
  TextTemplate t;
  size_t pos = 0;
  while (pos < text.size()) {
    const size_t open = text.find('{', pos);
    const size_t close = text.find('}', pos);
    if (close < open) {
      return absl::InvalidArgumentError(
          absl::StrCat("template spec: ", what, ": '}' without '{'"));
    }
    if (open > pos) {
      t.pieces_.push_back(
          {Piece::kText, std::string(text.substr(pos, open - pos))});
    }
    if (open == absl::string_view::npos) break;
    if (close == absl::string_view::npos) {
      return absl::InvalidArgumentError(
          absl::StrCat("template spec: ", what, ": '{' without '}'"));
    }
    const absl::string_view inner = text.substr(open + 1, close - open - 1);
    if (inner == "workload" || inner == "template") {
      t.pieces_.push_back(
          {inner == "workload" ? Piece::kWorkload : Piece::kTemplate});
    } else {
      absl::StatusOr<int> h = expressions.Add(std::string(inner), what);
      if (!h.ok()) return h.status();
      t.pieces_.push_back({Piece::kExpression, "", *h});
    }
    pos = close + 1;
  }
  return t;
}

TextTemplate TextTemplate::Literal(std::string text) {
  TextTemplate t;
  t.pieces_.push_back({Piece::kText, std::move(text)});
  return t;
}

std::string TextTemplate::Render(const ExpressionSet& expressions,
                                 const double* slots,
                                 absl::string_view workload,
                                 absl::string_view template_name) const {
  std::string out;
  for (const Piece& p : pieces_) {
    switch (p.kind) {
      case Piece::kText:
        out += p.text;
        break;
      case Piece::kExpression:
        absl::StrAppend(&out, tunefleet_expr::Int64(
                                  expressions.Evaluate(p.expression, slots)));
        break;
      case Piece::kWorkload:
        absl::StrAppend(&out, workload);
        break;
      case Piece::kTemplate:
        absl::StrAppend(&out, template_name);
        break;
    }
  }
  return out;
}

bool TextTemplate::HasExpressions() const {
  return std::any_of(pieces_.begin(), pieces_.end(), [](const Piece& p) {
    return p.kind == Piece::kExpression;
  });
}

bool TextTemplate::HasWorkload() const {
  return std::any_of(pieces_.begin(), pieces_.end(),
                     [](const Piece& p) { return p.kind == Piece::kWorkload; });
}

std::vector<int> TextTemplate::Expressions() const {
  std::vector<int> out;
  for (const Piece& p : pieces_) {
    if (p.kind == Piece::kExpression) out.push_back(p.expression);
  }
  return out;
}

}  // namespace tunefleet::templates
