#include "kernels_templates/spec/spec_template.h"

#include <toml++/toml.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "base/files.h"
#include "base/json_limits.h"
#include "kernels_templates/common/template_support.h"
#include "kernels_templates/registry.h"
#include "nlohmann/json.hpp"

namespace tunefleet::templates {
namespace {

using nlohmann::json;

const char* const kDeviceVariables[] = {
    "max_work_group_size", "max_work_item_size0", "max_work_item_size1",
    "max_work_item_size2", "local_mem_bytes",     "max_mem_alloc_bytes",
    "compute_units"};

absl::Status Invalid(absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat("template spec: ", what));
}

// OK for an identifier [A-Za-z_][A-Za-z0-9_]* of 1..kMaxSpecNameLength
// characters; else INVALID_ARGUMENT naming `field`.
absl::Status CheckIdentifier(absl::string_view field, absl::string_view s) {
  bool ok = !s.empty() && s.size() <= kMaxSpecNameLength &&
            !absl::ascii_isdigit(static_cast<unsigned char>(s[0]));
  for (char c : s) {
    ok = ok && (absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '_');
  }
  if (ok) return absl::OkStatus();
  return Invalid(
      absl::StrCat(field, ": '", absl::CEscape(s.substr(0, kMaxSpecNameLength)),
                   s.size() > kMaxSpecNameLength ? "..." : "",
                   "' is not an identifier ([A-Za-z_][A-Za-z0-9_]*, at most ",
                   kMaxSpecNameLength, " characters)"));
}

// A size or count an expression gave, clamped into 1..2^53 (NaN: 1); the
// clamp keeps the conversion defined for any double.
uint64_t SizeFrom(double v) {
  constexpr double kMax = static_cast<double>(uint64_t{1} << 53);
  if (!(v >= 1)) return 1;
  return static_cast<uint64_t>(std::min(v, kMax));
}

// An integer argument an expression gave, clamped into the int32 range the
// kernel takes (NaN: 0).
int64_t IntFrom(double v) {
  constexpr double kMin = -2147483648.0, kMax = 2147483647.0;
  if (std::isnan(v)) return 0;
  return static_cast<int64_t>(std::clamp(v, kMin, kMax));
}

// A float argument an expression gave, clamped into float's range (a
// double beyond it would make the conversion undefined).
float FloatFrom(double v) {
  constexpr double kMax = std::numeric_limits<float>::max();
  if (std::isnan(v)) return 0;
  return static_cast<float>(std::clamp(v, -kMax, kMax));
}

// An integer of a spec (knob value, version) within +-limit. Errors:
// INVALID_ARGUMENT naming `field`.
absl::StatusOr<int64_t> BoundedInteger(const json& v, absl::string_view field,
                                       int64_t limit) {
  if (!v.is_number_integer()) {
    return Invalid(absl::StrCat(field, ": values must be integers"));
  }
  if (v.is_number_unsigned()
          ? v.get<uint64_t>() > static_cast<uint64_t>(limit)
          : (v.get<int64_t>() < -limit || v.get<int64_t>() > limit)) {
    return Invalid(
        absl::StrCat(field, ": ", v.dump(), " is outside +-", limit));
  }
  return v.get<int64_t>();
}

// A string field; `required` ones must be present.
absl::Status GetString(const json& j, const char* key, bool required,
                       std::string* out) {
  if (!j.contains(key)) {
    return required ? Invalid(absl::StrCat("missing field \"", key, "\""))
                    : absl::OkStatus();
  }
  if (!j[key].is_string()) {
    return Invalid(absl::StrCat("\"", key, "\" must be a string"));
  }
  *out = j[key].get<std::string>();
  return absl::OkStatus();
}

// A list of at most `max_items` strings (numbers are accepted as
// expressions).
absl::StatusOr<std::vector<std::string>> GetStrings(const json& j,
                                                    const char* key,
                                                    size_t max_items) {
  std::vector<std::string> out;
  if (!j.contains(key)) return out;
  if (!j[key].is_array()) {
    return Invalid(absl::StrCat("\"", key, "\" must be a list"));
  }
  if (j[key].size() > max_items) {
    return Invalid(absl::StrCat("\"", key, "\" has ", j[key].size(),
                                " items; at most ", max_items));
  }
  for (const json& v : j[key]) {
    if (v.is_string()) {
      out.push_back(v.get<std::string>());
    } else if (v.is_number()) {
      out.push_back(v.dump());
    } else {
      return Invalid(absl::StrCat("\"", key, "\" holds a non-string (",
                                  v.type_name(), ")"));
    }
  }
  return out;
}

// An expression field: a string or a number.
absl::StatusOr<std::string> GetExpression(const json& j, const char* key) {
  if (!j.contains(key)) return Invalid(absl::StrCat("missing \"", key, "\""));
  if (j[key].is_string()) return j[key].get<std::string>();
  if (j[key].is_number()) return j[key].dump();
  return Invalid(absl::StrCat("\"", key, "\" must be an expression"));
  // (Expression lengths are checked by ExpressionSet::Add.)
}

absl::StatusOr<std::string> TomlToJson(const std::string& text) {
  // Debian's toml++ is built with exceptions; they stop here.
  try {
    toml::table table = toml::parse(text);
    std::stringstream out;
    out << toml::json_formatter{table};
    return out.str();
  } catch (const toml::parse_error& e) {
    return Invalid(absl::StrCat("TOML error at line ",
                                static_cast<uint64_t>(e.source().begin.line),
                                ": ", std::string(e.description())));
  }
}

}  // namespace

