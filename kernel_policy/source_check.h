// What OpenCL C source an agent agrees to compile (docs/SECURITY.md): a
// kernel's text may not make the compiler read a file or forge where its
// text comes from. The agent checks every source before its compiler sees
// it (opencl/program_cache.cc, measurer.cc), and the server and the
// spec loader check users' sources the same way to refuse them early.
//
// The check reads the text as the preprocessor does (trigraphs refused,
// lines spliced, comments and literals skipped), so a directive cannot hide
// behind a comment, a splice or a digraph, and allows:
// - the directives #define, #undef, #if, #ifdef, #ifndef, #elif, #elifdef,
//   #elifndef, #else, #endif, #error, #warning, #pragma and the empty one;
//   refused are #include, #include_next, #import, #embed, #line, line
//   markers ("# 12 \"file\"") and any other;
// - the pragmas unroll, nounroll, OPENCL ..., STDC ..., clang loop,
//   clang unroll, clang diagnostic, clang fp, GCC unroll, GCC ivdep and
//   GCC diagnostic, as #pragma lines and as _Pragma("...") with a string
//   literal (a _Pragma of anything else, e.g. of a macro's #x, is refused);
// and refuses the identifiers that probe or name files (__has_include,
// __has_include_next, __has_embed, __FILE__, __FILE_NAME__, __BASE_FILE__,
// __TIMESTAMP__), raw string literals (R"(...)"), and, outside comments and
// literals, backslashes (universal character names), non-ASCII bytes and
// control characters; NUL bytes and lone carriage returns anywhere.
//
// What token pasting assembles (`_Pra ## gma`, `__FI ## LE__`) is not seen:
// such a pragma or __has_include learns at most whether a file exists, and
// __FILE__ names the compiler's own temporary file; no directive can be
// assembled, so no file's content is ever read.
#ifndef TUNEFLEET_KERNEL_POLICY_SOURCE_CHECK_H_
#define TUNEFLEET_KERNEL_POLICY_SOURCE_CHECK_H_

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace tunefleet::kernel_policy {

// OK when the agent may compile `source`. Errors: INVALID_ARGUMENT
// "line <n>: <what> is not allowed: <why>", naming the directive, pragma,
// identifier or character (the physical line, counted from 1).
absl::Status CheckKernelSource(absl::string_view source);

// OK when `pragma` (the text after "#pragma" or inside _Pragma("...")) is
// one of the pragmas above. Errors: INVALID_ARGUMENT "#pragma <name> is
// not allowed ...".
absl::Status CheckPragma(absl::string_view pragma);

}  // namespace tunefleet::kernel_policy

#endif  // TUNEFLEET_KERNEL_POLICY_SOURCE_CHECK_H_
