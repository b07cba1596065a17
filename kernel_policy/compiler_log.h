// The compiler log an agent reports for a kernel that did not build
// (docs/SECURITY.md): what reaches a measurement's error_message, the
// database and every reader. Only what the request itself holds, or the
// compiler's own words about it, goes out.
#ifndef TUNEFLEET_KERNEL_POLICY_COMPILER_LOG_H_
#define TUNEFLEET_KERNEL_POLICY_COMPILER_LOG_H_

#include <cstddef>
#include <string>

#include "absl/strings/string_view.h"

namespace tunefleet::kernel_policy {

// The build log `log` of `source` (built with `options`) as it may be
// reported, at most `max_bytes` bytes plus a closing note:
// - a diagnostic line ("error: FILE:L:C: msg", "FILE:L:C: error: msg",
//   "note: ...", "warning: ...", "N errors generated.") stays, with every
//   absolute path cut to its last component (no directory of the agent
//   host goes out) and every quoted fragment ('...') replaced by '...'
//   unless each identifier in it occurs in `source` or `options` or is an
//   OpenCL C type or qualifier;
// - a caret line (blanks, '^', '~') stays;
// - a quoted source line stays only when it is a line of `source`
//   (blanks compared loosely);
// - every other line is left out, counted in a closing note;
// - control characters and bytes past ASCII are escaped (\xNN), tabs
//   kept: the result is printable ASCII.
std::string ScrubCompilerLog(absl::string_view log, absl::string_view source,
                             absl::string_view options, size_t max_bytes);

}  // namespace tunefleet::kernel_policy

#endif  // TUNEFLEET_KERNEL_POLICY_COMPILER_LOG_H_
