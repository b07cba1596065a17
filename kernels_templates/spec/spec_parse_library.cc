// ParseSpecLibrary: the [library] table of a library template, a
// vendor-library call in place of a generated kernel (spec_template.h
// documents the table).
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "kernels_templates/spec/spec_parse.h"
#include "kernels_templates/spec/spec_template.h"

namespace tunefleet::templates {

absl::Status ParseSpecLibrary(const spec_json::json& j, SpecModel& m) {
  using spec_json::Invalid;
  if (!j.contains("library")) return absl::OkStatus();
  const spec_json::json& t = j["library"];
  if (!t.is_object()) {
    return Invalid("library: a table {name, routine, args}");
  }
  SpecLibrary library;
  for (auto [key, out] :
       {std::pair{"name", &library.name}, {"routine", &library.routine}}) {
    const std::string field = absl::StrCat("library.", key);
    if (!t.contains(key) || !t[key].is_string()) {
      return Invalid(absl::StrCat(field, ": missing, or not a string"));
    }
    *out = t[key].get<std::string>();
    if (absl::Status s =
            spec_json::CheckIdentifier(field, *out, kMaxSpecNameLength);
        !s.ok()) {
      return s;
    }
  }
  absl::StatusOr<std::vector<std::string>> args =
      spec_json::GetStrings(t, "args", kMaxSpecArgs);
  if (!args.ok()) {
    return Invalid(absl::StrCat(
        "library.args: ",
        absl::StripPrefix(args.status().message(), "template spec: ")));
  }
  for (const std::string& a : *args) {
    absl::StatusOr<SpecArg> arg =
        ParseSpecArg(a, "library", /*images_allowed=*/false, m);
    if (!arg.ok()) return arg.status();
    library.args.push_back(*std::move(arg));
  }
  m.library = std::move(library);
  return absl::OkStatus();
}

}  // namespace tunefleet::templates
