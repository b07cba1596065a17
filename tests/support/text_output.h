// What tests read back from text a program or printer wrote: a temporary
// FILE's whole content, and how often a part occurs in a text.
#ifndef TUNEFLEET_TESTS_SUPPORT_TEXT_OUTPUT_H_
#define TUNEFLEET_TESTS_SUPPORT_TEXT_OUTPUT_H_

#include <cstddef>
#include <cstdio>
#include <string>

namespace tunefleet::testing {

// Everything written to `out` (a std::tmpfile()), from its start; closes
// `out`.
inline std::string Drain(FILE* out) {
  std::rewind(out);
  std::string text;
  char buffer[4096];
  size_t n;
  while ((n = std::fread(buffer, 1, sizeof(buffer), out)) > 0) {
    text.append(buffer, n);
  }
  std::fclose(out);
  return text;
}

// How often `part` occurs in `text` (overlapping occurrences count).
inline size_t Count(const std::string& text, const std::string& part) {
  size_t n = 0;
  for (size_t at = text.find(part); at != std::string::npos;
       at = text.find(part, at + 1)) {
    ++n;
  }
  return n;
}

}  // namespace tunefleet::testing

#endif  // TUNEFLEET_TESTS_SUPPORT_TEXT_OUTPUT_H_
