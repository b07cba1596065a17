// Text from other machines (agent and device names, device strings, model
// names) that lands in logs and terminals: what may be kept, and how the
// rest is shown. A newline would forge a log line, an escape sequence
// would move a terminal's cursor or retitle its window, a bidirectional
// override would reorder what a reader sees.
#ifndef TUNEFLEET_BASE_PRINTABLE_H_
#define TUNEFLEET_BASE_PRINTABLE_H_

#include <string>

#include "absl/strings/string_view.h"

namespace tunefleet::base {

// True when `text` is well-formed UTF-8 with no control character (C0,
// DEL, C1: tabs and newlines too) and no line separator or bidirectional
// control (U+061C, U+200E, U+200F, U+2028-U+202E, U+2066-U+2069).
bool IsPrintable(absl::string_view text);

// `text` itself when IsPrintable(text); else `text` with what IsPrintable()
// refuses escaped: C0 and DEL as \n, \t, \r or \xNN, bytes of malformed
// UTF-8 as \xNN, C1 controls, line separators and bidirectional controls as
// \u{XXXX}, and backslashes as \\ (so that the escapes read back).
std::string EscapeUnprintable(absl::string_view text);

}  // namespace tunefleet::base

#endif  // TUNEFLEET_BASE_PRINTABLE_H_
