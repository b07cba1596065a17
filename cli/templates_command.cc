#include "cli/templates_command.h"

#include <algorithm>
#include <cstdint>
#include <iostream>
#include <limits>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "cli/common.h"
#include "kernels_templates/registry.h"
#include "kernels_templates/workload.h"

namespace tunefleet::cli {
namespace {

// Product of the knobs' value counts: the configs before any constraint
// (saturates at UINT64_MAX, as search_space::SearchSpace::raw_size() does).
uint64_t RawConfigs(const templates::KernelTemplate& tmpl) {
  uint64_t product = 1;
  for (const templates::Knob& k : tmpl.knobs()) {
    const uint64_t n = k.values.size();
    if (n != 0 && product > std::numeric_limits<uint64_t>::max() / n) {
      return std::numeric_limits<uint64_t>::max();
    }
    product *= n;
  }
  return product;
}

// "M, N, K" or "N, C, ..., SH=1, ...": the op's dims, optional ones with
// their default ("" for an op this process does not know).
std::string DimsText(absl::string_view op) {
  const templates::OpSpec* spec = templates::FindOp(op);
  if (spec == nullptr) return "";
  return absl::StrJoin(spec->dims, ", ",
                       [](std::string* out, const templates::DimSpec& d) {
                         absl::StrAppend(out, d.name);
                         if (d.default_value) {
                           absl::StrAppend(out, "=", *d.default_value);
                         }
                       });
}

// "16, 32, 64, 128"; a long list as its first and last values and a count.
std::string ValuesText(const std::vector<int64_t>& values) {
  constexpr size_t kShown = 12;
  if (values.size() <= kShown) return absl::StrJoin(values, ", ");
  return absl::StrCat(
      absl::StrJoin(values.begin(), values.begin() + kShown - 2, ", "),
      ", ..., ", absl::StrJoin(values.end() - 2, values.end(), ", "), " (",
      values.size(), " values)");
}

// Each template: a line naming it, then one aligned line per knob.
void PrintTemplates(
    const std::vector<const templates::KernelTemplate*>& templates) {
  size_t name_width = 0, knob_width = 0;
  for (const templates::KernelTemplate* t : templates) {
    name_width = std::max(name_width, t->name().size());
    for (const templates::Knob& k : t->knobs()) {
      knob_width = std::max(knob_width, k.name.size());
    }
  }
  bool first = true;
  for (const templates::KernelTemplate* t : templates) {
    if (!first) std::cout << "\n";
    first = false;
    std::cout << absl::StrFormat(
        "%-*s  op %s (%s), version %d, %d knobs, %d raw configs\n",
        static_cast<int>(name_width), t->name(), t->op(), DimsText(t->op()),
        t->version(), t->knobs().size(), RawConfigs(*t));
    for (const templates::Knob& k : t->knobs()) {
      std::cout << absl::StrFormat("  %-*s  %s\n", static_cast<int>(knob_width),
                                   k.name, ValuesText(k.values));
    }
  }
}

// The templates the options select, in registry order. Errors:
// INVALID_ARGUMENT for an unknown --op or a --template of another op;
// TemplateFromArg's.
absl::StatusOr<std::vector<const templates::KernelTemplate*>> Selected(
    const TemplatesOptions& o) {
  std::vector<const templates::KernelTemplate*> selected;
  if (!o.template_name.empty()) {
    absl::StatusOr<const templates::KernelTemplate*> t =
        TemplateFromArg(o.template_name);
    if (!t.ok()) return t.status();
    selected.push_back(*t);
  } else {
    selected = templates::AllTemplates();
  }
  if (o.op.empty()) return selected;
  if (templates::FindOp(o.op) == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(
        "unknown op '", o.op,
        "'; known ops: ", absl::StrJoin(templates::KnownOps(), ", ")));
  }
  if (!o.template_name.empty() && selected[0]->op() != o.op) {
    return absl::InvalidArgumentError(
        absl::StrCat("template ", selected[0]->name(), " runs op ",
                     selected[0]->op(), ", not ", o.op));
  }
  selected.erase(std::remove_if(selected.begin(), selected.end(),
                                [&](const templates::KernelTemplate* t) {
                                  return t->op() != o.op;
                                }),
                 selected.end());
  return selected;
}

}  // namespace

absl::StatusOr<const templates::KernelTemplate*> TemplateFromArg(
    const std::string& template_arg) {
  if (absl::EndsWith(template_arg, ".toml") ||
      absl::EndsWith(template_arg, ".json")) {
    return templates::RegisterSpecFile(template_arg);
  }
  // With a name, FindTemplate ignores the op; its NOT_FOUND lists them all.
  return templates::FindTemplate("", template_arg);
}

nlohmann::json TemplatesJson(
    const std::vector<const templates::KernelTemplate*>& templates) {
  nlohmann::json list = nlohmann::json::array();
  for (const templates::KernelTemplate* t : templates) {
    nlohmann::json dims = nlohmann::json::array();
    if (const templates::OpSpec* op = templates::FindOp(t->op())) {
      for (const templates::DimSpec& d : op->dims) {
        nlohmann::json dim = {{"name", std::string(d.name)}};
        if (d.default_value) dim["default"] = *d.default_value;
        dims.push_back(std::move(dim));
      }
    }
    nlohmann::json knobs = nlohmann::json::array();
    for (const templates::Knob& k : t->knobs()) {
      knobs.push_back(
          {{"name", k.name}, {"values", k.values}, {"size_like", k.size_like}});
    }
    list.push_back({{"name", std::string(t->name())},
                    {"op", std::string(t->op())},
                    {"version", t->version()},
                    {"dims", std::move(dims)},
                    {"knobs", std::move(knobs)},
                    {"raw_configs", RawConfigs(*t)}});
  }
  return {{"templates", std::move(list)}};
}

void AddTemplatesOptions(CLI::App* cmd, TemplatesOptions& o) {
  cmd->footer(
      "Examples:\n"
      "  tunefleet templates --op gemm\n"
      "  tunefleet templates --template my_kernel.toml --json");
  cmd->add_option("--op", o.op, "only the templates of this op");
  cmd->add_option("--template", o.template_name,
                  "only this template: a name, or a template spec file "
                  "(.toml/.json) to load and list");
  cmd->add_flag("--json", o.json,
                "print one JSON object on stdout: {\"templates\": [{name, op, "
                "version, dims, knobs: [{name, values, size_like}], "
                "raw_configs}]}");
}

int RunTemplates(const TemplatesOptions& o) {
  absl::StatusOr<std::vector<const templates::KernelTemplate*>> selected =
      Selected(o);
  if (!selected.ok()) return ReportError("templates", selected.status());
  if (o.json) {
    std::cout << JsonText(TemplatesJson(*selected)) << "\n";
  } else {
    PrintTemplates(*selected);
  }
  return kExitOk;
}

}  // namespace tunefleet::cli
