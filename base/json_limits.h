// Limits on JSON and TOML text read from users (template specs, recorded
// tables): a parser allocates per value and per level of nesting, and
// nlohmann::json's parser, dump() and comparisons recurse once per level,
// so hostile input is measured on its text before it is parsed.
#ifndef TUNEFLEET_BASE_JSON_LIMITS_H_
#define TUNEFLEET_BASE_JSON_LIMITS_H_

#include <cstddef>

#include "absl/strings/string_view.h"

namespace tunefleet::base {

// The deepest nesting of arrays and objects in JSON text (brackets inside
// strings do not count).
int JsonDepth(absl::string_view text);

// What a parser would build from a JSON or TOML text, at most: read from
// the text alone, in one pass and constant memory, whether or not the text
// parses.
struct TextShape {
  // Deepest nesting of the JSON form: the document's object is 1; each
  // array, object, TOML table (a header's every key segment, [[...]] one
  // more) and segment of a dotted key adds one.
  int depth = 0;
  // Values, at most: JSON members and array items; TOML keys (each
  // segment of a dotted key or header) and array items.
  size_t values = 0;
  // Bytes of the longest string or key, as written (escapes not decoded).
  size_t longest_string = 0;
};

// The shape of JSON text.
TextShape JsonShape(absl::string_view text);

// The shape of TOML text (toml++ bounds only arrays and inline tables, at
// 256 levels, and builds a table per segment of a dotted key: "a.a.a...=1"
// 20,000 segments deep is 40 KB of text).
TextShape TomlShape(absl::string_view text);

}  // namespace tunefleet::base

#endif  // TUNEFLEET_BASE_JSON_LIMITS_H_
