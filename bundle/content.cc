#include "bundle/content.h"

#include <limits>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "base/json_limits.h"
#include "base/status_macros.h"
#include "contract/json.h"
#include "google/protobuf/util/json_util.h"
#include "nlohmann/json.hpp"

namespace tunefleet::bundle {
namespace {

using nlohmann::json;

constexpr char kFormat[] = "tunefleet-records";
// Deep enough for a DeviceInfo inside a device inside the content.
constexpr int kMaxDepth = 16;

// A field reader that remembers the first error and its path.
class Reader {
 public:
  // The member `key` of object `o` (at `path`); null with an error if
  // missing.
  const json* Member(const json& o, const std::string& path, const char* key) {
    if (!o.is_object()) {
      Fail(path.empty() ? "the top level" : path, "is not an object");
      return nullptr;
    }
    auto it = o.find(key);
    if (it == o.end()) {
      Fail(absl::StrCat(path, path.empty() ? "" : ".", key), "is missing");
      return nullptr;
    }
    return &*it;
  }
  std::string Text(const json& o, const std::string& path, const char* key) {
    const json* v =
        OfType(Member(o, path, key), path, key, &json::is_string, "a string");
    return v == nullptr ? "" : v->get<std::string>();
  }
  int64_t Int(const json& o, const std::string& path, const char* key) {
    const json* v = OfType(Member(o, path, key), path, key,
                           &json::is_number_integer, "an integer");
    return v == nullptr ? 0 : v->get<int64_t>();
  }
  uint64_t Uint(const json& o, const std::string& path, const char* key) {
    const json* v = OfType(Member(o, path, key), path, key,
                           &json::is_number_unsigned, "an unsigned integer");
    return v == nullptr ? 0 : v->get<uint64_t>();
  }
  double Number(const json& o, const std::string& path, const char* key) {
    const json* v = Member(o, path, key);
    // NaN and infinities are written as null (JSON has no such numbers).
    if (v != nullptr && v->is_null()) {
      return std::numeric_limits<double>::quiet_NaN();
    }
    v = OfType(v, path, key, &json::is_number, "a number");
    return v == nullptr ? 0 : v->get<double>();
  }
  // The array member `key`; an empty one with an error if it is not one.
  const json& Array(const json& o, const std::string& path, const char* key) {
    static const json kEmpty = json::array();
    const json* v =
        OfType(Member(o, path, key), path, key, &json::is_array, "an array");
    return v == nullptr ? kEmpty : *v;
  }
  // Calls `read(element, element_path)` on each element of the top-level
  // array member `key` (element_path "key[i]"), in order, until the first
  // error; none (with Array's error) if `key` is not an array.
  template <typename Read>
  void ForEachElement(const json& root, const char* key, Read read) {
    const json& elements = Array(root, "", key);
    for (size_t i = 0; i < elements.size() && status_.ok(); ++i) {
      read(elements[i], absl::StrCat(key, "[", i, "]"));
    }
  }
  void Fail(const std::string& path, absl::string_view what) {
    if (status_.ok()) {
      status_ = absl::InvalidArgumentError(
          absl::StrCat("bundle content: ", path, " ", what));
    }
  }
  static std::string Path(const std::string& path, const char* key) {
    return absl::StrCat(path, path.empty() ? "" : ".", key);
  }
  const absl::Status& status() const { return status_; }

 private:
  // `v` (the member `key` of the object at `path`, as Member found it) where
  // `is_type` holds of it. Null where `v` is (Member's error) or where it is
  // of another type: then the error "<path>.<key> is not <a_type>".
  const json* OfType(const json* v, const std::string& path, const char* key,
                     bool (json::*is_type)() const noexcept,
                     absl::string_view a_type) {
    if (v == nullptr) return nullptr;
    if (!(v->*is_type)()) {
      Fail(Path(path, key), absl::StrCat("is not ", a_type));
      return nullptr;
    }
    return v;
  }

