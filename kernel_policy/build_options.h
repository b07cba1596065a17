// What build options an agent passes to its OpenCL compiler
// (docs/SECURITY.md): an allow-list of forms, so that no option can make
// the compiler read a file (-I, -include, -imacros, -isystem, @file
// response files, extra input files) or change the language the source
// check reads (-x, -cl-std=CLC++). Checked by the agent before every
// build and by the spec loader and the server on a template's options.
#ifndef TUNEFLEET_KERNEL_POLICY_BUILD_OPTIONS_H_
#define TUNEFLEET_KERNEL_POLICY_BUILD_OPTIONS_H_

#include <cstddef>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace tunefleet::kernel_policy {

// Longest options string accepted.
inline constexpr size_t kMaxBuildOptionsBytes = 16 << 10;

// OK when every blank-separated word of `options` is one of:
//   -DNAME or -DNAME=VALUE  (NAME an identifier; VALUE of letters, digits
//                            and + - * / % . _ ( ) < > = ! & | ^ ~ ,)
//   -UNAME
//   -w, -Werror
//   -cl-std=CL1.0, CL1.1, CL1.2, CL2.0 or CL3.0
//   the OpenCL 1.2-3.0 flags -cl-single-precision-constant,
//     -cl-denorms-are-zero, -cl-fp32-correctly-rounded-divide-sqrt,
//     -cl-opt-disable, -cl-mad-enable, -cl-no-signed-zeros,
//     -cl-unsafe-math-optimizations, -cl-finite-math-only,
//     -cl-fast-relaxed-math, -cl-strict-aliasing, -cl-kernel-arg-info,
//     -cl-uniform-work-group-size, -cl-no-subgroup-ifp
//   vendor flags -cl-nv-*, -cl-qcom-*, -cl-arm-*, -cl-intel-*, -cl-amd-*
//     (letters, digits, '-', and "=VALUE" of letters, digits, '.', '_')
// and it holds no quote, backslash or control character and at most
// kMaxBuildOptionsBytes. Errors: INVALID_ARGUMENT "build option '<word>' is
// not allowed: ...".
absl::Status CheckBuildOptions(absl::string_view options);

}  // namespace tunefleet::kernel_policy

#endif  // TUNEFLEET_KERNEL_POLICY_BUILD_OPTIONS_H_
