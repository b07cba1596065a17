// Limits on JSON text read from users (template specs, recorded tables):
// nlohmann::json's parser, dump() and comparisons recurse once per level
// of nesting, so hostile input is measured before it is parsed.
#ifndef TUNEFLEET_BASE_JSON_LIMITS_H_
#define TUNEFLEET_BASE_JSON_LIMITS_H_

#include "absl/strings/string_view.h"

namespace tunefleet::base {

// The deepest nesting of arrays and objects in JSON text (brackets inside
// strings do not count).
int JsonDepth(absl::string_view text);

}  // namespace tunefleet::base

#endif  // TUNEFLEET_BASE_JSON_LIMITS_H_
