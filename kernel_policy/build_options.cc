#include "kernel_policy/build_options.h"

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace tunefleet::kernel_policy {
namespace {

constexpr absl::string_view kAllowed =
    "the agent accepts -DNAME[=VALUE], -UNAME, -w, -Werror, -cl-std=CL1.0 to "
    "CL3.0, the OpenCL -cl-* flags and vendor -cl-nv-/-cl-qcom-/-cl-arm-/"
    "-cl-intel-/-cl-amd-* flags";

bool IsIdentifier(absl::string_view s) {
  if (s.empty() || absl::ascii_isdigit(static_cast<unsigned char>(s[0]))) {
    return false;
  }
  for (char c : s) {
    if (!absl::ascii_isalnum(static_cast<unsigned char>(c)) && c != '_') {
      return false;
    }
  }
  return true;
}

bool AllOf(absl::string_view s, absl::string_view extra) {
  for (char c : s) {
    if (!absl::ascii_isalnum(static_cast<unsigned char>(c)) &&
        extra.find(c) == absl::string_view::npos) {
      return false;
    }
  }
  return true;
}

bool AllowedWord(absl::string_view w) {
  if (absl::ConsumePrefix(&w, "-D")) {
    const size_t eq = w.find('=');
    if (!IsIdentifier(w.substr(0, eq))) return false;
    return eq == absl::string_view::npos ||
           AllOf(w.substr(eq + 1), "_+-*/%.()<>=!&|^~,");
  }
  if (absl::ConsumePrefix(&w, "-U")) return IsIdentifier(w);
  if (w == "-w" || w == "-Werror") return true;
  if (!absl::ConsumePrefix(&w, "-cl-")) return false;
  for (absl::string_view flag :
       {"std=CL1.0", "std=CL1.1", "std=CL1.2", "std=CL2.0", "std=CL3.0",
        "single-precision-constant", "denorms-are-zero",
        "fp32-correctly-rounded-divide-sqrt", "opt-disable", "mad-enable",
        "no-signed-zeros", "unsafe-math-optimizations", "finite-math-only",
        "fast-relaxed-math", "strict-aliasing", "kernel-arg-info",
        "uniform-work-group-size", "no-subgroup-ifp"}) {
    if (w == flag) return true;
  }
  for (absl::string_view vendor : {"nv-", "qcom-", "arm-", "intel-", "amd-"}) {
    if (!absl::ConsumePrefix(&w, vendor)) continue;
    const size_t eq = w.find('=');
    const absl::string_view name = w.substr(0, eq);
    return !name.empty() && AllOf(name, "-") &&
           (eq == absl::string_view::npos || AllOf(w.substr(eq + 1), "._"));
  }
  return false;
}

}  // namespace

absl::Status CheckBuildOptions(absl::string_view options) {
  if (options.size() > kMaxBuildOptionsBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("build options of ", options.size(), " bytes; at most ",
                     kMaxBuildOptionsBytes));
  }
  for (char c : options) {
    const unsigned char u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\'' || c == '\\' || c == '`' || c == '$' ||
        c == '@' || u >= 0x7f || (u < 0x20 && c != ' ' && c != '\t')) {
      return absl::InvalidArgumentError(absl::StrCat(
          "build options may not hold '", absl::CEscape(std::string(1, c)),
          "': compilers would read quotes, escapes and response files (@) "
          "differently; ",
          kAllowed));
    }
  }
  for (absl::string_view word :
       absl::StrSplit(options, absl::ByAnyChar(" \t"), absl::SkipEmpty())) {
    if (AllowedWord(word)) continue;
    constexpr size_t kShown = 64;
    return absl::InvalidArgumentError(absl::StrCat(
        "build option '", word.substr(0, kShown),
        word.size() > kShown ? "..." : "", "' is not allowed: ", kAllowed));
  }
  return absl::OkStatus();
}

}  // namespace tunefleet::kernel_policy
