// libFuzzer target: the TOML path of users' template specs (issue 34), as
// SubmitJob's template_spec, `tunefleet tune --template` and `tunefleet
// space` take it. The input is TOML text.
//
// 1. base::TomlShape, the bound checked on the text before anything is
//    parsed, must never count less than toml++ builds: whenever toml++
//    parses the text, the document's depth, its keys and array items, and
//    its longest string or key are at most what TomlShape said. (A text
//    TomlShape under-counts could get past the spec's caps and make the
//    parser allocate without bound: "a.a.a... = 1".) toml++ runs only on
//    texts whose shape is within 4x the spec's caps, so that a failing
//    bound shows as a wrong count, not a hang.
// 2. The text then goes the way a job's spec goes: ParseUserTemplate (the
//    caps, toml++, the spec engine) with a fixed kernel source; nothing is
//    registered. Nothing may crash, leak or hit undefined behaviour.
#include <toml++/toml.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "base/json_limits.h"
#include "kernels_templates/registry.h"
#include "kernels_templates/spec/spec_template.h"

namespace {

struct Built {
  int depth = 0;
  size_t values = 0;
  size_t longest = 0;
};

// The depth (the document's table is 1), keys and array items, and the
// longest string or key of what toml++ built.
void Walk(const toml::node& node, int depth, Built& out) {
  if (depth > 4096) {  // (the bound failed: reported by the caller)
    out.depth = depth;
    return;
  }
  if (const toml::table* t = node.as_table()) {
    out.depth = std::max(out.depth, depth);
    for (auto&& [key, value] : *t) {
      ++out.values;
      out.longest = std::max(out.longest, key.str().size());
      Walk(value, depth + 1, out);
    }
  } else if (const toml::array* a = node.as_array()) {
    out.depth = std::max(out.depth, depth);
    for (const toml::node& value : *a) {
      ++out.values;
      Walk(value, depth + 1, out);
    }
  } else if (const toml::value<std::string>* s = node.as_string()) {
    out.longest = std::max(out.longest, s->get().size());
  }
}

[[noreturn]] void Fail(const char* what, size_t built, size_t bound) {
  std::fprintf(stderr,
               "TomlShape under-counts %s: toml++ built %zu, bound %zu\n", what,
               built, bound);
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tunefleet;  // NOLINT: a fuzz target's brevity
  const std::string text(reinterpret_cast<const char*>(data), size);
  const base::TextShape shape = base::TomlShape(text);
  if (size <= (64u << 10) && shape.depth <= 4 * templates::kMaxSpecJsonDepth &&
      shape.values <= 4 * templates::kMaxSpecValues) {
    try {
      const toml::table table = toml::parse(text);
      Built built;
      Walk(table, 1, built);
      if (built.depth > shape.depth) Fail("depth", built.depth, shape.depth);
      if (built.values > shape.values)
        Fail("values", built.values, shape.values);
      if (built.longest > shape.longest_string) {
        Fail("the longest string", built.longest, shape.longest_string);
      }
    } catch (const toml::parse_error&) {
    }
  }
  (void)templates::ParseUserTemplate(text, "toml",
                                     "kernel void f(global float* y) {}");
  return 0;
}
