// The CLBlast backend ("clblast"): CLBlast's GEMM, strided batched GEMM and
// convgemm (library.h documents the routines and their arguments), called
// through function pointers of a libclblast loaded with dlopen.
//
// CLBlast (github.com/CNugteren/CLBlast) runs on any OpenCL 1.1 device and
// picks its kernels' parameters from its built-in database of tuned
// devices (a default set elsewhere); it builds its kernels on the first
// call per context and keeps them for the process. It links libOpenCL
// itself: its calls reach the same OpenCL objects as the agent's where
// both resolve to one ICD loader or vendor library (docs/LIBRARY_BACKENDS.md).
//
// Checked on PoCL 3.1 with Debian's libclblast1 1.5.3 against naive
// references (tests/unit/library_backends/library_backend_test.cc): gemm with
// odd sizes, gemm_batched_b, and convgemm with padding, strides, dilation
// and batches, all within 1e-5 relative. No shape is refused for wrong
// answers; shapes CLBlast computes differently from ONNX (a dilated window
// larger than the padded input, which CLBlast gives one output row or
// column) are refused.
#ifndef TUNEFLEET_LIBRARY_BACKENDS_CLBLAST_BACKEND_H_
#define TUNEFLEET_LIBRARY_BACKENDS_CLBLAST_BACKEND_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "library_backends/clblast_api.h"
#include "library_backends/library.h"

namespace tunefleet::library_backends {

class ClblastBackend : public LibraryBackend {
 public:
  // The backend of the CLBlast library `library` (a path, or a file name
  // for the dynamic linker's search), loaded once per process and name and
  // never unloaded (CLBlast keeps OpenCL programs in static caches).
  // Errors: NOT_FOUND with dlerror() when it does not load, or naming a
  // missing entry point.
  static absl::StatusOr<std::shared_ptr<ClblastBackend>> Load(
      const std::string& library);

  ClblastBackend(ClblastApi api, std::string version)
      : api_(api), version_(std::move(version)) {}

  const std::string& name() const override;
  const std::string& version() const override { return version_; }
  std::vector<std::string> routines() const override;
  absl::StatusOr<std::vector<LibraryEvent>> Enqueue(
      absl::string_view routine, absl::Span<const LibraryArg> args,
      cl_command_queue queue) override;

 private:
  // gemm, or gemm_batched_b when `batched`.
  absl::StatusOr<std::vector<LibraryEvent>> Gemm(
      absl::Span<const LibraryArg> args, cl_command_queue queue, bool batched);
  absl::StatusOr<std::vector<LibraryEvent>> Convgemm(
      absl::Span<const LibraryArg> args, cl_command_queue queue);

  ClblastApi api_;
  std::string version_;
};

// The version in a shared library's file name: "1.5.3" for
// ".../libclblast.so.1.5.3" (what Debian installs; the soname link
// libclblast.so.1 is resolved first), "1" for "libclblast.so.1"; "unknown"
// for a name without one (Android's libclblast.so). CLBlast's C API has no
// version function, and its header's CLBLAST_VERSION_* describe the
// header, not the library loaded at run time.
std::string VersionFromLibraryPath(absl::string_view path);

}  // namespace tunefleet::library_backends

#endif  // TUNEFLEET_LIBRARY_BACKENDS_CLBLAST_BACKEND_H_
