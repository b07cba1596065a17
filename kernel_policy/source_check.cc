#include "kernel_policy/source_check.h"

#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "kernel_policy/identifier.h"

namespace tunefleet::kernel_policy {
namespace {

absl::Status NotAllowed(int line, absl::string_view what,
                        absl::string_view why) {
  return absl::InvalidArgumentError(
      absl::StrCat("line ", line, ": ", what, " is not allowed: ", why));
}

// Whitespace within a line, as the preprocessor skips it.
bool IsBlank(char c) { return c == ' ' || c == '\t' || c == '\v' || c == '\f'; }

// Translation phases 1 and 2: the text with line splices removed and CR LF
// read as LF, and the physical line of each of its characters. Refuses
// what compilers read differently: trigraphs (on in some OpenCL compilers,
// off in others), a backslash and blanks before a newline (a splice to
// clang and gcc, not to every compiler), lone CRs, NUL bytes.
struct Logical {
  std::string text;
  std::vector<int> line;  // physical line (from 1) of text[i]
};

absl::Status Splice(absl::string_view s, Logical* out) {
  out->text.reserve(s.size());
  out->line.reserve(s.size());
  int line = 1;
  for (size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (c == '\0') {
      return NotAllowed(line, "a NUL byte",
                        "compilers disagree on where the text ends");
    }
    if (c == '\r') {
      if (i + 1 < s.size() && s[i + 1] == '\n') continue;  // CR LF: LF
      return NotAllowed(line, "a carriage return without a line feed",
                        "compilers disagree on where such a line ends");
    }
    if (c == '?' && i + 2 < s.size() && s[i + 1] == '?' &&
        absl::string_view("=/'()!<>-").find(s[i + 2]) !=
            absl::string_view::npos) {
      return NotAllowed(
          line, absl::StrCat("the trigraph ??", std::string(1, s[i + 2])),
          "some compilers replace trigraphs and others do not (write the "
          "character itself)");
    }
    if (c == '\\') {
      size_t j = i + 1;
      while (j < s.size() && IsBlank(s[j])) ++j;
      if (j < s.size() && j > i + 1 && (s[j] == '\n' || s[j] == '\r')) {
        return NotAllowed(line, "a backslash followed by blanks at a line end",
                          "compilers disagree on whether it splices lines");
      }
      if (j < s.size() && s[j] == '\n') {  // a splice: both go
        ++line;
        i = j;
        continue;
      }
      if (j + 1 < s.size() && s[j] == '\r' && s[j + 1] == '\n') {
        ++line;
        i = j + 1;
        continue;
      }
    }
    out->text.push_back(c);
    out->line.push_back(line);
    if (c == '\n') ++line;
  }
  return absl::OkStatus();
}

// The pragmas a kernel may use: the first words of the pragma.
absl::Status CheckPragmaWords(const std::vector<std::string>& words) {
  if (words.empty()) return absl::OkStatus();  // an empty pragma: ignored
  const std::string& first = words[0];
  const std::string second = words.size() > 1 ? words[1] : "";
  const bool ok =
      first == "unroll" || first == "nounroll" || first == "OPENCL" ||
      first == "STDC" ||
      (first == "clang" && (second == "loop" || second == "unroll" ||
                            second == "diagnostic" || second == "fp")) ||
      (first == "GCC" &&
       (second == "unroll" || second == "ivdep" || second == "diagnostic"));
  if (ok) return absl::OkStatus();
  const bool two = (first == "clang" || first == "GCC") && !second.empty();
  return absl::InvalidArgumentError(absl::StrCat(
      "#pragma ", absl::CEscape(first), two ? " " : "",
      two ? absl::CEscape(second) : "",
      " is not allowed: a kernel may use the pragmas unroll, nounroll, "
      "OPENCL, STDC, clang loop/unroll/diagnostic/fp and GCC "
      "unroll/ivdep/diagnostic"));
}

// The identifiers of pragma text (its first words decide what it is).
std::vector<std::string> PragmaWords(absl::string_view text) {
  std::vector<std::string> words;
  size_t i = 0;
  while (i < text.size() && words.size() < 2) {
    if (IsIdentStart(text[i])) {
      size_t j = i;
      while (j < text.size() && IsIdentChar(text[j])) ++j;
      words.emplace_back(text.substr(i, j - i));
      i = j;
    } else if (IsBlank(text[i])) {
      ++i;
    } else {
      // Punctuation or a number before a pragma's name: not one of ours.
      if (words.empty()) words.emplace_back(text.substr(i, 1));
      break;
    }
  }
  return words;
}

// The identifiers that probe or name files on the agent.
absl::string_view FileIdentifierReason(absl::string_view id) {
  if (id == "__has_include" || id == "__has_include_next" ||
      id == "__has_embed") {
    return "a kernel may not probe the agent's files";
  }
  if (id == "__FILE__" || id == "__FILE_NAME__" || id == "__BASE_FILE__" ||
      id == "__TIMESTAMP__") {
    return "a kernel may not see the agent's file names or times";
  }
  return "";
}

class Checker {
 public:
  explicit Checker(const Logical& in) : t_(in.text), lines_(in.line) {}

