// EnumNames<E, N>: the fixed two-way map between an enum's values and the
// names a flag, a file field or a message spells them with. One table per
// enum serves its Name() and its Parse(), so the two cannot drift apart.
//
//   constexpr base::EnumNames<Role, 3> kRoles{{{
//       {Role::kAgent, "agent"}, {Role::kReader, "reader"},
//       {Role::kTuner, "tuner"}}}};
//   kRoles.Name(Role::kReader)  // "reader"
//   kRoles.Parse("tuner")       // Role::kTuner
//   kRoles.List()               // "agent, reader, tuner"
#ifndef TUNEFLEET_BASE_ENUM_NAMES_H_
#define TUNEFLEET_BASE_ENUM_NAMES_H_

#include <array>
#include <cstddef>
#include <optional>
#include <string>
#include <utility>

#include "absl/strings/string_view.h"

namespace tunefleet::base {

// The names are string literals (null-terminated, static), so Name() can
// serve functions that return a `const char*`.
template <typename E, size_t N>
struct EnumNames {
  std::array<std::pair<E, const char*>, N> entries;

  // The name of `value`; `unknown` for a value the table lacks.
  constexpr const char* Name(E value, const char* unknown = "?") const {
    for (const auto& [v, name] : entries) {
      if (v == value) return name;
    }
    return unknown;
  }

  // The value named `name` (exact, case-sensitive); nullopt for another.
  constexpr std::optional<E> Parse(absl::string_view name) const {
    for (const auto& [v, n] : entries) {
      if (absl::string_view(n) == name) return v;
    }
    return std::nullopt;
  }

  // The names in table order, joined by ", " (for an error's "choose from").
  std::string List() const {
    std::string out;
    for (const auto& [v, name] : entries) {
      if (!out.empty()) out += ", ";
      out += name;
    }
    return out;
  }
};

}  // namespace tunefleet::base

#endif  // TUNEFLEET_BASE_ENUM_NAMES_H_
