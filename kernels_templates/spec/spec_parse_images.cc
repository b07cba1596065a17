// ParseSpecImages: the [[images]] of a spec, buffers its kernel reads as
// RGBA float image2d_t (spec_template.h documents the table).
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "kernels_templates/spec/spec_parse.h"
#include "kernels_templates/spec/spec_template.h"

namespace tunefleet::templates {
namespace {

using spec_json::GetExpression;
using spec_json::Invalid;
using spec_json::json;

// OK when `name` is free for an image: no buffer, earlier image or
// variable (dim, attribute, knob, limit, let) has it.
absl::Status CheckImageName(const std::string& name, const SpecModel& m) {
  if (absl::Status s =
          spec_json::CheckIdentifier("images.name", name, kMaxSpecNameLength);
      !s.ok()) {
    return s;
  }
  if (std::any_of(m.buffers.begin(), m.buffers.end(),
                  [&](const SpecBuffer& b) { return b.name == name; })) {
    return Invalid(absl::StrCat("images.name: ", name,
                                " is a buffer's name; name the image apart"));
  }
  if (std::any_of(m.images.begin(), m.images.end(),
                  [&](const SpecImage& i) { return i.name == name; })) {
    return Invalid(absl::StrCat("images.name: image ", name, " is repeated"));
  }
  const std::vector<std::string>& variables = m.expressions->variables();
  if (std::find(variables.begin(), variables.end(), name) != variables.end()) {
    return Invalid(absl::StrCat("images.name: ", name,
                                " is taken by a dim, knob, let or limit"));
  }
  return absl::OkStatus();
}

// Field `key` of image `name`: an expression that reads no device limit.
absl::StatusOr<int> ImageExpression(const json& t, const char* key,
                                    const std::string& name, SpecModel& m) {
  const std::string what = absl::StrCat("images.", key, " of image ", name);
  absl::StatusOr<std::string> text = GetExpression(t, key);
  if (!text.ok()) {
    return Invalid(absl::StrCat(
        what, ": ",
        absl::StripPrefix(text.status().message(), "template spec: ")));
  }
  absl::StatusOr<int> h = m.expressions->Add(*text, what);
  if (!h.ok()) return h.status();
  if (absl::Status s = CheckReadsNoLimit(m, *h, what); !s.ok()) return s;
  return *h;
}

absl::StatusOr<SpecImage> ParseImage(const json& t, SpecModel& m) {
  SpecImage image;
  if (!t.contains("name") || !t["name"].is_string()) {
    return Invalid("images.name: each image needs a name (a string)");
  }
  image.name = t["name"].get<std::string>();
  if (absl::Status s = CheckImageName(image.name, m); !s.ok()) return s;
  if (!t.contains("buffer") || !t["buffer"].is_string()) {
    return Invalid(absl::StrCat("images.buffer of image ", image.name,
                                ": missing, or not a string"));
  }
  image.buffer = t["buffer"].get<std::string>();
  if (std::none_of(
          m.buffers.begin(), m.buffers.end(),
          [&](const SpecBuffer& b) { return b.name == image.buffer; })) {
    return Invalid(absl::StrCat("images.buffer of image ", image.name, ": '",
                                image.buffer, "' is not a [[buffers]] name"));
  }
  for (auto [key, out] : {std::pair{"rows", &image.rows},
                          {"row_elements", &image.row_elements}}) {
    absl::StatusOr<int> h = ImageExpression(t, key, image.name, m);
    if (!h.ok()) return h.status();
    *out = *h;
  }
  if (t.contains("when")) {
    absl::StatusOr<int> h = ImageExpression(t, "when", image.name, m);
    if (!h.ok()) return h.status();
    image.when = *h;
  }
  return image;
}

}  // namespace

absl::Status ParseSpecImages(const json& j, SpecModel& m) {
  absl::StatusOr<std::vector<json>> tables =
      spec_json::GetTables(j, "images", kMaxSpecImages);
  if (!tables.ok()) return tables.status();
  for (const json& t : *tables) {
    absl::StatusOr<SpecImage> image = ParseImage(t, m);
    if (!image.ok()) return image.status();
    m.images.push_back(*std::move(image));
  }
  return absl::OkStatus();
}

}  // namespace tunefleet::templates
