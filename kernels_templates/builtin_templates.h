// The built-in template library: spec files and OpenCL sources under
// kernels_templates/, embedded at build time, and the built-in templates
// the registry starts with, each a SpecTemplate parsed from its spec.
#ifndef TUNEFLEET_KERNELS_TEMPLATES_BUILTIN_TEMPLATES_H_
#define TUNEFLEET_KERNELS_TEMPLATES_BUILTIN_TEMPLATES_H_

#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "kernels_templates/kernel_template.h"

namespace tunefleet::templates {

// The text of a library file by its path under kernels_templates/, e.g.
// "common/dtype.cl" or "gemm/gemm_tiled.toml". Errors: NOT_FOUND.
absl::StatusOr<absl::string_view> BuiltinFile(absl::string_view path);

// The built-in templates in registry order: special cases before the
// general templates of their op (conv2d_1x1_gemm before conv2d_direct),
// and each op's default first (gemm_tiled before gemm_gpu). Errors: the
// error of a spec that does not parse (a defect of the build).
absl::StatusOr<std::vector<std::unique_ptr<KernelTemplate>>>
LoadBuiltinTemplates();

}  // namespace tunefleet::templates

#endif  // TUNEFLEET_KERNELS_TEMPLATES_BUILTIN_TEMPLATES_H_
