// ParseSpecModel: the template's identity, its variables (dims, attributes,
// knobs, lets) and their expressions; spec_parse_launch.cc reads the rest.
#include "kernels_templates/spec/spec_parse.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "kernels_templates/spec/spec_template.h"

namespace tunefleet::templates {
namespace {

using spec_json::BoundedInteger;
using spec_json::GetBool;
using spec_json::GetString;
using spec_json::GetStrings;
using spec_json::GetTables;
using spec_json::Invalid;
using spec_json::json;

absl::Status CheckName(absl::string_view field, absl::string_view s) {
  return spec_json::CheckIdentifier(field, s, kMaxSpecNameLength);
}

// The variables that are not the spec's own: dtype values and limits.
bool IsBuiltinVariable(absl::string_view name) {
  return name == "fp16" || name == "element_bytes" ||
         std::find(std::begin(kSpecLimitNames), std::end(kSpecLimitNames),
                   name) != std::end(kSpecLimitNames);
}

absl::Status ParseIdentity(const json& j, SpecModel& m) {
  if (absl::Status s = GetString(j, "name", true, &m.name); !s.ok()) return s;
  if (absl::Status s = CheckName("name", m.name); !s.ok()) return s;
  if (absl::Status s = GetString(j, "op", true, &m.op); !s.ok()) return s;
  if (absl::Status s = CheckName("op", m.op); !s.ok()) return s;
  if (j.contains("version")) {
    absl::StatusOr<int64_t> version =
        BoundedInteger(j["version"], "version", 1000000);
    if (!version.ok()) return version.status();
    m.version = static_cast<int>(*version);
  }
  if (j.contains("rtol")) {
    if (!j["rtol"].is_number()) return Invalid("rtol: not a number");
    m.rtol = j["rtol"].get<double>();
    if (!(m.rtol > 0 && m.rtol <= 1)) {
      return Invalid("rtol: must be > 0 and <= 1");
    }
  }
  for (auto [key, out] :
       {std::pair{"launch_checks", &m.launch_checks},
        {"config_rechecks_workload", &m.config_rechecks_workload},
        {"shape_generic", &m.shape_generic}}) {
    absl::StatusOr<bool> flag = GetBool(j, key, *out);
    if (!flag.ok()) return flag.status();
    *out = *flag;
  }
  return absl::OkStatus();
}

// Dims: from the spec for a new op, from the op otherwise; dtypes: those
// the spec names, each one of the op's.
absl::Status ParseDims(const json& j, SpecModel& m) {
  absl::StatusOr<std::vector<std::string>> dims =
      GetStrings(j, "dims", kMaxSpecDims);
  if (!dims.ok()) return dims.status();
  for (size_t i = 0; i < dims->size(); ++i) {
    const std::string field = absl::StrCat("dims[", i, "]");
    if (absl::Status s = CheckName(field, (*dims)[i]); !s.ok()) return s;
    if (std::find(dims->begin(), dims->begin() + i, (*dims)[i]) !=
        dims->begin() + i) {
      return Invalid(absl::StrCat(field, ": ", (*dims)[i], " is repeated"));
    }
  }
  const OpSpec* known = FindOp(m.op);
  std::vector<Dtype> op_dtypes = {Dtype::kFp32};
  if (known != nullptr) {
    std::vector<std::string> known_dims;
    for (const DimSpec& d : known->dims) known_dims.emplace_back(d.name);
    if (!dims->empty() && *dims != known_dims) {
      return Invalid(absl::StrCat("op ", m.op, " exists with dims ",
                                  absl::StrJoin(known_dims, ",")));
    }
    m.dims = known_dims;
    op_dtypes = known->dtypes;
  } else {
    if (dims->empty()) {
      return Invalid(absl::StrCat("op ", m.op, " is new: give its \"dims\""));
    }
    m.dims = *dims;
  }
  absl::StatusOr<std::vector<std::string>> dtypes = GetStrings(j, "dtypes", 4);
  if (!dtypes.ok()) return dtypes.status();
  for (const std::string& d : *dtypes) {
    const absl::StatusOr<Dtype> dtype = ParseDtype(d);
    if (!dtype.ok() || std::find(op_dtypes.begin(), op_dtypes.end(), *dtype) ==
                           op_dtypes.end()) {
      return Invalid(absl::StrCat(
          "dtypes: op ", m.op, " has no dtype '", d, "' (it has ",
          absl::StrJoin(op_dtypes, ", ",
                        [](std::string* out, Dtype t) {
                          absl::StrAppend(out, DtypeName(t));
                        }),
          ")"));
    }
    m.dtypes.push_back(*dtype);
  }
  return absl::OkStatus();
}

// One attribute's numbers: every value of the op's attribute, no other.
absl::StatusOr<SpecAttr> ParseAttr(const std::string& name, const json& values,
                                   const AttrSpec& op_attr) {
  const std::string field = absl::StrCat("attrs.", name);
  if (!values.is_object() || values.size() != op_attr.values.size()) {
    return Invalid(absl::StrCat(field, ": give a number for each of ",
                                absl::StrJoin(op_attr.values, ", ")));
  }
  SpecAttr attr{name, {}};
  for (absl::string_view v : op_attr.values) {
    const std::string key(v);
    if (!values.contains(key) || !values[key].is_number() ||
        !std::isfinite(values[key].get<double>())) {
      return Invalid(absl::StrCat(field, ": value '", key, "' needs a number"));
    }
    attr.values.emplace_back(key, values[key].get<double>());
  }
  return attr;
}

absl::Status ParseAttrs(const json& j, SpecModel& m) {
  if (!j.contains("attrs")) return absl::OkStatus();
  if (!j["attrs"].is_object() || j["attrs"].size() > kMaxSpecAttrs) {
    return Invalid(absl::StrCat("attrs: a table of at most ", kMaxSpecAttrs,
                                " attributes"));
  }
  const OpSpec* op = FindOp(m.op);
  for (const auto& item : j["attrs"].items()) {
    const std::string name = item.key();
    const AttrSpec* op_attr = nullptr;
    for (size_t a = 0; op != nullptr && a < op->attrs.size(); ++a) {
      if (op->attrs[a].name == name) op_attr = &op->attrs[a];
    }
    if (op_attr == nullptr) {
      return Invalid(
          absl::StrCat("attrs: op ", m.op, " has no attribute '", name, "'"));
    }
    absl::StatusOr<SpecAttr> attr = ParseAttr(name, item.value(), *op_attr);
    if (!attr.ok()) return attr.status();
    m.attrs.push_back(*std::move(attr));
  }
  return absl::OkStatus();
}

// OK when `name` is free for a knob or let: no dim, attribute, device
// limit, knob or let before it has it.
absl::Status CheckFree(const std::string& field, const std::string& name,
                       const SpecModel& m) {
  const bool dim_or_limit =
      std::find(m.dims.begin(), m.dims.end(), name) != m.dims.end() ||
      IsBuiltinVariable(name);
  const bool other =
      std::any_of(m.attrs.begin(), m.attrs.end(),
                  [&](const SpecAttr& a) { return a.name == name; }) ||
      std::any_of(m.knobs.begin(), m.knobs.end(),
                  [&](const Knob& k) { return k.name == name; }) ||
      std::any_of(m.lets.begin(), m.lets.end(),
                  [&](const SpecValue& v) { return v.name == name; });
  if (dim_or_limit) {
    return Invalid(
        absl::StrCat(field, ": the name is taken by a dim or device limit"));
  }
  if (other) {
    return Invalid(absl::StrCat(field, ": the name is taken"));
  }
  return absl::OkStatus();
}

absl::StatusOr<Knob> ParseKnob(const std::string& name, const json& values,
                               const SpecModel& m) {
  const std::string field = absl::StrCat("knob ", name);
  if (absl::Status s = CheckName("knobs", name); !s.ok()) return s;
  if (absl::Status s = CheckFree(field, name, m); !s.ok()) return s;
  Knob k{name, {}, true};
  if (!values.is_array() || values.empty()) {
    return Invalid(absl::StrCat(field, ": needs a list of values"));
  }
  if (values.size() > kMaxSpecKnobValues) {
    return Invalid(absl::StrCat(field, ": ", values.size(), " values; at most ",
                                kMaxSpecKnobValues));
  }
  for (const json& v : values) {
    absl::StatusOr<int64_t> value = BoundedInteger(v, field, kMaxSpecKnobValue);
    if (!value.ok()) return value.status();
    k.values.push_back(*value);
    k.size_like = k.size_like && k.values.back() > 0;
  }
  std::sort(k.values.begin(), k.values.end());
  // A value listed twice would make two indices name one config.
  k.values.erase(std::unique(k.values.begin(), k.values.end()), k.values.end());
  return k;
}

// Knobs: a table (in name order) or a list of {name, values} (in order).
absl::Status ParseKnobs(const json& j, SpecModel& m) {
  const bool listed = j.contains("knobs") && j["knobs"].is_array();
  if (!j.contains("knobs") || !(j["knobs"].is_object() || listed) ||
      j["knobs"].empty()) {
    return Invalid("missing table \"knobs\" (name = [values])");
  }
  if (j["knobs"].size() > kMaxSpecKnobs) {
    return Invalid(absl::StrCat("knobs: ", j["knobs"].size(),
                                " knobs; at most ", kMaxSpecKnobs));
  }
  std::vector<std::pair<std::string, json>> items;
  if (listed) {
    for (const json& k : j["knobs"]) {
      if (!k.is_object() || !k.contains("name") || !k["name"].is_string()) {
        return Invalid("knobs: each item needs a name and values");
      }
      items.emplace_back(k["name"].get<std::string>(),
                         k.contains("values") ? k["values"] : json());
    }
  } else {
    for (const auto& [name, values] : j["knobs"].items()) {
      items.emplace_back(name, values);
    }
  }
  for (const auto& [name, values] : items) {
    absl::StatusOr<Knob> k = ParseKnob(name, values, m);
    if (!k.ok()) return k.status();
    m.knobs.push_back(*std::move(k));
  }
  return absl::OkStatus();
}

// The names of the lets (their expressions need every name first).
absl::Status ParseLetNames(const json& j, SpecModel& m) {
  absl::StatusOr<std::vector<json>> lets = GetTables(j, "let", kMaxSpecLets);
  if (!lets.ok()) return lets.status();
  for (const json& let : *lets) {
    std::string name;
    if (absl::Status s = GetString(let, "name", true, &name); !s.ok()) return s;
    if (absl::Status s = CheckName("let", name); !s.ok()) return s;
    if (absl::Status s = CheckFree(absl::StrCat("let ", name), name, m);
        !s.ok()) {
      return s;
    }
    m.lets.push_back({name, -1});
  }
  return absl::OkStatus();
}

absl::Status MakeExpressions(SpecModel& m) {
  m.slots = {static_cast<int>(m.dims.size()), static_cast<int>(m.attrs.size()),
             static_cast<int>(m.knobs.size()), static_cast<int>(m.lets.size())};
  std::vector<std::string> variables = m.dims;
  for (const SpecAttr& a : m.attrs) variables.push_back(a.name);
  variables.emplace_back("fp16");
  variables.emplace_back("element_bytes");
  for (const Knob& k : m.knobs) variables.push_back(k.name);
  for (const char* limit : kSpecLimitNames) variables.emplace_back(limit);
  for (const SpecValue& v : m.lets) variables.push_back(v.name);
  absl::StatusOr<std::unique_ptr<ExpressionSet>> set =
      ExpressionSet::Create(std::move(variables));
  if (!set.ok()) return Invalid(set.status().message());
  m.expressions = *std::move(set);
  return absl::OkStatus();
}

// Compiles the lets; each may read only lets before it.
absl::Status ParseLets(const json& j, SpecModel& m) {
  for (size_t i = 0; i < m.lets.size(); ++i) {
    SpecValue& let = m.lets[i];
    const std::string what = absl::StrCat("let ", let.name);
    absl::StatusOr<std::string> text =
        spec_json::GetExpression(j["let"][i], "value");
    if (!text.ok())
      return Invalid(absl::StrCat(what, ": ", text.status().message()));
    absl::StatusOr<int> h = m.expressions->Add(*text, what);
    if (!h.ok()) return h.status();
    let.expression = *h;
    for (int slot : m.expressions->Reads(*h)) {
      if (slot >= m.slots.let(static_cast<int>(i))) {
        return Invalid(absl::StrCat(what, ": reads ",
                                    m.expressions->variables()[slot],
                                    ", which is not defined before it"));
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<SpecModel> ParseSpecModel(const json& j,
                                         const std::string& source,
                                         const std::string& reference_source) {
  SpecModel m;
  for (auto step :
       {ParseIdentity, ParseDims, ParseAttrs, ParseKnobs, ParseLetNames}) {
    if (absl::Status s = step(j, m); !s.ok()) return s;
  }
  if (absl::Status s = MakeExpressions(m); !s.ok()) return s;
  if (absl::Status s = ParseLets(j, m); !s.ok()) return s;
  for (auto step : {ParseSpecChecks, ParseSpecBuffers, ParseSpecValues,
                    ParseSpecImages, ParseSpecLibrary}) {
    if (absl::Status s = step(j, m); !s.ok()) return s;
  }
  if (absl::Status s = ParseSpecKernels(j, source, reference_source, m);
      !s.ok()) {
    return s;
  }
  return m;
}

}  // namespace tunefleet::templates