absl::StatusOr<std::unique_ptr<SpecTemplate>> SpecTemplate::Load(
    const std::string& path) {
  absl::StatusOr<std::string> spec = base::ReadWholeFile(path);
  if (!spec.ok()) return spec.status();
  const std::string format = absl::EndsWith(path, ".json") ? "json" : "toml";
  std::string json_text = *spec;
  if (format == "toml") {
    absl::StatusOr<std::string> converted = TomlToJson(*spec);
    if (!converted.ok()) return converted.status();
    json_text = *converted;
  }
  const json j = json::parse(json_text, nullptr, false);
  std::string source_name;
  if (!j.is_discarded() && j.is_object()) {
    if (absl::Status s = GetString(j, "source", true, &source_name); !s.ok()) {
      return s;
    }
  }
  const std::filesystem::path dir = std::filesystem::path(path).parent_path();
  absl::StatusOr<std::string> source =
      source_name.empty() ? std::string()
                          : base::ReadWholeFile((dir / source_name).string());
  if (!source.ok()) return source.status();
  return Parse(*spec, format, *source);
}

absl::StatusOr<std::unique_ptr<SpecTemplate>> SpecTemplate::Parse(
    const std::string& spec, const std::string& format,
    const std::string& source) {
  if (spec.size() > kMaxSpecTextBytes) {
    return Invalid(absl::StrCat("the spec is ", spec.size(), " bytes; at most ",
                                kMaxSpecTextBytes));
  }
  if (source.size() > kMaxSpecSourceBytes) {
    return Invalid(absl::StrCat("the OpenCL source is ", source.size(),
                                " bytes; at most ", kMaxSpecSourceBytes));
  }
  auto t = std::make_unique<SpecTemplate>(PrivateTag{});
  t->spec_text_ = spec;
  t->spec_format_ = format;
  t->source_ = source;
  std::string json_text = spec;
  if (format == "toml") {
    absl::StatusOr<std::string> converted = TomlToJson(spec);
    if (!converted.ok()) return converted.status();
    json_text = *converted;
  } else if (format != "json") {
    return Invalid(absl::StrCat("unknown format '", format, "'"));
  }
  if (absl::Status s = t->ParseSpec(json_text); !s.ok()) return s;
  if (t->source_.empty()) return Invalid("the OpenCL source is empty");
  return t;
}

