#include "base/json_limits.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace tunefleet::base {

int JsonDepth(absl::string_view text) {
  int depth = 0, deepest = 0;
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') {
        ++i;
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      deepest = std::max(deepest, ++depth);
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return deepest;
}

absl::Status CheckJsonDepth(absl::string_view text, int max_depth,
                            absl::string_view what) {
  if (JsonDepth(text) <= max_depth) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat(what, ": nested deeper than ", max_depth, " levels"));
}

}  // namespace tunefleet::base
