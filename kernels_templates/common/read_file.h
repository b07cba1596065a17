// Reading a whole file into memory. It lives in kernels_templates/, the
// library every other part of tunefleet links (spec templates, the ONNX
// importer, the token file and certificates of server and agent), so that
// one function serves them all.
#ifndef TUNEFLEET_KERNELS_TEMPLATES_COMMON_READ_FILE_H_
#define TUNEFLEET_KERNELS_TEMPLATES_COMMON_READ_FILE_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace tunefleet::templates {

// The bytes of the file at `path`. Errors: NOT_FOUND "cannot read <what>
// <path>" (`what` names the file's role, e.g. "CA file"; may be empty).
absl::StatusOr<std::string> ReadWholeFile(const std::string& path,
                                          absl::string_view what = "");

}  // namespace tunefleet::templates

#endif  // TUNEFLEET_KERNELS_TEMPLATES_COMMON_READ_FILE_H_