absl::StatusOr<SpecTemplate::KernelSpec> SpecTemplate::ParseKernel(
    const void* json_ptr, const char* field) {
  const json& root = *static_cast<const json*>(json_ptr);
  if (!root.contains(field) || !root[field].is_object()) {
    return Invalid(absl::StrCat("missing table \"", field, "\""));
  }
  const json& k = root[field];
  KernelSpec out;
  if (absl::Status s = GetString(k, "name", true, &out.name); !s.ok()) return s;
  if (absl::Status s = CheckIdentifier(absl::StrCat(field, ".name"), out.name);
      !s.ok()) {
    return s;
  }
  for (const char* geometry : {"global", "local"}) {
    absl::StatusOr<std::vector<std::string>> list = GetStrings(k, geometry, 3);
    if (!list.ok()) return list.status();
    for (const std::string& e : *list) {
      absl::StatusOr<int> h =
          expressions_->Add(e, absl::StrCat(field, ".", geometry));
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
  absl::StatusOr<std::vector<std::string>> args =
      GetStrings(k, "args", kMaxSpecArgs);
  if (!args.ok()) return args.status();
  for (const std::string& a : *args) {
    const bool is_buffer =
        std::any_of(buffers_.begin(), buffers_.end(),
                    [&](const BufferSpec& b) { return b.name == a; });
    if (is_buffer) {
      out.args.push_back({KernelSpec::Arg::kBuffer, a, -1});
      continue;
    }
    absl::string_view text = a;
    const bool is_float = absl::ConsumePrefix(&text, "float:");
    absl::StatusOr<int> h =
        expressions_->Add(std::string(text), absl::StrCat(field, ".args"));
    if (!h.ok()) return h.status();
    out.args.push_back(
        {is_float ? KernelSpec::Arg::kFloat : KernelSpec::Arg::kInt, "", *h});
  }
  return out;
}

absl::Status SpecTemplate::ParseSpec(const std::string& json_text) {
  if (base::JsonDepth(json_text) > kMaxSpecJsonDepth) {
    return Invalid(
        absl::StrCat("nested deeper than ", kMaxSpecJsonDepth, " levels"));
  }
  const json j = json::parse(json_text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return Invalid("not a JSON object");
  if (absl::Status s = GetString(j, "name", true, &name_); !s.ok()) return s;
  if (absl::Status s = CheckIdentifier("name", name_); !s.ok()) return s;
  if (absl::Status s = GetString(j, "op", true, &op_); !s.ok()) return s;
  if (absl::Status s = CheckIdentifier("op", op_); !s.ok()) return s;
  if (j.contains("version")) {
    absl::StatusOr<int64_t> version =
        BoundedInteger(j["version"], "version", 1000000);
    if (!version.ok()) return version.status();
    version_ = static_cast<int>(*version);
  }
  if (j.contains("rtol")) {
    if (!j["rtol"].is_number()) return Invalid("rtol: not a number");
    rtol_ = j["rtol"].get<double>();
    if (!(rtol_ > 0 && rtol_ <= 1)) {
      return Invalid("rtol: must be > 0 and <= 1");
    }
  }
  // Dims: from the spec for a new op, from the op otherwise.
  absl::StatusOr<std::vector<std::string>> dims =
      GetStrings(j, "dims", kMaxSpecDims);
  if (!dims.ok()) return dims.status();
  for (size_t i = 0; i < dims->size(); ++i) {
    const std::string field = absl::StrCat("dims[", i, "]");
    if (absl::Status s = CheckIdentifier(field, (*dims)[i]); !s.ok()) return s;
    if (std::find(dims->begin(), dims->begin() + i, (*dims)[i]) !=
        dims->begin() + i) {
      return Invalid(absl::StrCat(field, ": ", (*dims)[i], " is repeated"));
    }
  }
  if (const OpSpec* known = FindOp(op_)) {
    std::vector<std::string> known_dims;
    for (const DimSpec& d : known->dims) known_dims.emplace_back(d.name);
    if (!dims->empty() && *dims != known_dims) {
      return Invalid(absl::StrCat("op ", op_, " exists with dims ",
                                  absl::StrJoin(known_dims, ",")));
    }
    dims_ = known_dims;
  } else {
    if (dims->empty()) {
      return Invalid(absl::StrCat("op ", op_, " is new: give its \"dims\""));
    }
    dims_ = *dims;
  }
  // Knobs, in the order the spec gives them.
  if (!j.contains("knobs") || !j["knobs"].is_object() || j["knobs"].empty()) {
    return Invalid("missing table \"knobs\" (name = [values])");
  }
  if (j["knobs"].size() > kMaxSpecKnobs) {
    return Invalid(absl::StrCat("knobs: ", j["knobs"].size(),
                                " knobs; at most ", kMaxSpecKnobs));
  }
  for (const auto& [knob, values] : j["knobs"].items()) {
    const std::string field = absl::StrCat("knob ", knob);
    if (absl::Status s = CheckIdentifier("knobs", knob); !s.ok()) return s;
    if (std::find(dims_.begin(), dims_.end(), knob) != dims_.end() ||
        std::find(std::begin(kDeviceVariables), std::end(kDeviceVariables),
                  knob) != std::end(kDeviceVariables)) {
      return Invalid(
          absl::StrCat(field, ": the name is taken by a dim or device limit"));
    }
    Knob k{knob, {}, true};
    if (!values.is_array() || values.empty()) {
      return Invalid(absl::StrCat(field, ": needs a list of values"));
    }
    if (values.size() > kMaxSpecKnobValues) {
      return Invalid(absl::StrCat(field, ": ", values.size(),
                                  " values; at most ", kMaxSpecKnobValues));
    }
    for (const json& v : values) {
      absl::StatusOr<int64_t> value =
          BoundedInteger(v, field, kMaxSpecKnobValue);
      if (!value.ok()) return value.status();
      k.values.push_back(*value);
      k.size_like = k.size_like && k.values.back() > 0;
    }
    std::sort(k.values.begin(), k.values.end());
    // A value listed twice would make two indices name one config.
    k.values.erase(std::unique(k.values.begin(), k.values.end()),
                   k.values.end());
    knobs_.push_back(std::move(k));
  }
  std::vector<std::string> variables = dims_;
  for (const Knob& k : knobs_) variables.push_back(k.name);
  for (const char* d : kDeviceVariables) variables.emplace_back(d);
  expressions_ = std::make_unique<ExpressionSet>(variables);

  absl::StatusOr<std::vector<std::string>> defines =
      GetStrings(j.contains("kernel") ? j["kernel"] : json::object(), "defines",
                 kMaxSpecDims + kMaxSpecKnobs);
  if (!defines.ok()) return defines.status();
  defines_ = *defines;
  if (defines_.empty()) {
    for (const Knob& k : knobs_) defines_.push_back(k.name);
  }
  for (const std::string& d : defines_) {
    if (std::find(variables.begin(), variables.end(), d) == variables.end() ||
        std::find(std::begin(kDeviceVariables), std::end(kDeviceVariables),
                  d) != std::end(kDeviceVariables)) {
      return Invalid(
          absl::StrCat("kernel.defines: '", d, "' is not a knob or dim"));
    }
  }
  absl::StatusOr<std::vector<std::string>> constraints =
      GetStrings(j, "constraints", kMaxSpecConstraints);
  if (!constraints.ok()) return constraints.status();
  for (const std::string& c : *constraints) {
    absl::StatusOr<int> h = expressions_->Add(c, "constraints");
    if (!h.ok()) return h.status();
    constraints_.push_back(*h);
    constraint_texts_.push_back(c);
  }
  if (!j.contains("buffers") || !j["buffers"].is_array() ||
      j["buffers"].empty()) {
    return Invalid("missing [[buffers]] (name, elements, output)");
  }
  if (j["buffers"].size() > kMaxSpecBuffers) {
    return Invalid(absl::StrCat("buffers: ", j["buffers"].size(),
                                " buffers; at most ", kMaxSpecBuffers));
  }
  for (const json& b : j["buffers"]) {
    if (!b.is_object()) return Invalid("a buffer must be a table");
    BufferSpec spec;
    if (absl::Status s = GetString(b, "name", true, &spec.name); !s.ok())
      return s;
    if (absl::Status s = CheckIdentifier("buffers.name", spec.name); !s.ok())
      return s;
    if (std::any_of(buffers_.begin(), buffers_.end(),
                    [&](const BufferSpec& o) { return o.name == spec.name; })) {
      return Invalid(absl::StrCat("buffer ", spec.name, " is repeated"));
    }
    absl::StatusOr<std::string> elements = GetExpression(b, "elements");
    if (!elements.ok()) return elements.status();
    absl::StatusOr<int> h =
        expressions_->Add(*elements, absl::StrCat("buffer ", spec.name));
    if (!h.ok()) return h.status();
    spec.elements = *h;
    spec.output = b.contains("output") && b["output"].is_boolean() &&
                  b["output"].get<bool>();
    buffers_.push_back(spec);
  }
  if (std::none_of(buffers_.begin(), buffers_.end(),
                   [](const BufferSpec& b) { return b.output; })) {
    return Invalid("no buffer has output = true: nothing to verify");
  }
  for (const char* field : {"flops", "bytes"}) {
    if (!j.contains(field) && field[0] == 'b') continue;
    absl::StatusOr<std::string> e = GetExpression(j, field);
    if (!e.ok()) return e.status();
    absl::StatusOr<int> h = expressions_->Add(*e, field);
    if (!h.ok()) return h.status();
    (field[0] == 'f' ? flops_ : bytes_) = *h;
  }
  absl::StatusOr<KernelSpec> kernel = ParseKernel(&j, "kernel");
  if (!kernel.ok()) return kernel.status();
  kernel_ = *std::move(kernel);
  absl::StatusOr<KernelSpec> reference = ParseKernel(&j, "reference");
  if (!reference.ok()) return reference.status();
  reference_ = *std::move(reference);
  return absl::OkStatus();
}

OpSpec SpecTemplate::Op() const {
  OpSpec spec;
  spec.name = op_;
  for (const std::string& d : dims_) spec.dims.push_back({d, {}});
  spec.dtypes = {"fp32"};
  return spec;
}

std::map<std::string, double> SpecTemplate::Values(
    const KnobValues* config, const Workload& w,
    const DeviceLimits* limits) const {
  std::map<std::string, double> v;
  for (const Dim& d : w.dims()) v[d.name] = static_cast<double>(d.value);
  if (config != nullptr) {
    for (size_t i = 0; i < knobs_.size() && i < config->size(); ++i) {
      v[knobs_[i].name] = static_cast<double>((*config)[i]);
    }
  }
  if (limits != nullptr) {
    v["max_work_group_size"] = static_cast<double>(limits->max_work_group_size);
    for (int d = 0; d < 3; ++d) {
      v[absl::StrCat("max_work_item_size", d)] =
          static_cast<double>(limits->max_work_item_sizes[d]);
    }
    v["local_mem_bytes"] = static_cast<double>(limits->local_mem_bytes);
    v["max_mem_alloc_bytes"] = static_cast<double>(limits->max_mem_alloc_bytes);
    v["compute_units"] = limits->compute_units;
  }
  return v;
}

absl::Status SpecTemplate::CheckWorkload(const Workload& w,
                                         const DeviceLimits& limits) const {
  if (w.op() != op_) {
    return absl::InvalidArgumentError(
        absl::StrCat("template ", name_, " runs ", op_, ", not ", w.op()));
  }
  const std::map<std::string, double> values = Values(nullptr, w, &limits);
  for (const BufferSpec& b : buffers_) {
    absl::StatusOr<double> n = expressions_->Evaluate(b.elements, values);
    if (!n.ok()) return n.status();
    if (*n < 1 || *n * 4 > static_cast<double>(limits.max_mem_alloc_bytes > 0
                                                   ? limits.max_mem_alloc_bytes
                                                   : uint64_t{1} << 40)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "buffer ", b.name, " of ", w.Canonical(), " has ", *n,
          " elements: must be >= 1 and fit the device's max allocation"));
    }
  }
  return absl::OkStatus();
}

absl::Status SpecTemplate::CheckConfig(const KnobValues& config,
                                       const Workload& w,
                                       const DeviceLimits& limits) const {
  if (absl::Status s = CheckConfigSize(*this, config); !s.ok()) return s;
  const std::map<std::string, double> values = Values(&config, w, &limits);
  for (size_t c = 0; c < constraints_.size(); ++c) {
    absl::StatusOr<double> ok = expressions_->Evaluate(constraints_[c], values);
    if (!ok.ok() || *ok == 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          ConfigString(config), ": violates '", constraint_texts_[c], "'"));
    }
  }
  // OpenCL 1.2 launch rules: local sizes divide global ones and fit the
  // device.
  absl::StatusOr<std::vector<double>> global =
      expressions_->Evaluate(kernel_.global, values);
  absl::StatusOr<std::vector<double>> local =
      expressions_->Evaluate(kernel_.local, values);
  if (!global.ok()) return global.status();
  if (!local.ok()) return local.status();
  double group = 1;
  for (size_t d = 0; d < local->size(); ++d) {
    const double l = (*local)[d], g = (*global)[d];
    if (l < 1 || g < 1 || std::fmod(g, l) != 0 ||
        l > static_cast<double>(limits.max_work_item_sizes[d])) {
      return absl::InvalidArgumentError(absl::StrCat(
          ConfigString(config), ": local size ", l, " does not divide global ",
          g, " or exceeds the device's work-item size"));
    }
    group *= l;
  }
  if (group > static_cast<double>(limits.max_work_group_size)) {
    return absl::InvalidArgumentError(
        absl::StrCat(ConfigString(config), ": work-group of ", group,
                     " exceeds the device's ", limits.max_work_group_size));
  }
  return absl::OkStatus();
}

