// SpecTemplate::Load: a spec file and the OpenCL files it names.
#include <filesystem>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "base/files.h"
#include "kernels_templates/builtin_templates.h"
#include "kernels_templates/spec/spec_json.h"
#include "kernels_templates/spec/spec_template.h"

namespace tunefleet::templates {
namespace {

using spec_json::json;

// A file a spec names: next to the spec, else a built-in library file.
absl::StatusOr<std::string> ReadSpecFile(const std::string& dir,
                                         const std::string& name,
                                         SpecTemplate::FileReader read) {
  absl::StatusOr<std::string> local =
      read((std::filesystem::path(dir) / name).string());
  if (local.ok()) return local;
  absl::StatusOr<absl::string_view> builtin = BuiltinFile(name);
  if (builtin.ok()) return std::string(*builtin);
  return local.status();
}

// The files of `preamble` (each followed by a newline), then those of
// `source`, of the table `t`.
absl::StatusOr<std::string> ComposeSource(const json& t, const std::string& dir,
                                          SpecTemplate::FileReader read) {
  std::string text;
  for (const char* field : {"preamble", "source"}) {
    absl::StatusOr<std::vector<std::string>> files = spec_json::GetStrings(
        t, field, kMaxSpecFiles, /*single_ok=*/field[0] == 's');
    if (!files.ok()) return files.status();
    for (const std::string& f : *files) {
      absl::StatusOr<std::string> file = ReadSpecFile(dir, f, read);
      if (!file.ok()) return file.status();
      absl::StrAppend(&text, *file, field[0] == 'p' ? "\n" : "");
    }
  }
  return text;
}

absl::StatusOr<std::string> ReadFromDisk(const std::string& path) {
  return base::ReadWholeFile(path);
}

}  // namespace

absl::StatusOr<std::unique_ptr<SpecTemplate>> SpecTemplate::Load(
    const std::string& path) {
  return Load(path, ReadFromDisk);
}

absl::StatusOr<std::unique_ptr<SpecTemplate>> SpecTemplate::Load(
    const std::string& path, FileReader read) {
  absl::StatusOr<std::string> spec = read(path);
  if (!spec.ok()) return spec.status();
  const std::string format = absl::EndsWith(path, ".json") ? "json" : "toml";
  absl::StatusOr<json> j =
      spec_json::ParseObject(*spec, format, kMaxSpecJsonDepth);
  if (!j.ok()) return j.status();
  // A library spec may have no kernel and a reference with its own source.
  if (!j->contains("source") && !j->contains("library")) {
    return spec_json::Invalid("missing field \"source\"");
  }
  const std::string dir = std::filesystem::path(path).parent_path().string();
  absl::StatusOr<std::string> source = ComposeSource(*j, dir, read);
  if (!source.ok()) return source.status();
  std::string reference_source;
  if (j->contains("reference") && (*j)["reference"].is_object() &&
      (*j)["reference"].contains("source")) {
    absl::StatusOr<std::string> r = ComposeSource((*j)["reference"], dir, read);
    if (!r.ok()) return r.status();
    reference_source = *std::move(r);
  }
  return Parse(*spec, format, *source, reference_source);
}

}  // namespace tunefleet::templates
