#include "library_backends/registry.h"

#include <stdlib.h>

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "library_backends/clblast_backend.h"

namespace tunefleet::library_backends {

std::vector<std::string> DefaultClblastLibraries() {
  return {"libclblast.so.1", "libclblast.so"};
}

LibraryRegistry LibraryRegistry::Load(
    const tunefleet::v1::DeviceInfo& /*device*/) {
  LibraryRegistry registry;
  std::vector<std::string> candidates = DefaultClblastLibraries();
  if (const char* env = getenv(kClblastLibraryEnv);
      env != nullptr && env[0] != '\0') {
    candidates = {env};
  }
  std::vector<std::string> errors;
  for (const std::string& candidate : candidates) {
    absl::StatusOr<std::shared_ptr<ClblastBackend>> clblast =
        ClblastBackend::Load(candidate);
    if (clblast.ok()) {
      registry.backends_.push_back(*std::move(clblast));
      errors.clear();
      break;
    }
    errors.push_back(std::string(clblast.status().message()));
  }
  if (!errors.empty()) {
    registry.notes_.push_back(
        absl::StrCat("clblast: ", absl::StrJoin(errors, "; ")));
  }
  // CLML would be added here for a device that lists cl_qcom_ml_ops
  // (docs/LIBRARY_BACKENDS.md).
  return registry;
}

LibraryBackend* LibraryRegistry::Find(absl::string_view name) const {
  for (const std::shared_ptr<LibraryBackend>& backend : backends_) {
    if (backend->name() == name) return backend.get();
  }
  return nullptr;
}

std::vector<std::string> LibraryRegistry::Describe() const {
  std::vector<std::string> out;
  for (const std::shared_ptr<LibraryBackend>& backend : backends_) {
    out.push_back(absl::StrCat(backend->name(), " ", backend->version()));
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace tunefleet::library_backends
