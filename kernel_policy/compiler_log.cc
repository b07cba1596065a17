#include "kernel_policy/compiler_log.h"

#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "kernel_policy/identifier.h"

namespace tunefleet::kernel_policy {
namespace {

// Calls `f` with every identifier of `text`.
template <typename F>
void ForEachIdentifier(absl::string_view text, F f) {
  size_t i = 0;
  while (i < text.size()) {
    if (!IsIdentStart(text[i])) {
      // Skip a whole number or word tail, so "0x1f" yields no "x1f".
      const bool number =
          absl::ascii_isdigit(static_cast<unsigned char>(text[i]));
      ++i;
      while (number && i < text.size() && IsIdentChar(text[i])) ++i;
      continue;
    }
    const size_t start = i;
    while (i < text.size() && IsIdentChar(text[i])) ++i;
    f(text.substr(start, i - start));
  }
}

// OpenCL C's type names, vector types and qualifiers: the words a
// compiler's message may quote without them being in the source.
bool IsOpenClWord(absl::string_view w) {
  static const auto* const kWords =
      new absl::flat_hash_set<absl::string_view>{"bool",
                                                 "void",
                                                 "size_t",
                                                 "ptrdiff_t",
                                                 "intptr_t",
                                                 "uintptr_t",
                                                 "unsigned",
                                                 "signed",
                                                 "const",
                                                 "volatile",
                                                 "restrict",
                                                 "struct",
                                                 "union",
                                                 "enum",
                                                 "global",
                                                 "local",
                                                 "constant",
                                                 "private",
                                                 "generic",
                                                 "__global",
                                                 "__local",
                                                 "__constant",
                                                 "__private",
                                                 "__generic",
                                                 "kernel",
                                                 "__kernel",
                                                 "image1d_t",
                                                 "image1d_buffer_t",
                                                 "image1d_array_t",
                                                 "image2d_t",
                                                 "image2d_array_t",
                                                 "image3d_t",
                                                 "sampler_t",
                                                 "event_t",
                                                 "read_only",
                                                 "write_only",
                                                 "read_write",
                                                 "__read_only",
                                                 "__write_only",
                                                 "__read_write",
                                                 "__attribute__",
                                                 "int",
                                                 "uint",
                                                 "char",
                                                 "uchar",
                                                 "short",
                                                 "ushort",
                                                 "long",
                                                 "ulong",
                                                 "half",
                                                 "float",
                                                 "double"};
  if (kWords->contains(w)) return true;
  for (absl::string_view scalar :
       {"char", "uchar", "short", "ushort", "int", "uint", "long", "ulong",
        "half", "float", "double"}) {
    if (!absl::StartsWith(w, scalar)) continue;
    const absl::string_view n = w.substr(scalar.size());
    if (n == "2" || n == "3" || n == "4" || n == "8" || n == "16") return true;
  }
  return false;
}

// Runs of blanks as one space, ends trimmed: clang expands tabs in the
// lines it quotes.
std::string Loose(absl::string_view line) {
  std::string out;
  bool blank = false;
  for (char c : absl::StripAsciiWhitespace(line)) {
    if (c == ' ' || c == '\t' || c == '\v' || c == '\f') {
      blank = true;
      continue;
    }
    if (blank) out.push_back(' ');
    blank = false;
    out.push_back(c);
  }
  return out;
}

bool IsPathChar(char c) {
  return absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '.' ||
         c == '_' || c == '-' || c == '+' || c == '~' || c == '/' || c == '@' ||
         c == '%' || c == '#' || c == '=' || c == ',' ||
         static_cast<unsigned char>(c) >= 0x80;
}

// Absolute (or ./, ../, ~/) paths cut to their last component.
std::string CutPaths(absl::string_view line) {
  std::string out;
  size_t i = 0;
  while (i < line.size()) {
    const char c = line[i];
    const bool starts_path = (c == '/' || c == '.' || c == '~') &&
                             (i == 0 || !IsPathChar(line[i - 1]));
    if (!starts_path) {
      out.push_back(c);
      ++i;
      continue;
    }
    size_t end = i;
    while (end < line.size() && IsPathChar(line[end])) ++end;
    const absl::string_view run = line.substr(i, end - i);
    const size_t last = run.rfind('/');
    if (last == absl::string_view::npos ||
        (c != '/' && run.find('/') == absl::string_view::npos)) {
      absl::StrAppend(&out, run);
    } else {
      absl::StrAppend(&out, run.substr(last + 1));
    }
    i = end;
  }
  return out;
}

// Quoted fragments whose identifiers are not all known become '...'.
std::string FilterQuotes(absl::string_view line,
                         const absl::flat_hash_set<std::string>& known) {
  std::string out;
  size_t i = 0;
  while (i < line.size()) {
    if (line[i] != '\'') {
      out.push_back(line[i++]);
      continue;
    }
    size_t end = line.find('\'', i + 1);
    if (end == absl::string_view::npos) end = line.size();
    const absl::string_view fragment = line.substr(i + 1, end - i - 1);
    bool ok = true;
    ForEachIdentifier(fragment, [&](absl::string_view id) {
      ok = ok && (known.contains(id) || IsOpenClWord(id));
    });
    absl::StrAppend(&out, "'", ok ? fragment : "...", "'");
    i = end + 1;
  }
  return out;
}

bool IsSeverity(absl::string_view s) {
  for (absl::string_view severity :
       {"error:", "warning:", "note:", "fatal error:", "remark:"}) {
    if (absl::StartsWith(s, severity)) return true;
  }
  return false;
}

// "error: ...", "FILE:L:C: error: ...", "FILE:L: note: ...",
// "In file included from ...".
bool IsDiagnostic(absl::string_view line) {
  const absl::string_view s = absl::StripLeadingAsciiWhitespace(line);
  if (IsSeverity(s) || absl::StartsWith(s, "In file included from ")) {
    return true;
  }
  for (size_t colon = s.find(": "); colon != absl::string_view::npos;
       colon = s.find(": ", colon + 1)) {
    if (colon == 0 ||
        !absl::ascii_isdigit(static_cast<unsigned char>(s[colon - 1]))) {
      continue;
    }
    if (IsSeverity(s.substr(colon + 2))) return true;
  }
  return false;
}

// "2 errors generated.", "1 warning and 1 error generated."
bool IsSummary(absl::string_view line) {
  const absl::string_view s = absl::StripAsciiWhitespace(line);
  return !s.empty() && absl::ascii_isdigit(static_cast<unsigned char>(s[0])) &&
         absl::EndsWith(s, " generated.") &&
         s.find('\'') == absl::string_view::npos;
}

// Newer clang quotes source lines behind a gutter ("   12 | code",
// "      | ^"): the part after it.
absl::string_view AfterGutter(absl::string_view line) {
  size_t i = 0;
  while (i < line.size() && line[i] == ' ') ++i;
  while (i < line.size() &&
         absl::ascii_isdigit(static_cast<unsigned char>(line[i])))
    ++i;
  while (i < line.size() && line[i] == ' ') ++i;
  if (i < line.size() && line[i] == '|') return line.substr(i + 1);
  return line;
}

bool IsCaret(absl::string_view line) {
  bool mark = false;
  for (char c : line) {
    if (c == '^' || c == '~') {
      mark = true;
    } else if (c != ' ' && c != '\t') {
      return false;
    }
  }
  return mark;
}

// Control characters and bytes past ASCII as \xNN (tabs kept): the log is
// printable ASCII, valid UTF-8 whatever the compiler wrote, and cannot move
// a terminal's cursor, forge lines or reorder text.
std::string EscapeControls(absl::string_view line) {
  std::string out;
  for (const char c : line) {
    const unsigned char u = static_cast<unsigned char>(c);
    if ((u < 0x20 && u != '\t') || u >= 0x7f) {
      absl::StrAppend(&out, "\\x", absl::Hex(u, absl::kZeroPad2));
    } else {
      out.push_back(c);
    }
  }
  return out;
}

}  // namespace

std::string ScrubCompilerLog(absl::string_view log, absl::string_view source,
                             absl::string_view options, size_t max_bytes) {
  absl::flat_hash_set<std::string> known;
  ForEachIdentifier(source, [&](absl::string_view id) { known.emplace(id); });
  ForEachIdentifier(options, [&](absl::string_view id) { known.emplace(id); });
  absl::flat_hash_set<std::string> source_lines;
  for (absl::string_view line : absl::StrSplit(source, '\n')) {
    std::string loose = Loose(line);
    if (!loose.empty()) source_lines.insert(std::move(loose));
  }
  std::string out;
  size_t left_out = 0;
  bool cut = false;
  for (absl::string_view raw : absl::StrSplit(log, absl::ByAnyChar("\r\n"))) {
    if (absl::StripAsciiWhitespace(raw).empty()) continue;
    std::string line;
    const absl::string_view code = AfterGutter(raw);
    if (IsDiagnostic(raw)) {
      line = FilterQuotes(CutPaths(raw), known);
    } else if (IsSummary(raw) || IsCaret(code) ||
               source_lines.contains(Loose(code))) {
      line = std::string(raw);
    } else {
      ++left_out;
      continue;
    }
    line = EscapeControls(line);
    if (cut || out.size() + line.size() + 1 > max_bytes) {
      cut = true;
      continue;
    }
    absl::StrAppend(&out, out.empty() ? "" : "\n", line);
  }
  if (cut) absl::StrAppend(&out, "\n[build log cut at ", max_bytes, " bytes]");
  if (left_out > 0) {
    absl::StrAppend(&out, out.empty() ? "" : "\n", "[", left_out,
                    left_out == 1 ? " line" : " lines",
                    " of the build log not from the request left out]");
  }
  return out;
}

}  // namespace tunefleet::kernel_policy
