#include "base/json_limits.h"

#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

namespace tunefleet::base {
namespace {

bool IsBlank(char c) { return c == ' ' || c == '\t'; }
bool IsNewline(char c) { return c == '\n' || c == '\r'; }

// A TOML string at text[i] (an opening quote): skips it, returns its length.
size_t SkipTomlString(absl::string_view t, size_t& i) {
  const char quote = t[i];
  const bool basic = quote == '"';
  const size_t start = i;
  if (t.substr(i, 3) == std::string(3, quote)) {
    const absl::string_view closing = basic ? "\"\"\"" : "'''";
    i += 3;
    while (i < t.size() && t.substr(i, 3) != closing) {
      i += basic && t[i] == '\\' ? 2 : 1;
    }
    i = std::min(t.size(), i + 3);
  } else {
    ++i;
    while (i < t.size() && t[i] != quote && !IsNewline(t[i])) {
      i += basic && t[i] == '\\' ? 2 : 1;
    }
    if (i < t.size() && t[i] == quote) ++i;
  }
  i = std::min(i, t.size());
  return i - start;
}

// A TOML key at text[i] (bare, quoted or dotted): skips it and the blanks
// around it, returns its segments.
int SkipTomlKey(absl::string_view t, size_t& i, TextShape& shape) {
  int segments = 0;
  while (true) {
    while (i < t.size() && IsBlank(t[i])) ++i;
    size_t length = 0;
    if (i < t.size() && (t[i] == '"' || t[i] == '\'')) {
      length = SkipTomlString(t, i);
    } else {
      const size_t start = i;
      while (i < t.size() && !IsBlank(t[i]) && !IsNewline(t[i]) &&
             std::string_view("=.[]{},#\"'").find(t[i]) ==
                 std::string_view::npos) {
        ++i;
      }
      length = i - start;
    }
    shape.longest_string = std::max(shape.longest_string, length);
    ++segments;
    while (i < t.size() && IsBlank(t[i])) ++i;
    if (i < t.size() && t[i] == '.') {
      ++i;
      continue;
    }
    return segments;
  }
}

}  // namespace

int JsonDepth(absl::string_view text) { return JsonShape(text).depth; }

TextShape JsonShape(absl::string_view text) {
  TextShape shape;
  int depth = 0;
  bool any = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '"') {
      const size_t start = i++;
      while (i < text.size() && text[i] != '"') i += text[i] == '\\' ? 2 : 1;
      shape.longest_string =
          std::max(shape.longest_string, std::min(i, text.size()) - start - 1);
      any = true;
    } else if (c == '[' || c == '{') {
      shape.depth = std::max(shape.depth, ++depth);
      ++shape.values;
    } else if (c == ']' || c == '}') {
      --depth;
    } else if (c == ',') {
      ++shape.values;
    } else if (c != ' ' && c != '\t' && c != '\n' && c != '\r') {
      any = true;
    }
  }
  if (any && shape.values == 0) shape.values = 1;  // one scalar
  return shape;
}

TextShape TomlShape(absl::string_view t) {
  // A container open around the scan: an array or an inline table, and
  // the depth it has in the JSON form.
  struct Frame {
    char kind;  // '[' or '{'
    int depth;
  };
  enum class Expect { kLine, kKey, kValue, kAfter };
  TextShape shape;
  shape.depth = 1;  // the document's table
  std::vector<Frame> open;
  int table = 1;        // depth of the table the last header opened
  int arrays_of_tables = 0;  // [[headers]] so far
  int value_depth = 0;  // depth a container value would have
  Expect expect = Expect::kLine;
  size_t i = 0;
  const auto note = [&shape](int depth) {
    shape.depth = std::max(shape.depth, depth);
  };
  while (i < t.size()) {
    const char c = t[i];
    if (IsBlank(c) || (IsNewline(c) && !open.empty())) {
      ++i;
      continue;
    }
    if (c == '#') {  // a comment, to the line's end
      while (i < t.size() && !IsNewline(t[i])) ++i;
      continue;
    }
    switch (expect) {
      case Expect::kLine:  // top level, at a line's start
        if (IsNewline(c)) {
          ++i;
        } else if (c == '[') {
          const bool array = i + 1 < t.size() && t[i + 1] == '[';
          i += array ? 2 : 1;
          const int segments = SkipTomlKey(t, i, shape);
          // An array of tables adds a table to its array each time. A
          // header's path may also pass through arrays of tables an earlier
          // header made ("[[a]]" then "[[a.b]]": a's last table holds b),
          // each one level more: at most one per earlier [[header]].
          shape.values += segments + (array ? 1 : 0);
          const int through = std::min(segments - 1, arrays_of_tables);
          table = 1 + segments + through + (array ? 1 : 0);
          if (array) ++arrays_of_tables;
          note(table);
          while (i < t.size() && !IsNewline(t[i]) && t[i] != '#') ++i;
        } else {
          const int segments = SkipTomlKey(t, i, shape);
          shape.values += segments;
          note(table + segments - 1);
          value_depth = table + segments;
          if (i < t.size() && t[i] == '=') ++i;
          expect = Expect::kValue;
        }
        break;
      case Expect::kKey:  // in an inline table
        if (c == '}' || c == ',') {
          expect = Expect::kAfter;  // (an empty table, or a stray comma)
          break;
        }
        {
          const int segments = SkipTomlKey(t, i, shape);
          shape.values += segments;
          note(open.back().depth + segments - 1);
          value_depth = open.back().depth + segments;
          if (i < t.size() && t[i] == '=') ++i;
          expect = Expect::kValue;
        }
        break;
      case Expect::kValue:
        if (!open.empty() && open.back().kind == '[') {
          if (c == ']') {  // an empty array, or a trailing comma
            expect = Expect::kAfter;
            break;
          }
          ++shape.values;  // an array's item
        }
        if (c == '[' || c == '{') {
          note(value_depth);
          open.push_back({c, value_depth});
          ++i;
          if (c == '[') {
            value_depth = open.back().depth + 1;
          } else {
            expect = Expect::kKey;
          }
        } else if (c == '"' || c == '\'') {
          shape.longest_string =
              std::max(shape.longest_string, SkipTomlString(t, i));
          expect = Expect::kAfter;
        } else {
          while (i < t.size() && !IsBlank(t[i]) && !IsNewline(t[i]) &&
                 std::string_view(",]}#").find(t[i]) ==
                     std::string_view::npos) {
            ++i;
          }
          expect = Expect::kAfter;
          if (i < t.size() && IsNewline(t[i]) && open.empty()) {
            expect = Expect::kLine;
          }
        }
        break;
      case Expect::kAfter:
        if (open.empty()) {
          if (IsNewline(c)) expect = Expect::kLine;
          ++i;  // (anything else is an error toml++ reports)
        } else if (c == ',') {
          ++i;
          if (open.back().kind == '[') {
            value_depth = open.back().depth + 1;
            expect = Expect::kValue;
          } else {
            expect = Expect::kKey;
          }
        } else if (c == ']' || c == '}') {
          ++i;
          open.pop_back();
          if (!open.empty() && open.back().kind == '[') {
            value_depth = open.back().depth + 1;
          }
        } else {
          ++i;
        }
        break;
    }
  }
  return shape;
}

}  // namespace tunefleet::base