  absl::Status status_;
};

json DeviceJson(const store::ExchangeDevice& d) {
  return json{{"device_key", d.device_key},
              {"info", contract::ContractJson(d.info)},
              {"first_seen_unix_ms", d.first_seen_ms},
              {"last_seen_unix_ms", d.last_seen_ms}};
}

json TemplateJson(const store::ExchangeTemplate& t) {
  return json{{"name", t.name},
              {"version", t.version},
              {"op", t.op},
              {"source_hash", t.source_hash},
              {"source", t.source}};
}

json JobJson(const store::ExchangeJob& j) {
  return json{{"origin_id", j.origin_id},
              {"device_key", j.device_key},
              {"op", j.op},
              {"shape", j.shape},
              {"dtype", j.dtype},
              {"template_name", j.template_name},
              {"template_version", j.template_version},
              {"template_source_hash", j.template_source_hash},
              {"strategy", j.strategy},
              {"budget", j.budget},
              {"seed", j.seed},
              {"state", j.state},
              {"reference_ns", j.reference_ns},
              {"created_unix_ms", j.created_ms},
              {"finished_unix_ms", j.finished_ms},
              {"space_size", j.space_size}};
}

json TrialJson(const store::ExchangeTrial& t) {
  return json{{"measurement_id", t.measurement_id},
              {"job_origin_id", t.job_origin_id},
              {"config_index", t.config_index},
              {"config", t.config},
              {"error", t.error},
              {"error_message", t.error_message},
              {"times_ns", t.times_ns},
              {"time_ns", t.time_ns},
              {"gflops", t.gflops},
              {"number", t.number},
              {"compile_ms", t.compile_ms},
              {"max_rel_error", t.max_rel_error},
              {"created_unix_ms", t.created_ms},
              {"leased_unix_ms", t.leased_ms},
              {"attempt", t.attempt},
              {"provenance",
               {{"measured_unix_ms", t.done_ms},
                {"agent_name", t.agent},
                {"driver_version", t.driver_version},
                {"kernel_sha256", t.kernel_sha256},
                {"tunefleet_version", t.tunefleet_version}}}};
}

}  // namespace

std::string EncodeContent(const store::ExchangeRows& rows,
                          const ContentInfo& info) {
  json devices = json::array(), templates = json::array(), jobs = json::array(),
       trials = json::array();
  for (const auto& d : rows.devices) devices.push_back(DeviceJson(d));
  for (const auto& t : rows.templates) templates.push_back(TemplateJson(t));
  for (const auto& j : rows.jobs) jobs.push_back(JobJson(j));
  for (const auto& t : rows.trials) trials.push_back(TrialJson(t));
  json content{
      {"format", kFormat},
      {"format_version", kContentVersion},
      {"created_unix_ms", info.created_unix_ms},
      {"tunefleet_version", info.tunefleet_version},
      {"filter",
       {{"device_key", info.filter.device_key}, {"op", info.filter.op}}},
      {"devices", std::move(devices)},
      {"templates", std::move(templates)},
      {"jobs", std::move(jobs)},
      {"trials", std::move(trials)}};
  return content.dump(-1, ' ', false, json::error_handler_t::replace);
}

absl::StatusOr<DecodedContent> DecodeContent(absl::string_view text) {
  if (base::JsonDepth(text) > kMaxDepth) {
    return absl::InvalidArgumentError(absl::StrCat(
        "bundle content: nested deeper than ", kMaxDepth, " levels"));
  }
  json root = json::parse(text.begin(), text.end(), nullptr,
                          /*allow_exceptions=*/false);
  if (root.is_discarded()) {
    return absl::InvalidArgumentError("bundle content: not valid JSON");
  }
  Reader r;
  DecodedContent out;
  if (r.Text(root, "", "format") != kFormat) {
    r.Fail("format", absl::StrCat("is not \"", kFormat, "\""));
  }
  TUNEFLEET_RETURN_IF_ERROR(r.status());
  const int64_t version = r.Int(root, "", "format_version");
  TUNEFLEET_RETURN_IF_ERROR(r.status());
  if (version != kContentVersion) {
    return absl::InvalidArgumentError(absl::StrCat(
        "bundle content: format_version ", version, " is not ", kContentVersion,
        ", the one this tunefleet reads; upgrade tunefleet"));
  }
  out.info.created_unix_ms = r.Int(root, "", "created_unix_ms");
  out.info.tunefleet_version = r.Text(root, "", "tunefleet_version");
  if (const json* filter = r.Member(root, "", "filter")) {
    out.info.filter.device_key = r.Text(*filter, "filter", "device_key");
    out.info.filter.op = r.Text(*filter, "filter", "op");
  }
  r.ForEachElement(root, "devices", [&](const json& o, const std::string& p) {
    store::ExchangeDevice d;
    d.device_key = r.Text(o, p, "device_key");
    d.first_seen_ms = r.Int(o, p, "first_seen_unix_ms");
    d.last_seen_ms = r.Int(o, p, "last_seen_unix_ms");
    if (const json* info = r.Member(o, p, "info")) {
      google::protobuf::util::JsonParseOptions options;
      options.ignore_unknown_fields = true;
      if (!google::protobuf::util::JsonStringToMessage(info->dump(), &d.info,
                                                       options)
               .ok()) {
        r.Fail(p + ".info", "is not a DeviceInfo");
      }
    }
    out.rows.devices.push_back(std::move(d));
  });
  r.ForEachElement(root, "templates", [&](const json& o, const std::string& p) {
    out.rows.templates.push_back(store::ExchangeTemplate{
        r.Text(o, p, "name"), static_cast<int>(r.Int(o, p, "version")),
        r.Text(o, p, "op"), r.Text(o, p, "source_hash"),
        r.Text(o, p, "source")});
  });
  r.ForEachElement(root, "jobs", [&](const json& o, const std::string& p) {
    store::ExchangeJob j;
    j.origin_id = r.Text(o, p, "origin_id");
    j.device_key = r.Text(o, p, "device_key");
    j.op = r.Text(o, p, "op");
    j.shape = r.Text(o, p, "shape");
    j.dtype = r.Text(o, p, "dtype");
    j.template_name = r.Text(o, p, "template_name");
    j.template_version = static_cast<int>(r.Int(o, p, "template_version"));
    j.template_source_hash = r.Text(o, p, "template_source_hash");
    j.strategy = r.Text(o, p, "strategy");
    j.budget = r.Int(o, p, "budget");
    j.seed = r.Uint(o, p, "seed");
    j.state = r.Text(o, p, "state");
    j.reference_ns = r.Number(o, p, "reference_ns");
    j.created_ms = r.Int(o, p, "created_unix_ms");
    j.finished_ms = r.Int(o, p, "finished_unix_ms");
    j.space_size = r.Uint(o, p, "space_size");
    out.rows.jobs.push_back(std::move(j));
  });
  r.ForEachElement(root, "trials", [&](const json& o, const std::string& p) {
    store::ExchangeTrial t;
    t.measurement_id = r.Text(o, p, "measurement_id");
    t.job_origin_id = r.Text(o, p, "job_origin_id");
    t.config_index = r.Uint(o, p, "config_index");
    t.config = r.Text(o, p, "config");
    t.error = r.Text(o, p, "error");
    t.error_message = r.Text(o, p, "error_message");
    t.times_ns = r.Text(o, p, "times_ns");
    t.time_ns = r.Number(o, p, "time_ns");
    t.gflops = r.Number(o, p, "gflops");
    t.number = r.Int(o, p, "number");
    t.compile_ms = r.Number(o, p, "compile_ms");
    t.max_rel_error = r.Number(o, p, "max_rel_error");
    t.created_ms = r.Int(o, p, "created_unix_ms");
    t.leased_ms = r.Int(o, p, "leased_unix_ms");
    t.attempt = r.Int(o, p, "attempt");
    if (const json* prov = r.Member(o, p, "provenance")) {
      const std::string pp = p + ".provenance";
      t.done_ms = r.Int(*prov, pp, "measured_unix_ms");
      t.agent = r.Text(*prov, pp, "agent_name");
      t.driver_version = r.Text(*prov, pp, "driver_version");
      t.kernel_sha256 = r.Text(*prov, pp, "kernel_sha256");
      t.tunefleet_version = r.Text(*prov, pp, "tunefleet_version");
    }
    out.rows.trials.push_back(std::move(t));
  });
  TUNEFLEET_RETURN_IF_ERROR(r.status());
  return out;
}

}  // namespace tunefleet::bundle
