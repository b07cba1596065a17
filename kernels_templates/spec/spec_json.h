// Reading the fields of a template spec (spec_template.h) from its JSON
// form, with the errors that name the field: INVALID_ARGUMENT "template
// spec: <field>: <what is wrong>". Internal to the spec engine.
#ifndef TUNEFLEET_KERNELS_TEMPLATES_SPEC_SPEC_JSON_H_
#define TUNEFLEET_KERNELS_TEMPLATES_SPEC_SPEC_JSON_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "nlohmann/json.hpp"

namespace tunefleet::templates::spec_json {

using nlohmann::json;

// INVALID_ARGUMENT "template spec: <what>".
absl::Status Invalid(absl::string_view what);

// The JSON text of a TOML document. Errors: INVALID_ARGUMENT with the line.
absl::StatusOr<std::string> TomlToJson(const std::string& text);

// The spec text as JSON ("toml" or "json" format), an object nested at
// most `max_depth` levels (tables, arrays and each segment of a dotted key
// count), of at most kMaxSpecTextBytes, kMaxSpecValues values and strings
// of kMaxSpecStringBytes, all measured on the text before it is parsed.
// Errors: INVALID_ARGUMENT naming the cap.
absl::StatusOr<json> ParseObject(const std::string& text,
                                 const std::string& format, int max_depth);

// OK for an identifier [A-Za-z_][A-Za-z0-9_]* of 1..max_length characters.
absl::Status CheckIdentifier(absl::string_view field, absl::string_view s,
                             size_t max_length);

// An integer within +-limit.
absl::StatusOr<int64_t> BoundedInteger(const json& v, absl::string_view field,
                                       int64_t limit);

// A string field; `required` ones must be present.
absl::Status GetString(const json& j, const char* key, bool required,
                       std::string* out);

// A boolean field (default `fallback`).
absl::StatusOr<bool> GetBool(const json& j, const char* key, bool fallback);

// A list of at most `max_items` strings (numbers are read as expressions);
// a single string reads as a list of one when `single_ok`.
absl::StatusOr<std::vector<std::string>> GetStrings(const json& j,
                                                    const char* key,
                                                    size_t max_items,
                                                    bool single_ok = false);

// An expression field: a string or a number.
absl::StatusOr<std::string> GetExpression(const json& j, const char* key);

// A list of at most `max_items` items (absent: empty), each a table.
absl::StatusOr<std::vector<json>> GetTables(const json& j, const char* key,
                                            size_t max_items);

}  // namespace tunefleet::templates::spec_json

#endif  // TUNEFLEET_KERNELS_TEMPLATES_SPEC_SPEC_JSON_H_