std::vector<BufferDesc> SpecTemplate::Buffers(const Workload& w) const {
  const std::map<std::string, double> values = Values(nullptr, w, nullptr);
  std::vector<BufferDesc> out;
  uint32_t seed = 1;
  for (const BufferSpec& b : buffers_) {
    const double n = expressions_->Evaluate(b.elements, values).value_or(1);
    out.push_back(
        {b.name, SizeFrom(n), b.output, b.output ? 0 : seed++, "fp32"});
  }
  return out;
}

LaunchDesc SpecTemplate::MakeLaunch(const KernelSpec& k,
                                    const KnobValues* config,
                                    const Workload& w) const {
  const std::map<std::string, double> values = Values(config, w, nullptr);
  LaunchDesc l;
  l.source = source_;
  l.kernel_name = k.name;
  for (int h : k.global) {
    l.global.push_back(SizeFrom(expressions_->Evaluate(h, values).value_or(1)));
  }
  for (int h : k.local) {
    l.local.push_back(SizeFrom(expressions_->Evaluate(h, values).value_or(1)));
  }
  for (const KernelSpec::Arg& a : k.args) {
    if (a.kind == KernelSpec::Arg::kBuffer) {
      l.args.push_back(ArgDesc::Buffer(a.buffer));
      continue;
    }
    const double v = expressions_->Evaluate(a.expression, values).value_or(0);
    l.args.push_back(a.kind == KernelSpec::Arg::kFloat
                         ? ArgDesc::Float(FloatFrom(v))
                         : ArgDesc::Int(IntFrom(v)));
  }
  if (config != nullptr) {
    for (const std::string& d : defines_) {
      auto it = values.find(d);
      absl::StrAppend(&l.build_options, l.build_options.empty() ? "" : " ",
                      "-D", d, "=",
                      IntFrom(it == values.end() ? 0 : it->second));
    }
  }
  return l;
}

LaunchDesc SpecTemplate::Launch(const KnobValues& config,
                                const Workload& w) const {
  return MakeLaunch(kernel_, &config, w);
}

LaunchDesc SpecTemplate::ReferenceLaunch(const Workload& w) const {
  // The reference often shares the source, which may use the knobs'
  // defines: build it with each knob's first value.
  KnobValues first;
  for (const Knob& k : knobs_) first.push_back(k.values.front());
  return MakeLaunch(reference_, &first, w);
}

double SpecTemplate::Flops(const Workload& w) const {
  return expressions_->Evaluate(flops_, Values(nullptr, w, nullptr))
      .value_or(0);
}

double SpecTemplate::Bytes(const Workload& w) const {
  if (bytes_ < 0) return 0;
  return expressions_->Evaluate(bytes_, Values(nullptr, w, nullptr))
      .value_or(0);
}

}  // namespace tunefleet::templates