  absl::Status Run() {
    bool line_start = true;  // only blanks and comments since the newline
    while (i_ < t_.size()) {
      const char c = t_[i_];
      if (c == '\n') {
        line_start = true;
        ++i_;
      } else if (IsBlank(c)) {
        ++i_;
      } else if (At("//")) {
        while (i_ < t_.size() && t_[i_] != '\n') ++i_;
      } else if (At("/*")) {
        // A comment over lines ends one: what follows may be a directive
        // (to some compilers; checking it as one is the safe reading).
        const size_t start = i_;
        if (absl::Status s = SkipBlockComment(); !s.ok()) return s;
        if (t_.find('\n', start) < i_) line_start = true;
      } else if (line_start && (c == '#' || At("%:"))) {
        line_start = false;
        if (absl::Status s = Directive(); !s.ok()) return s;
      } else {
        line_start = false;
        if (absl::Status s = Token(); !s.ok()) return s;
      }
    }
    return absl::OkStatus();
  }

 private:
  bool At(absl::string_view s) const {
    return absl::string_view(t_).substr(i_, s.size()) == s;
  }
  int Line() const {
    return i_ < lines_.size() ? lines_[i_]
                              : (lines_.empty() ? 1 : lines_.back());
  }

  absl::Status SkipBlockComment() {
    const int line = Line();
    const size_t end = t_.find("*/", i_ + 2);
    if (end == std::string::npos) {
      return NotAllowed(line, "an unterminated comment", "close it with */");
    }
    i_ = end + 2;
    return absl::OkStatus();
  }

  // Blanks and comments within the current line (a block comment may run
  // over lines: the directive then goes on, as in clang).
  absl::Status SkipBlanks() {
    while (i_ < t_.size()) {
      if (IsBlank(t_[i_])) {
        ++i_;
      } else if (At("/*")) {
        if (absl::Status s = SkipBlockComment(); !s.ok()) return s;
      } else {
        break;
      }
    }
    return absl::OkStatus();
  }

  absl::Status Directive() {
    const int line = Line();
    i_ += t_[i_] == '#' ? 1 : 2;
    if (absl::Status s = SkipBlanks(); !s.ok()) return s;
    if (i_ >= t_.size() || t_[i_] == '\n' || At("//")) {
      return absl::OkStatus();  // the null directive
    }
    if (absl::ascii_isdigit(static_cast<unsigned char>(t_[i_]))) {
      return NotAllowed(line, "a line marker (# <number> \"file\")",
                        "a kernel may not forge where its text comes from");
    }
    if (!IsIdentStart(t_[i_])) {
      return NotAllowed(
          line, absl::StrCat("'#", absl::CEscape(t_.substr(i_, 1)), "'"),
          "a directive needs a name");
    }
    const size_t start = i_;
    while (i_ < t_.size() && IsIdentChar(t_[i_])) ++i_;
    const std::string name = t_.substr(start, i_ - start);
    for (const char* allowed :
         {"define", "undef", "if", "ifdef", "ifndef", "elif", "elifdef",
          "elifndef", "else", "endif", "error", "warning"}) {
      if (name == allowed) return absl::OkStatus();  // the rest: as code
    }
    if (name == "pragma") return PragmaLine(line);
    if (name == "include" || name == "include_next" || name == "import" ||
        name == "embed") {
      return NotAllowed(line, absl::StrCat("#", name),
                        "a kernel source may not read files; the agent "
                        "compiles only the text it is sent (inline the "
                        "header, or name it in the spec's preamble)");
    }
    if (name == "line") {
      return NotAllowed(line, "#line",
                        "a kernel may not forge where its text comes from");
    }
    return NotAllowed(line, absl::StrCat("#", name),
                      "the directives allowed are #define, #undef, #if, "
                      "#ifdef, #ifndef, #elif, #else, #endif, #error, "
                      "#warning and #pragma");
  }

  // The rest of a #pragma line, comments dropped, checked as one pragma.
  absl::Status PragmaLine(int line) {
    std::string text;
    while (i_ < t_.size() && t_[i_] != '\n') {
      if (At("//")) {
        while (i_ < t_.size() && t_[i_] != '\n') ++i_;
      } else if (At("/*")) {
        if (absl::Status s = SkipBlockComment(); !s.ok()) return s;
        text.push_back(' ');
      } else {
        text.push_back(t_[i_++]);
      }
    }
    if (absl::Status s = CheckPragmaWords(PragmaWords(text)); !s.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("line ", line, ": ", s.message()));
    }
    // Its words as code: literals, identifiers, characters.
    const std::string rest = text;
    Logical sub;
    sub.text = rest;
    sub.line.assign(rest.size(), line);
    Checker nested(sub);
    return nested.Run();
  }

