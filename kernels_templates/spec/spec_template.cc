#include "kernels_templates/spec/spec_template.h"

#include <toml++/toml.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
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

absl::StatusOr<std::string> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot read ", path));
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
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

// A list of strings (numbers are accepted as expressions).
absl::StatusOr<std::vector<std::string>> GetStrings(const json& j,
                                                    const char* key) {
  std::vector<std::string> out;
  if (!j.contains(key)) return out;
  if (!j[key].is_array()) {
    return Invalid(absl::StrCat("\"", key, "\" must be a list"));
  }
  for (const json& v : j[key]) {
    if (v.is_string()) {
      out.push_back(v.get<std::string>());
    } else if (v.is_number()) {
      out.push_back(v.dump());
    } else {
      return Invalid(
          absl::StrCat("\"", key, "\" holds a non-string: ", v.dump()));
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
  absl::StatusOr<std::string> spec = ReadFile(path);
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
                          : ReadFile((dir / source_name).string());
  if (!source.ok()) return source.status();
  return Parse(*spec, format, *source);
}

absl::StatusOr<std::unique_ptr<SpecTemplate>> SpecTemplate::Parse(
    const std::string& spec, const std::string& format,
    const std::string& source) {
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
  for (const char* geometry : {"global", "local"}) {
    absl::StatusOr<std::vector<std::string>> list = GetStrings(k, geometry);
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
  absl::StatusOr<std::vector<std::string>> args = GetStrings(k, "args");
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
  const json j = json::parse(json_text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return Invalid("not a JSON object");
  if (absl::Status s = GetString(j, "name", true, &name_); !s.ok()) return s;
  if (absl::Status s = GetString(j, "op", true, &op_); !s.ok()) return s;
  if (j.contains("version")) {
    if (!j["version"].is_number_integer())
      return Invalid("version: not an integer");
    version_ = j["version"].get<int>();
  }
  if (j.contains("rtol")) {
    if (!j["rtol"].is_number()) return Invalid("rtol: not a number");
    rtol_ = j["rtol"].get<double>();
  }
  // Dims: from the spec for a new op, from the op otherwise.
  absl::StatusOr<std::vector<std::string>> dims = GetStrings(j, "dims");
  if (!dims.ok()) return dims.status();
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
  for (const auto& [knob, values] : j["knobs"].items()) {
    Knob k{knob, {}, true};
    if (!values.is_array() || values.empty()) {
      return Invalid(absl::StrCat("knob ", knob, ": needs a list of values"));
    }
    for (const json& v : values) {
      if (!v.is_number_integer()) {
        return Invalid(
            absl::StrCat("knob ", knob, ": values must be integers"));
      }
      k.values.push_back(v.get<int64_t>());
      k.size_like = k.size_like && k.values.back() > 0;
    }
    std::sort(k.values.begin(), k.values.end());
    knobs_.push_back(std::move(k));
  }
  std::vector<std::string> variables = dims_;
  for (const Knob& k : knobs_) variables.push_back(k.name);
  for (const char* d : kDeviceVariables) variables.emplace_back(d);
  expressions_ = std::make_unique<ExpressionSet>(variables);

  absl::StatusOr<std::vector<std::string>> defines = GetStrings(
      j.contains("kernel") ? j["kernel"] : json::object(), "defines");
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
      GetStrings(j, "constraints");
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
  for (const json& b : j["buffers"]) {
    if (!b.is_object()) return Invalid("a buffer must be a table");
    BufferSpec spec;
    if (absl::Status s = GetString(b, "name", true, &spec.name); !s.ok())
      return s;
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
    out.push_back({b.name, static_cast<uint64_t>(std::max(n, 1.0)), b.output,
                   b.output ? 0 : seed++, "fp32"});
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
    l.global.push_back(static_cast<uint64_t>(
        std::max(1.0, expressions_->Evaluate(h, values).value_or(1))));
  }
  for (int h : k.local) {
    l.local.push_back(static_cast<uint64_t>(
        std::max(1.0, expressions_->Evaluate(h, values).value_or(1))));
  }
  for (const KernelSpec::Arg& a : k.args) {
    if (a.kind == KernelSpec::Arg::kBuffer) {
      l.args.push_back(ArgDesc::Buffer(a.buffer));
      continue;
    }
    const double v = expressions_->Evaluate(a.expression, values).value_or(0);
    l.args.push_back(a.kind == KernelSpec::Arg::kFloat
                         ? ArgDesc::Float(static_cast<float>(v))
                         : ArgDesc::Int(static_cast<int64_t>(v)));
  }
  if (config != nullptr) {
    for (const std::string& d : defines_) {
      absl::StrAppend(&l.build_options, l.build_options.empty() ? "" : " ",
                      "-D", d, "=", static_cast<int64_t>(values.at(d)));
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
