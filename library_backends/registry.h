// The vendor libraries an agent can call (library.h), found on this machine
// at run time. Each is optional: one that does not load is absent, and the
// trials that name it fail as INVALID_CONFIG (measurer).
//
// CLBlast: the library named by kClblastLibraryEnv when it is set and not
// empty (the only one tried, so pointing it at a missing file turns CLBlast
// off), else DefaultClblastLibraries() in order.
// Qualcomm CLML (cl_qcom_ml_ops): designed, not implemented (no SDK or
// device here); docs/LIBRARY_BACKENDS.md says how it would be found.
#ifndef TUNEFLEET_LIBRARY_BACKENDS_REGISTRY_H_
#define TUNEFLEET_LIBRARY_BACKENDS_REGISTRY_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "library_backends/library.h"
#include "tunefleet/v1/common.pb.h"

namespace tunefleet::library_backends {

// The environment variable naming the CLBlast library to load: a path, or
// a file name for the dynamic linker's search.
inline constexpr char kClblastLibraryEnv[] = "TUNEFLEET_CLBLAST_LIBRARY";

// The CLBlast libraries tried when kClblastLibraryEnv names none: the
// soname of CLBlast 1.x (Debian's libclblast1), then the unversioned name
// (a build from source, Android).
std::vector<std::string> DefaultClblastLibraries();

class LibraryRegistry {
 public:
  // The backends available for the device described by `device` (its
  // extensions decide a device-specific library such as CLML), read now:
  // environment variables are read at each call, libraries are loaded once
  // per process. Never fails; why a library is absent is in notes().
  static LibraryRegistry Load(const tunefleet::v1::DeviceInfo& device);

  // The backend called `name` ("clblast"); nullptr when it is absent.
  LibraryBackend* Find(absl::string_view name) const;
  // "name version" of every backend, sorted: DeviceInfo.libraries.
  std::vector<std::string> Describe() const;
  // One line per library that did not load, saying why.
  const std::vector<std::string>& notes() const { return notes_; }

 private:
  std::vector<std::shared_ptr<LibraryBackend>> backends_;
  std::vector<std::string> notes_;
};

}  // namespace tunefleet::library_backends

#endif  // TUNEFLEET_LIBRARY_BACKENDS_REGISTRY_H_
