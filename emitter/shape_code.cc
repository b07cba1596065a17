#include "emitter/shape_code.h"

#include <algorithm>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"

namespace tunefleet::emitter {
namespace {

using templates::SpecCheck;
using templates::SpecKernel;
using templates::SpecModel;
using templates::TextTemplate;

std::string Var(int slot) { return absl::StrCat("v[", slot, "]"); }

std::string Cxx(const SpecModel& m, int handle) {
  return m.expressions->ToCxx(handle, Var);
}

std::string Quoted(absl::string_view s) {
  return absl::StrCat("\"", absl::CEscape(s), "\"");
}

// A reason as its spec writes it (braces and all).
std::string ReasonText(const SpecModel& m, const TextTemplate& t) {
  std::string text;
  for (const TextTemplate::Piece& p : t.pieces()) {
    switch (p.kind) {
      case TextTemplate::Piece::kText:
        text += p.text;
        break;
      case TextTemplate::Piece::kExpression:
        absl::StrAppend(&text, "{", m.expressions->Text(p.expression), "}");
        break;
      case TextTemplate::Piece::kWorkload:
        text += "{workload}";
        break;
      case TextTemplate::Piece::kTemplate:
        text += m.name;
        break;
    }
  }
  return text;
}

std::string Lets(const SpecModel& m) {
  std::string code;
  for (size_t i = 0; i < m.lets.size(); ++i) {
    absl::StrAppend(&code, "  ", Var(m.slots.let(static_cast<int>(i))), " = ",
                    Cxx(m, m.lets[i].expression), ";  // ", m.lets[i].name,
                    "\n");
  }
  return code;
}

std::string Check(const SpecModel& m, const SpecCheck& c) {
  return absl::StrCat("  if (!tunefleet_expr::Holds(", Cxx(m, c.expression),
                      ")) return ", Quoted(ReasonText(m, c.reason)), ";\n");
}

// The OpenCL launch rules the engine applies after the constraints
// (SpecTemplate::CheckLaunchRules).
std::string LaunchRules(const SpecModel& m) {
  const SpecKernel& k = m.kernel;
  std::string code = "  double group = 1;\n";
  for (size_t d = 0; d < k.global.size(); ++d) {
    absl::StrAppend(&code, "  const double g", d, " = ", Cxx(m, k.global[d]),
                    ";\n  if (!std::isfinite(g", d, ") || g", d,
                    " < 1) return \"global size below 1\";\n");
    if (d >= k.local.size()) continue;
    absl::StrAppend(
        &code, "  const double l", d, " = ", Cxx(m, k.local[d]), ";\n",
        "  if (!std::isfinite(l", d, ") || l", d, " < 1 || std::fmod(g", d,
        ", l", d, ") != 0 || l", d, " > ", Var(m.slots.limit(1 + d)),
        ") return \"local size does not divide global or exceeds the "
        "device's\";\n  group *= l",
        d, ";\n");
  }
  absl::StrAppend(&code, "  if (group > ", Var(m.slots.limit(0)),
                  ") return \"work-group exceeds the device's\";\n");
  return code;
}

std::string CheckFunction(const SpecModel& m, int index) {
  std::string code =
      absl::StrCat("const char* ShapeCheck", index, "(double* v) {\n", Lets(m));
  if (m.has_accepts && m.accepts.expression >= 0) {
    code += Check(m, m.accepts);
  }
  for (const SpecCheck& c : m.workload_checks) code += Check(m, c);
  for (const SpecCheck& c : m.constraints) code += Check(m, c);
  if (m.launch_checks) code += LaunchRules(m);
  return code + "  return nullptr;\n}\n\n";
}

// Statements appending a text's pieces to out->options.
absl::StatusOr<std::string> OptionText(const SpecModel& m,
                                       const TextTemplate& t,
                                       absl::string_view indent) {
  std::string code;
  for (const TextTemplate::Piece& p : t.pieces()) {
    if (p.kind == TextTemplate::Piece::kWorkload) {
      return absl::FailedPreconditionError(absl::StrCat(
          "template ", m.name, ": its build options print {workload}"));
    }
    const std::string value =
        p.kind == TextTemplate::Piece::kExpression
            ? absl::StrCat("std::to_string(tunefleet_expr::Int64(",
                           Cxx(m, p.expression), "))")
            : Quoted(p.kind == TextTemplate::Piece::kText ? p.text : m.name);
    absl::StrAppend(&code, indent, "out->options += ", value, ";\n");
  }
  return code;
}

absl::StatusOr<std::string> Options(const SpecModel& m) {
  std::string code = "  out->options.clear();\n";
  if (!m.kernel.has_options) {
    const std::vector<std::string>& names = m.expressions->variables();
    for (size_t i = 0; i < m.defines.size(); ++i) {
      const int slot = static_cast<int>(
          std::find(names.begin(), names.end(), m.defines[i]) - names.begin());
      absl::StrAppend(
          &code, "  out->options += ",
          Quoted(absl::StrCat(i ? " " : "", "-D", m.defines[i], "=")),
          ";\n  out->options += std::to_string("
          "tunefleet_expr::Int32(",
          Var(slot), "));\n");
    }
    return code;
  }
  for (const templates::SpecOption& o : m.kernel.options) {
    const bool conditional = o.when >= 0;
    absl::StatusOr<std::string> text =
        OptionText(m, o.text, conditional ? "    " : "  ");
    if (!text.ok()) return text.status();
    if (conditional) {
      absl::StrAppend(&code, "  if (tunefleet_expr::Holds(", Cxx(m, o.when),
                      ")) {\n", *text, "  }\n");
    } else {
      code += *text;
    }
  }
  return code;
}

absl::StatusOr<std::string> LaunchFunction(const SpecModel& m, int index) {
  const SpecKernel& k = m.kernel;
  std::string code = absl::StrCat("void ShapeLaunch", index,
                                  "(double* v, ShapeLaunch* out) {\n", Lets(m),
                                  "  out->dims = ", k.global.size(), ";\n");
  for (size_t d = 0; d < k.global.size(); ++d) {
    absl::StrAppend(&code, "  out->global[", d, "] = tunefleet_expr::Size(",
                    Cxx(m, k.global[d]), ");\n");
  }
  for (size_t d = 0; d < k.local.size(); ++d) {
    absl::StrAppend(&code, "  out->local[", d, "] = tunefleet_expr::Size(",
                    Cxx(m, k.local[d]), ");\n");
  }
  int ints = 0;
  for (const templates::SpecArg& a : k.args) {
    if (a.kind != templates::SpecArg::kInt) continue;
    absl::StrAppend(&code, "  out->ints[", ints++, "] = tunefleet_expr::Int32(",
                    Cxx(m, a.expression), ");\n");
  }
  // Each image argument's rows, row_elements and whether it is an image,
  // after the int arguments (ArgArray numbers them the same way).
  for (const templates::SpecArg& a : k.args) {
    if (a.kind != templates::SpecArg::kImage) continue;
    const templates::SpecImage& image = m.images[a.image];
    const int at = ints;
    ints += 3;
    absl::StrAppend(&code, "  out->ints[", at, "] = tunefleet_expr::Size(",
                    Cxx(m, image.rows), ");\n", "  out->ints[", at + 1,
                    "] = tunefleet_expr::Size(", Cxx(m, image.row_elements),
                    ");\n", "  out->ints[", at + 2, "] = ",
                    image.when < 0 ? "1"
                                   : absl::StrCat("(", Cxx(m, image.when),
                                                  ") != 0 ? 1 : 0"),
                    ";\n");
  }
  absl::StatusOr<std::string> options = Options(m);
  if (!options.ok()) return options.status();
  return absl::StrCat(code, *options, "}\n\n");
}

std::string Array(absl::string_view type, absl::string_view name, int index,
                  const std::vector<std::string>& items);

// The kernel's arguments as tuned_table.h's Args; counts its floats.
std::string ArgArray(const SpecModel& m, int index, int* floats) {
  std::vector<std::string> args;
  int ints = 0;
  *floats = 0;
  auto slot = [&](const std::string& buffer) {
    return std::find_if(m.buffers.begin(), m.buffers.end(),
                        [&](const templates::SpecBuffer& b) {
                          return b.name == buffer;
                        }) -
           m.buffers.begin();
  };
  // Image arguments' integers follow the int arguments' (LaunchFunction).
  int image_ints = static_cast<int>(
      std::count_if(m.kernel.args.begin(), m.kernel.args.end(),
                    [](const templates::SpecArg& a) {
                      return a.kind == templates::SpecArg::kInt;
                    }));
  for (const templates::SpecArg& a : m.kernel.args) {
    if (a.kind == templates::SpecArg::kBuffer) {
      args.push_back(absl::StrCat("{'b', ", slot(a.buffer), "}"));
    } else if (a.kind == templates::SpecArg::kImage) {
      args.push_back(absl::StrCat("{'m', ", slot(m.images[a.image].buffer),
                                  ", ", image_ints, ", ", image_ints + 1, ", ",
                                  image_ints + 2, "}"));
      image_ints += 3;
    } else if (a.kind == templates::SpecArg::kFloat) {
      args.push_back(absl::StrCat("{'f', ", (*floats)++, "}"));
    } else {
      args.push_back(absl::StrCat("{'i', ", ints++, "}"));
    }
  }
  return Array("Arg", "kShapeArgs", index, args);
}

// "const <type> <name><index>[] = {...};" or nothing for no items (the
// entry then holds nullptr).
std::string Array(absl::string_view type, absl::string_view name, int index,
                  const std::vector<std::string>& items) {
  if (items.empty()) return "";
  return absl::StrCat("const ", type, " ", name, index, "[] = {",
                      absl::StrJoin(items, ", "), "};\n");
}

std::string Ref(absl::string_view name, int index, size_t count) {
  return count == 0 ? "nullptr" : absl::StrCat(name, index);
}

std::vector<std::string> QuotedAll(const std::vector<std::string>& names) {
  std::vector<std::string> out;
  for (const std::string& n : names) out.push_back(Quoted(n));
  return out;
}

// The quoted names of `dtypes`.
std::vector<std::string> DtypeNames(
    const std::vector<templates::Dtype>& dtypes) {
  std::vector<std::string> out;
  for (templates::Dtype d : dtypes)
    out.push_back(Quoted(templates::DtypeName(d)));
  return out;
}

// The arrays of the attributes: values, numbers, and the Attr entries.
std::string AttrArrays(const SpecModel& m, int index) {
  std::string code;
  std::vector<std::string> attrs;
  for (size_t a = 0; a < m.attrs.size(); ++a) {
    std::vector<std::string> values, numbers;
    for (const auto& [value, number] : m.attrs[a].values) {
      values.push_back(Quoted(value));
      numbers.push_back(absl::StrFormat("%.17g", number));
    }
    const std::string suffix = absl::StrCat(index, "_", a);
    absl::StrAppend(&code, "const char* const kAttrValues", suffix, "[] = {",
                    absl::StrJoin(values, ", "),
                    "};\nconst double kAttrNumbers", suffix, "[] = {",
                    absl::StrJoin(numbers, ", "), "};\n");
    attrs.push_back(absl::StrCat("{", Quoted(m.attrs[a].name), ", ",
                                 values.size(), ", kAttrValues", suffix,
                                 ", kAttrNumbers", suffix, "}"));
  }
  return code + Array("Attr", "kAttrs", index, attrs);
}

}  // namespace

absl::StatusOr<ShapeCode> GenerateShapeCode(const templates::SpecTemplate& tmpl,
                                            int index, int default_source) {
  const SpecModel& m = tmpl.model();
  if (!m.shape_generic) {
    return absl::FailedPreconditionError(
        absl::StrCat("template ", m.name, " is not shape-generic"));
  }
  // Scratch sizes follow the shape; the runtime sizes scratch only for
  // exact entries (their bytes computed here at emit time).
  for (const templates::SpecBuffer& b : m.buffers) {
    if (b.zero_fill) {
      return absl::FailedPreconditionError(absl::StrCat(
          "template ", m.name, ": scratch buffer ", b.name,
          " (fill = \"zero\") in a shape-generic template; its records are "
          "emitted as exact entries"));
    }
  }
  absl::StatusOr<std::string> launch = LaunchFunction(m, index);
  if (!launch.ok()) return launch.status();
  std::vector<std::string> knobs, defaults;
  for (size_t k = 0; k < m.knobs.size(); ++k) {
    knobs.push_back(Quoted(m.knobs[k].name));
    defaults.push_back(absl::StrCat(m.default_config[k]));
  }
  int floats = 0;
  ShapeCode code;
  code.definitions = absl::StrCat(
      "// Template ", m.name, " (op ", m.op, "), from its spec.\n",
      Array("char* const", "kDims", index, QuotedAll(m.dims)),
      AttrArrays(m, index),
      Array("char* const", "kDtypes", index, DtypeNames(m.dtypes)),
      Array("char* const", "kKnobs", index, knobs),
      Array("long long", "kDefaultConfig", index, defaults),
      ArgArray(m, index, &floats), CheckFunction(m, index), *launch);
  code.entry = absl::StrCat(
      "{", Quoted(m.name), ", ", Quoted(m.op), ", ", m.dims.size(), ", ",
      Ref("kDims", index, m.dims.size()), ", ", m.attrs.size(), ", ",
      Ref("kAttrs", index, m.attrs.size()), ", ", m.dtypes.size(), ", ",
      Ref("kDtypes", index, m.dtypes.size()), ", ", m.knobs.size(), ", ",
      Ref("kKnobs", index, m.knobs.size()), ", ",
      Ref("kDefaultConfig", index, m.knobs.size()), ", ", default_source, ", ",
      Quoted(m.kernel.name), ", ", m.kernel.args.size(), ", ",
      Ref("kShapeArgs", index, m.kernel.args.size()), ", ", m.buffers.size(),
      ", ", floats, ", ", m.slots.size(), ", ShapeCheck", index,
      ", ShapeLaunch", index, "}");
  return code;
}

}  // namespace tunefleet::emitter
