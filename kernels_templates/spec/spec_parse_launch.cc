// The parts of ParseSpecModel that read expressions over the variables:
// checks, buffers, FLOPs, bytes, features and the two kernels.
#include <algorithm>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "kernel_policy/build_options.h"
#include "kernels_templates/spec/spec_parse.h"
#include "kernels_templates/spec/spec_template.h"

namespace tunefleet::templates {
namespace {

using spec_json::GetExpression;
using spec_json::GetString;
using spec_json::GetStrings;
using spec_json::GetTables;
using spec_json::Invalid;
using spec_json::json;

absl::StatusOr<int> AddExpression(SpecModel& m, const std::string& text,
                                  const std::string& what) {
  return m.expressions->Add(text, what);
}

// The expression in `j`'s field `key`, added as `what`. Errors:
// GetExpression's or AddExpression's, as they are.
absl::StatusOr<int> AddExpressionField(SpecModel& m, const json& j,
                                       const char* key,
                                       const std::string& what) {
  absl::StatusOr<std::string> text = GetExpression(j, key);
  if (!text.ok()) return text.status();
  return AddExpression(m, *text, what);
}

// A field's text as a reason quotes it ("" when absent).
std::string QuotedText(const json& t, const char* key) {
  if (!t.contains(key)) return "";
  return t[key].is_string() ? t[key].get<std::string>() : t[key].dump();
}

// A check from a table {expression, reason}; `default_reason` (text with
// braces) when it gives none.
absl::StatusOr<SpecCheck> ParseCheck(const json& t, const std::string& what,
                                     bool need_expression,
                                     const std::string& default_reason,
                                     SpecModel& m) {
  SpecCheck check;
  if (t.contains("expression") || need_expression) {
    absl::StatusOr<std::string> text = GetExpression(t, "expression");
    if (!text.ok()) {
      return Invalid(absl::StrCat(what, ": ", text.status().message()));
    }
    absl::StatusOr<int> h = AddExpression(m, *text, what);
    if (!h.ok()) return h.status();
    check.expression = *h;
  }
  std::string reason = default_reason;
  if (absl::Status s = GetString(t, "reason", false, &reason); !s.ok()) {
    return s;
  }
  absl::StatusOr<TextTemplate> parsed = TextTemplate::Parse(
      reason, *m.expressions, absl::StrCat(what, ".reason"));
  if (!parsed.ok()) return parsed.status();
  check.reason = *std::move(parsed);
  return check;
}

absl::Status ParseConstraints(const json& j, SpecModel& m) {
  if (!j.contains("constraints")) return absl::OkStatus();
  if (!j["constraints"].is_array()) {
    return Invalid("\"constraints\" must be a list");
  }
  if (j["constraints"].size() > kMaxSpecConstraints) {
    return Invalid(absl::StrCat("\"constraints\" has ", j["constraints"].size(),
                                " items; at most ", kMaxSpecConstraints));
  }
  for (const json& c : j["constraints"]) {
    if (c.is_object()) {
      absl::StatusOr<SpecCheck> check = ParseCheck(
          c, "constraints", true,
          absl::StrCat("violates '", QuotedText(c, "expression"), "'"), m);
      if (!check.ok()) return check.status();
      m.constraints.push_back(*std::move(check));
      continue;
    }
    if (!c.is_string() && !c.is_number()) {
      return Invalid(absl::StrCat("\"constraints\" holds a non-string (",
                                  c.type_name(), ")"));
    }
    const std::string text = c.is_string() ? c.get<std::string>() : c.dump();
    absl::StatusOr<int> h = AddExpression(m, text, "constraints");
    if (!h.ok()) return h.status();
    m.constraints.push_back(
        {*h, TextTemplate::Literal(absl::StrCat("violates '", text, "'"))});
  }
  return absl::OkStatus();
}

// Options: a string, or a list of strings and {text, when} tables.
absl::Status ParseOptions(const json& k, const char* field, SpecKernel& out,
                          SpecModel& m) {
  if (!k.contains("options")) return absl::OkStatus();
  const std::string what = absl::StrCat(field, ".options");
  const json items =
      k["options"].is_array() ? k["options"] : json::array({k["options"]});
  if (items.size() > kMaxSpecArgs) {
    return Invalid(absl::StrCat(what, ": at most ", kMaxSpecArgs, " pieces"));
  }
  out.has_options = true;
  for (const json& item : items) {
    const json piece = item.is_string() ? json{{"text", item}} : item;
    std::string text;
    if (!piece.is_object() || !GetString(piece, "text", true, &text).ok()) {
      return Invalid(
          absl::StrCat(what, ": each piece is text or {text, when}"));
    }
    SpecOption option;
    absl::StatusOr<TextTemplate> parsed =
        TextTemplate::Parse(text, *m.expressions, what);
    if (!parsed.ok()) return parsed.status();
    option.text = *std::move(parsed);
    if (piece.contains("when")) {
      absl::StatusOr<int> h = AddExpressionField(m, piece, "when", what);
      if (!h.ok()) return h.status();
      option.when = *h;
    }
    out.options.push_back(std::move(option));
  }
  // What an agent accepts (kernel_policy/build_options.h), refused here
  // already: each piece, and all of them together, with every {expression}
  // read as 0.
  std::string all;
  for (const SpecOption& o : out.options) {
    std::string piece;
    for (const TextTemplate::Piece& p : o.text.pieces()) {
      piece += p.kind == TextTemplate::Piece::kText         ? p.text
               : p.kind == TextTemplate::Piece::kExpression ? "0"
               : p.kind == TextTemplate::Piece::kTemplate   ? m.name
                                                            : "workload";
    }
    if (absl::Status s = kernel_policy::CheckBuildOptions(piece); !s.ok()) {
      return Invalid(absl::StrCat(what, ": ", s.message()));
    }
    all += piece;
  }
  if (absl::Status s = kernel_policy::CheckBuildOptions(all); !s.ok()) {
    return Invalid(absl::StrCat(what, ": ", s.message()));
  }
  return absl::OkStatus();
}

absl::Status ParseGeometry(const json& k, const char* field, SpecKernel& out,
                           SpecModel& m) {
  for (const char* geometry : {"global", "local"}) {
    absl::StatusOr<std::vector<std::string>> list = GetStrings(k, geometry, 3);
    if (!list.ok()) return list.status();
    for (const std::string& e : *list) {
      absl::StatusOr<int> h =
          AddExpression(m, e, absl::StrCat(field, ".", geometry));
      if (!h.ok()) return h.status();
      (geometry[0] == 'g' ? out.global : out.local).push_back(*h);
    }
  }
  if (out.global.empty() || out.global.size() > 3 ||
      (!out.local.empty() && out.local.size() != out.global.size())) {
    return Invalid(absl::StrCat(field,
                                ": global needs 1 to 3 sizes, and local none "
                                "or as many"));
  }
  return absl::OkStatus();
}

absl::StatusOr<SpecKernel> ParseKernel(const json& root, const char* field,
                                       SpecModel& m) {
  if (!root.contains(field) || !root[field].is_object()) {
    return Invalid(absl::StrCat("missing table \"", field, "\""));
  }
  const json& k = root[field];
  SpecKernel out;
  if (absl::Status s = GetString(k, "name", true, &out.name); !s.ok()) return s;
  if (absl::Status s = spec_json::CheckIdentifier(absl::StrCat(field, ".name"),
                                                  out.name, kMaxSpecNameLength);
      !s.ok()) {
    return s;
  }
  if (absl::Status s = ParseGeometry(k, field, out, m); !s.ok()) return s;
  absl::StatusOr<std::vector<std::string>> args =
      GetStrings(k, "args", kMaxSpecArgs);
  if (!args.ok()) return args.status();
  const bool is_kernel = std::string(field) == "kernel";
  for (const std::string& a : *args) {
    absl::StatusOr<SpecArg> arg = ParseSpecArg(a, field, is_kernel, m);
    if (!arg.ok()) return arg.status();
    out.args.push_back(*std::move(arg));
  }
  if (absl::Status s = ParseOptions(k, field, out, m); !s.ok()) return s;
  if (k.contains("when")) {
    if (!is_kernel || !m.library.has_value()) {
      return Invalid(absl::StrCat(
          field,
          ".when: only the [kernel] of a library spec (an epilogue "
          "after the [library] call) may be skipped"));
    }
    absl::StatusOr<std::string> when = GetExpression(k, "when");
    if (!when.ok()) {
      return Invalid(absl::StrCat(
          "kernel.when: ",
          absl::StripPrefix(when.status().message(), "template spec: ")));
    }
    absl::StatusOr<int> h = AddExpression(m, *when, "kernel.when");
    if (!h.ok()) return h.status();
    if (absl::Status s = CheckReadsNoLimit(m, *h, "kernel.when"); !s.ok()) {
      return s;
    }
    out.when = *h;
  }
  return out;
}

// Defines: knobs or dims passed as -D; all knobs by default.
absl::Status ParseDefines(const json& j, SpecModel& m) {
  absl::StatusOr<std::vector<std::string>> defines =
      GetStrings(j.contains("kernel") ? j["kernel"] : json::object(), "defines",
                 kMaxSpecDims + kMaxSpecKnobs);
  if (!defines.ok()) return defines.status();
  m.defines = *defines;
  if (m.defines.empty()) {
    for (const Knob& k : m.knobs) m.defines.push_back(k.name);
  }
  for (const std::string& d : m.defines) {
    const bool known =
        std::find(m.dims.begin(), m.dims.end(), d) != m.dims.end() ||
        std::any_of(m.knobs.begin(), m.knobs.end(),
                    [&](const Knob& k) { return k.name == d; });
    if (!known) {
      return Invalid(
          absl::StrCat("kernel.defines: '", d, "' is not a knob or dim"));
    }
  }
  return absl::OkStatus();
}

// Whether buffer `buffer`'s `key` (one of `plain`, its default, and
// `other`) is `other`. Errors: GetString's, or INVALID_ARGUMENT "buffer
// <buffer>: <key> must be "<plain>" or "<other>"".
absl::StatusOr<bool> GetBufferChoice(const json& b, const std::string& buffer,
                                     const char* key, const char* plain,
                                     const char* other) {
  std::string value = plain;
  if (absl::Status s = GetString(b, key, false, &value); !s.ok()) return s;
  if (value != plain && value != other) {
    return Invalid(absl::StrCat("buffer ", buffer, ": ", key, " must be \"",
                                plain, "\" or \"", other, "\""));
  }
  return value == other;
}

absl::StatusOr<SpecBuffer> ParseBuffer(const json& b, SpecModel& m,
                                       uint32_t* next_seed) {
  SpecBuffer spec;
  if (absl::Status s = GetString(b, "name", true, &spec.name); !s.ok())
    return s;
  if (absl::Status s = spec_json::CheckIdentifier("buffers.name", spec.name,
                                                  kMaxSpecNameLength);
      !s.ok()) {
    return s;
  }
  if (std::any_of(m.buffers.begin(), m.buffers.end(),
                  [&](const SpecBuffer& o) { return o.name == spec.name; })) {
    return Invalid(absl::StrCat("buffer ", spec.name, " is repeated"));
  }
  absl::StatusOr<int> h =
      AddExpressionField(m, b, "elements", absl::StrCat("buffer ", spec.name));
  if (!h.ok()) return h.status();
  spec.elements = *h;
  spec.output = b.contains("output") && b["output"].is_boolean() &&
                b["output"].get<bool>();
  absl::StatusOr<bool> workload_dtype =
      GetBufferChoice(b, spec.name, "dtype", "fp32", "workload");
  if (!workload_dtype.ok()) return workload_dtype.status();
  spec.workload_dtype = *workload_dtype;
  absl::StatusOr<bool> zero_fill =
      GetBufferChoice(b, spec.name, "fill", "uniform", "zero");
  if (!zero_fill.ok()) return zero_fill.status();
  spec.zero_fill = *zero_fill;
  if (spec.zero_fill && spec.output) {
    return Invalid(absl::StrCat(
        "buffer ", spec.name,
        ": an output is verified; fill = \"zero\" is for scratch"));
  }
  spec.seed = spec.output || spec.zero_fill ? 0 : (*next_seed)++;
  if (b.contains("seed")) {
    absl::StatusOr<int64_t> seed = spec_json::BoundedInteger(
        b["seed"], absl::StrCat("buffer ", spec.name, ".seed"), 1 << 30);
    if (!seed.ok()) return seed.status();
    spec.seed = static_cast<uint32_t>(std::max<int64_t>(*seed, 0));
  }
  return spec;
}

}  // namespace

absl::Status ParseSpecChecks(const json& j, SpecModel& m) {
  if (j.contains("accepts")) {
    if (!j["accepts"].is_object()) {
      return Invalid("accepts: a table {expression, reason}");
    }
    absl::StatusOr<SpecCheck> accepts =
        ParseCheck(j["accepts"], "accepts", false,
                   "template {template} does not run {workload}", m);
    if (!accepts.ok()) return accepts.status();
    m.has_accepts = true;
    m.accepts = *std::move(accepts);
  }
  absl::StatusOr<std::vector<json>> checks =
      GetTables(j, "workload_checks", kMaxSpecConstraints);
  if (!checks.ok()) return checks.status();
  for (const json& c : *checks) {
    absl::StatusOr<SpecCheck> check =
        ParseCheck(c, "workload_checks", true,
                   absl::StrCat("{workload}: violates '",
                                QuotedText(c, "expression"), "'"),
                   m);
    if (!check.ok()) return check.status();
    m.workload_checks.push_back(*std::move(check));
  }
  return ParseConstraints(j, m);
}

absl::Status ParseSpecBuffers(const json& j, SpecModel& m) {
  if (!j.contains("buffers") || !j["buffers"].is_array() ||
      j["buffers"].empty()) {
    return Invalid("missing [[buffers]] (name, elements, output)");
  }
  if (j["buffers"].size() > kMaxSpecBuffers) {
    return Invalid(absl::StrCat("buffers: ", j["buffers"].size(),
                                " buffers; at most ", kMaxSpecBuffers));
  }
  uint32_t next_seed = 1;
  for (const json& b : j["buffers"]) {
    if (!b.is_object()) return Invalid("a buffer must be a table");
    absl::StatusOr<SpecBuffer> buffer = ParseBuffer(b, m, &next_seed);
    if (!buffer.ok()) return buffer.status();
    // Callers of an emitted library pass the buffers up to the scratch.
    if (!buffer->zero_fill && !m.buffers.empty() &&
        m.buffers.back().zero_fill) {
      return Invalid(absl::StrCat(
          "buffer ", buffer->name, " follows scratch buffer ",
          m.buffers.back().name, ": fill = \"zero\" buffers come last"));
    }
    m.buffers.push_back(*std::move(buffer));
  }
  if (std::none_of(m.buffers.begin(), m.buffers.end(),
                   [](const SpecBuffer& b) { return b.output; })) {
    return Invalid("no buffer has output = true: nothing to verify");
  }
  return absl::OkStatus();
}

absl::Status ParseSpecValues(const json& j, SpecModel& m) {
  for (const char* field : {"flops", "bytes"}) {
    if (!j.contains(field) && field[0] == 'b') continue;
    absl::StatusOr<int> h = AddExpressionField(m, j, field, field);
    if (!h.ok()) return h.status();
    (field[0] == 'f' ? m.flops : m.bytes) = *h;
  }
  absl::StatusOr<std::vector<json>> features =
      GetTables(j, "features", kMaxSpecFeatures);
  if (!features.ok()) return features.status();
  for (const json& f : *features) {
    SpecValue feature;
    if (absl::Status s = GetString(f, "name", true, &feature.name); !s.ok()) {
      return s;
    }
    if (absl::Status s = spec_json::CheckIdentifier(
            "features.name", feature.name, kMaxSpecNameLength);
        !s.ok()) {
      return s;
    }
    absl::StatusOr<int> h = AddExpressionField(
        m, f, "value", absl::StrCat("feature ", feature.name));
    if (!h.ok()) return h.status();
    feature.expression = *h;
    m.features.push_back(std::move(feature));
  }
  return absl::OkStatus();
}

absl::StatusOr<SpecArg> ParseSpecArg(const std::string& a,
                                     const std::string& field,
                                     bool images_allowed, SpecModel& m) {
  const bool is_buffer =
      std::any_of(m.buffers.begin(), m.buffers.end(),
                  [&](const SpecBuffer& b) { return b.name == a; });
  if (is_buffer) return SpecArg{SpecArg::kBuffer, a, -1};
  for (size_t i = 0; i < m.images.size(); ++i) {
    if (m.images[i].name != a) continue;
    if (!images_allowed) {
      return Invalid(absl::StrCat(field, ".args: image ", a,
                                  " is for [kernel].args only"));
    }
    return SpecArg{SpecArg::kImage, a, -1, static_cast<int>(i)};
  }
  absl::string_view text = a;
  const bool is_float = absl::ConsumePrefix(&text, "float:");
  absl::StatusOr<int> h =
      AddExpression(m, std::string(text), absl::StrCat(field, ".args"));
  if (!h.ok()) return h.status();
  return SpecArg{is_float ? SpecArg::kFloat : SpecArg::kInt, "", *h};
}

absl::Status CheckReadsNoLimit(const SpecModel& m, int handle,
                               const std::string& what) {
  for (int slot : m.expressions->Reads(handle)) {
    if (slot >= m.slots.limit(0) && slot < m.slots.limit(kNumSpecLimits)) {
      return Invalid(absl::StrCat(
          what, ": reads ", m.expressions->variables()[slot],
          ", a device limit, which launches are computed without (choose "
          "with a knob, and constrain the knob with the limit)"));
    }
  }
  return absl::OkStatus();
}

absl::Status ParseSpecKernels(const json& j, const std::string& source,
                              const std::string& reference_source,
                              SpecModel& m) {
  // A library spec's [kernel] is an optional epilogue.
  m.has_kernel = !m.library.has_value() || j.contains("kernel");
  if (m.has_kernel) {
    absl::StatusOr<SpecKernel> kernel = ParseKernel(j, "kernel", m);
    if (!kernel.ok()) return kernel.status();
    m.kernel = *std::move(kernel);
  }
  m.kernel.source = source;
  absl::StatusOr<SpecKernel> reference = ParseKernel(j, "reference", m);
  if (!reference.ok()) return reference.status();
  m.reference = *std::move(reference);
  const bool own_source = j["reference"].contains("source");
  if (own_source && reference_source.empty()) {
    return Invalid(
        "reference.source: the reference's own source text is missing");
  }
  m.reference.source = own_source ? reference_source : source;
  return ParseDefines(j, m);
}

}  // namespace tunefleet::templates