  // A string or character literal from its opening quote to the closing
  // one or the line's end (where compilers end an unterminated one).
  std::string Literal() {
    const char quote = t_[i_++];
    std::string body;
    while (i_ < t_.size() && t_[i_] != quote && t_[i_] != '\n') {
      if (t_[i_] == '\\' && i_ + 1 < t_.size() && t_[i_ + 1] != '\n') {
        body.push_back(t_[i_ + 1]);
        i_ += 2;
        continue;
      }
      body.push_back(t_[i_++]);
    }
    if (i_ < t_.size() && t_[i_] == quote) ++i_;
    return body;
  }

  // _Pragma ( "string-literal" ): the pragma in the literal is checked.
  absl::Status PragmaOperator(int line) {
    auto skip = [&]() -> absl::Status {
      while (i_ < t_.size()) {
        if (IsBlank(t_[i_]) || t_[i_] == '\n') {
          ++i_;
        } else if (At("/*")) {
          if (absl::Status s = SkipBlockComment(); !s.ok()) return s;
        } else if (At("//")) {
          while (i_ < t_.size() && t_[i_] != '\n') ++i_;
        } else {
          break;
        }
      }
      return absl::OkStatus();
    };
    const absl::Status refused = NotAllowed(
        line, "_Pragma without a string literal",
        "write _Pragma(\"unroll\") (the pragma must be visible to be "
        "checked)");
    if (absl::Status s = skip(); !s.ok()) return s;
    if (i_ >= t_.size() || t_[i_] != '(') return refused;
    ++i_;
    if (absl::Status s = skip(); !s.ok()) return s;
    if (At("L\"")) ++i_;
    if (i_ >= t_.size() || t_[i_] != '"') return refused;
    const std::string pragma = Literal();
    if (absl::Status s = skip(); !s.ok()) return s;
    if (i_ >= t_.size() || t_[i_] != ')') return refused;
    ++i_;
    if (absl::Status s = CheckPragmaWords(PragmaWords(pragma)); !s.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("line ", line, ": ", s.message()));
    }
    return absl::OkStatus();
  }

  // One token of code (or of a directive's rest).
  absl::Status Token() {
    const int line = Line();
    const char c = t_[i_];
    if (c == '"' || c == '\'') {
      Literal();
      return absl::OkStatus();
    }
    if (IsIdentStart(c)) {
      const size_t start = i_;
      while (i_ < t_.size() && IsIdentChar(t_[i_])) ++i_;
      const absl::string_view id(t_.data() + start, i_ - start);
      if (i_ < t_.size() && t_[i_] == '"' &&
          (id == "R" || id == "LR" || id == "uR" || id == "UR" ||
           id == "u8R")) {
        return NotAllowed(line, "a raw string literal",
                          "its lines would escape the check");
      }
      if (absl::string_view why = FileIdentifierReason(id); !why.empty()) {
        return NotAllowed(line, id, why);
      }
      if (id == "_Pragma") return PragmaOperator(line);
      return absl::OkStatus();
    }
    if (absl::ascii_isdigit(static_cast<unsigned char>(c)) ||
        (c == '.' && i_ + 1 < t_.size() &&
         absl::ascii_isdigit(static_cast<unsigned char>(t_[i_ + 1])))) {
      // A preprocessing number: digits, letters, '_', '.', and a sign
      // after an exponent (1e-3, 0x1p+4).
      ++i_;
      while (i_ < t_.size()) {
        const char d = t_[i_];
        if ((d == '+' || d == '-') &&
            (t_[i_ - 1] == 'e' || t_[i_ - 1] == 'E' || t_[i_ - 1] == 'p' ||
             t_[i_ - 1] == 'P')) {
          ++i_;
        } else if (IsIdentChar(d) || d == '.') {
          ++i_;
        } else {
          break;
        }
      }
      return absl::OkStatus();
    }
    if (c == '\\') {
      return NotAllowed(line, "a backslash outside a literal",
                        "universal character names (\\u...) may only stand "
                        "in strings");
    }
    const unsigned char u = static_cast<unsigned char>(c);
    if (u >= 0x80) {
      return NotAllowed(line, "a non-ASCII byte outside comments and literals",
                        "identifiers and operators are ASCII");
    }
    if (u < 0x20 || u == 0x7f) {
      return NotAllowed(line,
                        absl::StrCat("the control character 0x",
                                     absl::Hex(u, absl::kZeroPad2)),
                        "only blanks and newlines separate tokens");
    }
    ++i_;  // punctuation
    return absl::OkStatus();
  }

  const std::string& t_;
  const std::vector<int>& lines_;
  size_t i_ = 0;
};

}  // namespace

absl::Status CheckPragma(absl::string_view pragma) {
  return CheckPragmaWords(PragmaWords(pragma));
}

absl::Status CheckKernelSource(absl::string_view source) {
  Logical logical;
  if (absl::Status s = Splice(source, &logical); !s.ok()) return s;
  return Checker(logical).Run();
}

}  // namespace tunefleet::kernel_policy
