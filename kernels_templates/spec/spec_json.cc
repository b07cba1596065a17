#include "kernels_templates/spec/spec_json.h"

#include <toml++/toml.h>

#include <sstream>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "base/json_limits.h"
#include "kernels_templates/spec/spec_template.h"

namespace tunefleet::templates::spec_json {

absl::Status Invalid(absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat("template spec: ", what));
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

absl::StatusOr<json> ParseObject(const std::string& text,
                                 const std::string& format, int max_depth) {
  if (format != "toml" && format != "json") {
    return Invalid(absl::StrCat("unknown format '", format, "'"));
  }
  // Measured on the text, before a parser allocates anything.
  if (text.size() > kMaxSpecTextBytes) {
    return Invalid(absl::StrCat(text.size(), " bytes of spec text; at most ",
                                kMaxSpecTextBytes));
  }
  const base::TextShape shape =
      format == "toml" ? base::TomlShape(text) : base::JsonShape(text);
  if (shape.depth > max_depth) {
    return Invalid(absl::StrCat(
        "nested deeper than ", max_depth,
        " levels (each table, array and segment of a dotted key is one)"));
  }
  if (shape.values > kMaxSpecValues) {
    return Invalid(absl::StrCat("more than ", kMaxSpecValues,
                                " keys and values (", shape.values, ")"));
  }
  if (shape.longest_string > kMaxSpecStringBytes) {
    return Invalid(absl::StrCat("a string or key of ", shape.longest_string,
                                " bytes; at most ", kMaxSpecStringBytes));
  }
  std::string json_text = text;
  if (format == "toml") {
    absl::StatusOr<std::string> converted = TomlToJson(text);
    if (!converted.ok()) return converted.status();
    json_text = *std::move(converted);
  }
  if (base::JsonDepth(json_text) > max_depth) {
    return Invalid(absl::StrCat("nested deeper than ", max_depth, " levels"));
  }
  json j = json::parse(json_text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return Invalid("not a JSON object");
  return j;
}

absl::Status CheckIdentifier(absl::string_view field, absl::string_view s,
                             size_t max_length) {
  bool ok = !s.empty() && s.size() <= max_length &&
            !absl::ascii_isdigit(static_cast<unsigned char>(s[0]));
  for (char c : s) {
    ok = ok && (absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '_');
  }
  if (ok) return absl::OkStatus();
  return Invalid(
      absl::StrCat(field, ": '", absl::CEscape(s.substr(0, max_length)),
                   s.size() > max_length ? "..." : "",
                   "' is not an identifier ([A-Za-z_][A-Za-z0-9_]*, at most ",
                   max_length, " characters)"));
}

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

absl::StatusOr<bool> GetBool(const json& j, const char* key, bool fallback) {
  if (!j.contains(key)) return fallback;
  if (!j[key].is_boolean()) {
    return Invalid(absl::StrCat("\"", key, "\" must be true or false"));
  }
  return j[key].get<bool>();
}

namespace {

// OK when field `key` of `j` is a list of at most `max_items` items of
// `what` ("list", "list of tables").
absl::Status CheckList(const json& j, const char* key, size_t max_items,
                       absl::string_view what) {
  if (!j[key].is_array()) {
    return Invalid(absl::StrCat("\"", key, "\" must be a ", what));
  }
  if (j[key].size() > max_items) {
    return Invalid(absl::StrCat("\"", key, "\" has ", j[key].size(),
                                " items; at most ", max_items));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::vector<std::string>> GetStrings(const json& j,
                                                    const char* key,
                                                    size_t max_items,
                                                    bool single_ok) {
  std::vector<std::string> out;
  if (!j.contains(key)) return out;
  if (single_ok && j[key].is_string()) {
    out.push_back(j[key].get<std::string>());
    return out;
  }
  if (absl::Status s = CheckList(j, key, max_items, "list"); !s.ok()) return s;
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

absl::StatusOr<std::string> GetExpression(const json& j, const char* key) {
  if (!j.contains(key)) return Invalid(absl::StrCat("missing \"", key, "\""));
  if (j[key].is_string()) return j[key].get<std::string>();
  if (j[key].is_number()) return j[key].dump();
  return Invalid(absl::StrCat("\"", key, "\" must be an expression"));
  // (Expression lengths are checked by ExpressionSet::Add.)
}

absl::StatusOr<std::vector<json>> GetTables(const json& j, const char* key,
                                            size_t max_items) {
  std::vector<json> out;
  if (!j.contains(key)) return out;
  if (absl::Status s = CheckList(j, key, max_items, "list of tables");
      !s.ok()) {
    return s;
  }
  for (const json& v : j[key]) {
    if (!v.is_object()) {
      return Invalid(absl::StrCat("\"", key, "\" holds a non-table (",
                                  v.type_name(), ")"));
    }
    out.push_back(v);
  }
  return out;
}

}  // namespace tunefleet::templates::spec_json
