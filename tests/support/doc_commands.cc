#include "tests/support/doc_commands.h"

#include <algorithm>
#include <cctype>
#include <regex>
#include <sstream>

#include "tests/support/command_runner.h"

namespace tunefleet::testing {
namespace {

// ---- Shell words --------------------------------------------------------

struct Word {
  std::string text;
  bool quoted = false;        // some part of it was quoted
  bool fully_quoted = false;  // one quoted string and nothing else
};

struct Token {
  enum Kind { kWord, kSeparator, kPipe, kRedirect } kind = kWord;
  Word word;
  bool needs_target = false;  // kRedirect: the next word is its target
};

bool IsSpace(char c) { return c == ' ' || c == '\t'; }

// Splits one logical shell line into words and operators, stopping at an
// unquoted `#` that starts a word.
std::vector<Token> Tokenize(std::string_view s) {
  std::vector<Token> tokens;
  Word word;
  bool in_word = false;
  int quoted_parts = 0, plain_chars = 0;
  auto finish = [&] {
    if (in_word) {
      word.fully_quoted = quoted_parts == 1 && plain_chars == 0;
      tokens.push_back({Token::kWord, word});
    }
    word = Word();
    in_word = false;
    quoted_parts = plain_chars = 0;
  };
  auto separator = [&] {
    finish();
    tokens.push_back({Token::kSeparator, {}});
  };
  auto append = [&](char c) {
    word.text += c;
    in_word = true;
    ++plain_chars;
  };
  for (size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    const char next = i + 1 < s.size() ? s[i + 1] : '\0';
    if (IsSpace(c)) {
      finish();
    } else if (c == '#' && !in_word) {
      break;
    } else if (c == '\'' || c == '"') {
      size_t j = i + 1;
      while (j < s.size() && s[j] != c) {
        if (c == '"' && s[j] == '\\' && j + 1 < s.size()) ++j;
        word.text += s[j++];
      }
      in_word = word.quoted = true;
      ++quoted_parts;
      i = j;
    } else if (c == '\\') {
      if (next != '\0') {
        append(next);
        ++i;
      }
    } else if (c == ';' || c == '`') {
      separator();
    } else if (c == '&') {
      separator();
      if (next == '&') ++i;
    } else if (c == '|') {
      if (next == '|') {
        separator();
        ++i;
      } else if (in_word && next != '\0' && !IsSpace(next)) {
        append(c);  // agent|tuner: alternatives in one word
      } else {
        finish();
        tokens.push_back({Token::kPipe, {}});
      }
    } else if (c == '$' && next == '(') {
      separator();
      ++i;
    } else if (c == '<' && std::isalpha(static_cast<unsigned char>(next)) &&
               s.find('>', i) != std::string_view::npos &&
               s.find('>', i) < s.find_first_of(" \t", i)) {
      const size_t end = s.find('>', i);  // a <placeholder>
      for (; i <= end; ++i) append(s[i]);
      --i;
    } else if (c == '>' || c == '<') {
      // A redirection: [fd]>[>][&fd] or < FILE; a word of digits before it
      // is its file descriptor.
      const bool digits_before =
          in_word && !word.quoted &&
          std::all_of(word.text.begin(), word.text.end(),
                      [](char d) { return std::isdigit(d); });
      if (digits_before) {
        word = Word();
        in_word = false;
      }
      finish();
      size_t j = i + 1;
      while (j < s.size() && (s[j] == '>' || s[j] == '&')) ++j;
      bool has_fd = false;
      while (j < s.size() && std::isdigit(static_cast<unsigned char>(s[j]))) {
        ++j;
        has_fd = true;
      }
      Token t{Token::kRedirect, {}};
      t.needs_target = !has_fd && (j >= s.size() || IsSpace(s[j]));
      tokens.push_back(t);
      if (!t.needs_target && !has_fd) {
        // >file: the target is glued to the operator; skip it.
        while (j < s.size() && !IsSpace(s[j])) ++j;
      }
      i = j - 1;
    } else {
      append(c);
    }
  }
  finish();
  return tokens;
}

bool IsAssignment(const Word& w) {
  static const std::regex kAssign("^[A-Za-z_][A-Za-z0-9_]*=.*");
  return !w.text.empty() && !(w.fully_quoted) &&
         std::regex_match(w.text, kAssign);
}

std::string StripBrackets(std::string s) {
  while (!s.empty() &&
         (s.front() == '[' || s.front() == '(' || s.front() == '{'))
    s.erase(0, 1);
  while (!s.empty() && (s.back() == ']' || s.back() == ')' || s.back() == '}'))
    s.pop_back();
  return s;
}

std::string Basename(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

void ExtractFromLine(const std::string& line, const DocCommand& where,
                     std::vector<DocCommand>& out, int depth = 0);

// One simple command's words: the invocation of a binary of ours after its
// prefixes, if it is one; otherwise its quoted arguments are searched.
void ExtractFromSegment(std::vector<Word> words, const DocCommand& where,
                        std::vector<DocCommand>& out, int depth) {
  size_t i = 0;
  // A subshell's or group's opening bracket.
  while (i < words.size() && !words[i].quoted) {
    const std::string stripped = [&] {
      std::string t = words[i].text;
      while (!t.empty() && (t.front() == '(' || t.front() == '{'))
        t.erase(0, 1);
      return t;
    }();
    if (stripped.empty()) {
      ++i;
      continue;
    }
    words[i].text = stripped;
    break;
  }
  // The words before the command: VAR=value, and commands that run another.
  static const std::set<std::string> kRunners = {"exec", "nohup", "setsid",
                                                 "time"};
  while (i < words.size()) {
    const std::string& w = words[i].text;
    if (IsAssignment(words[i]) || kRunners.count(w) > 0) {
      ++i;
    } else if (w == "timeout") {
      i += 2;  // its duration
    } else if (w == "sudo" || w == "env") {
      ++i;
      while (i < words.size() && words[i].text.size() > 1 &&
             words[i].text[0] == '-') {
        const bool value = words[i].text == "-u" || words[i].text == "-g";
        i += value ? 2 : 1;
      }
    } else {
      break;
    }
  }
  if (i >= words.size()) return;
  const std::string name = Basename(StripBrackets(words[i].text));
  if (!words[i].quoted && DocBinaries().count(name) > 0) {
    DocCommand command = where;
    command.binary = name;
    for (size_t j = i + 1; j < words.size(); ++j) {
      std::string arg =
          words[j].quoted ? words[j].text : StripBrackets(words[j].text);
      if (!arg.empty()) command.args.push_back(arg);
    }
    out.push_back(std::move(command));
    return;
  }
  for (; i < words.size(); ++i) {
    if (words[i].fully_quoted && words[i].text.find(' ') != std::string::npos &&
        depth < 3) {
      ExtractFromLine(words[i].text, where, out, depth + 1);
    }
  }
}

void ExtractFromLine(const std::string& line, const DocCommand& where,
                     std::vector<DocCommand>& out, int depth) {
  const std::vector<Token> tokens = Tokenize(line);
  std::vector<Word> segment;
  for (size_t i = 0; i < tokens.size(); ++i) {
    const Token& t = tokens[i];
    if (t.kind == Token::kWord) {
      segment.push_back(t.word);
    } else if (t.kind == Token::kRedirect) {
      if (t.needs_target && i + 1 < tokens.size() &&
          tokens[i + 1].kind == Token::kWord)
        ++i;
    } else if (t.kind == Token::kPipe && i + 1 < tokens.size() &&
               tokens[i + 1].kind == Token::kWord &&
               tokens[i + 1].word.text.rfind("-", 0) == 0) {
      // (--db FILE | --server ADDR): alternatives of a synopsis.
    } else {
      ExtractFromSegment(std::move(segment), where, out, depth);
      segment.clear();
    }
  }
  ExtractFromSegment(std::move(segment), where, out, depth);
}

std::vector<std::string> Lines(std::string_view text) {
  std::vector<std::string> lines;
  std::istringstream in{std::string(text)};
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    lines.push_back(line);
  }
  return lines;
}

size_t Indent(const std::string& line) {
  const size_t n = line.find_first_not_of(" \t");
  return n == std::string::npos ? line.size() : n;
}

std::string TrimRight(std::string s) {
  while (!s.empty() && IsSpace(s.back())) s.pop_back();
  return s;
}

// The commands of one fenced block: `lines` (of the file, 0-based
// `first`..`last` exclusive) inside a fence at column `indent`.
void ExtractFromBlock(const std::vector<std::string>& lines, size_t first,
                      size_t last, size_t indent, bool shell,
                      const std::string& file, std::vector<DocCommand>& out) {
  struct Logical {
    int line;
    std::string text;
  };
  std::vector<Logical> logical;
  // A line without the fence's indentation.
  auto dedented = [&](size_t i) {
    return TrimRight(lines[i].substr(std::min(indent, Indent(lines[i]))));
  };
  for (size_t i = first; i < last; ++i) {
    const int number = static_cast<int>(i) + 1;
    std::string text = dedented(i);
    while (!text.empty() && text.back() == '\\' && i + 1 < last) {
      text.pop_back();
      text += ' ';
      text += dedented(++i);
    }
    logical.push_back({number, text});
  }
  const bool prompted =
      std::any_of(logical.begin(), logical.end(),
                  [](const Logical& l) { return l.text.rfind("$ ", 0) == 0; });
  for (const Logical& l : logical) {
    std::string text = l.text;
    if (prompted) {
      if (text.rfind("$ ", 0) != 0) continue;  // output
      text = text.substr(2);
    } else if (!shell && Indent(text) > 0) {
      continue;  // a diagram or output in a block of no language
    }
    const size_t start = Indent(text);
    if (start < text.size() && text[start] == '#') continue;  // a comment
    DocCommand where;
    where.file = file;
    where.line = l.line;
    where.text = text.substr(start);
    where.fenced = true;
    ExtractFromLine(text, where, out);
  }
}

// The commands of the inline code spans of `text` (lines outside fences;
// `first_line` is the 1-based number of its first line).
void ExtractFromSpans(const std::string& text, int first_line,
                      const std::string& file, std::vector<DocCommand>& out) {
  int line = first_line;
  for (size_t i = 0; i < text.size();) {
    if (text[i] == '\n') {
      ++line, ++i;
      continue;
    }
    if (text[i] != '`') {
      ++i;
      continue;
    }
    size_t run = text.find_first_not_of('`', i) - i;
    const std::string fence(run, '`');
    size_t close = text.find(fence, i + run);
    while (close != std::string::npos && close + run < text.size() &&
           text[close + run] == '`')
      close = text.find(fence, text.find_first_not_of('`', close));
    if (close == std::string::npos) break;
    std::string span = text.substr(i + run, close - i - run);
    const int span_line = line;
    for (char c : span) line += c == '\n';
    std::replace(span.begin(), span.end(), '\n', ' ');
    // A `|` escaped for a table cell.
    for (size_t p; (p = span.find("\\|")) != std::string::npos;)
      span.erase(p, 1);
    i = close + run;
    if (span.rfind("$ ", 0) == 0) span = span.substr(2);
    DocCommand where;
    where.file = file;
    where.line = span_line;
    where.text = span;
    std::vector<DocCommand> found;
    ExtractFromLine(span, where, found);
    for (DocCommand& c : found) {
      if (!c.args.empty()) out.push_back(std::move(c));
    }
  }
}

}  // namespace

std::vector<DocCommand> ExtractDocCommands(std::string_view markdown,
                                           const std::string& file) {
  static const std::regex kFence(R"(^(\s*)(```+|~~~+)\s*([^\s`]*).*$)");
  const std::vector<std::string> lines = Lines(markdown);
  std::vector<DocCommand> out;
  std::string prose;
  int prose_first = 1;
  auto flush_prose = [&](int next_line) {
    ExtractFromSpans(prose, prose_first, file, out);
    prose.clear();
    prose_first = next_line;
  };
  for (size_t i = 0; i < lines.size(); ++i) {
    std::smatch m;
    if (!std::regex_match(lines[i], m, kFence)) {
      prose += lines[i] + "\n";
      continue;
    }
    flush_prose(static_cast<int>(i) + 1);
    const size_t indent = m[1].length();
    const std::string fence = m[2];
    const std::string language = m[3];
    size_t end = i + 1;
    for (; end < lines.size(); ++end) {
      const std::string t = TrimRight(lines[end].substr(Indent(lines[end])));
      if (t.size() >= fence.size() &&
          t.find_first_not_of(fence[0]) == std::string::npos)
        break;
    }
    static const std::set<std::string> kShell = {"sh", "bash", "shell",
                                                 "console", "zsh"};
    const bool shell = kShell.count(language) > 0;
    if (shell || language.empty() || language == "text") {
      ExtractFromBlock(lines, i + 1, end, indent, shell, file, out);
    }
    i = end;
    prose_first = static_cast<int>(end) + 2;
  }
  flush_prose(0);
  return out;
}

HelpPage ParseHelpPage(std::string_view text) {
  HelpPage page;
  page.ok = true;
  static const std::regex kSplit(R"(\s{2,})");
  static const std::regex kType(R"(^[A-Z]+([:=].*)?$)");
  std::string section;
  bool after_usage = false;
  for (const std::string& line : Lines(text)) {
    if (line.rfind("Usage:", 0) == 0) {
      after_usage = true;
      page.subcommand_required =
          line.find(" SUBCOMMAND") != std::string::npos &&
          line.find("[SUBCOMMAND]") == std::string::npos;
      continue;
    }
    if (!after_usage) continue;
    if (!line.empty() && line[0] != ' ' && line.back() == ':') {
      section = line.substr(0, line.size() - 1);
      continue;
    }
    if (line.rfind("  ", 0) != 0 || line.size() < 3 || line[2] == ' ')
      continue;  // not a name line (empty, or a description's next line)
    const std::string body = line.substr(2);
    const std::string head =
        std::sregex_token_iterator(body.begin(), body.end(), kSplit, -1)->str();
    std::istringstream words(head);
    std::vector<std::string> w;
    for (std::string x; words >> x;) w.push_back(x);
    if (w.empty()) continue;
    if (section == "Subcommands") {
      page.subcommands.push_back(w[0]);
    } else if (section == "Positionals") {
      ++page.positionals;
      page.positional_repeats |=
          std::find(w.begin(), w.end(), "...") != w.end();
    } else if (w[0][0] == '-') {
      HelpPage::Option option;
      option.takes_value =
          w.size() > 1 && w[1] != "REQUIRED" && std::regex_match(w[1], kType);
      option.repeats = std::find(w.begin(), w.end(), "...") != w.end();
      std::istringstream names(w[0]);
      for (std::string name; std::getline(names, name, ',');) {
        if (!name.empty()) page.options[name] = option;
      }
    }
  }
  if (!after_usage) {
    page.ok = false;
    page.error = "no Usage: line in the help";
  }
  return page;
}

const HelpPage& HelpCache::Get(const std::string& binary,
                               const std::vector<std::string>& path) {
  std::string key = binary;
  for (const std::string& p : path) key += " " + p;
  auto it = pages_.find(key);
  if (it != pages_.end()) return it->second;
  std::string command = "'" + binaries_.at(binary) + "'";
  for (const std::string& p : path) command += " '" + p + "'";
  ++runs_;
  const CommandResult r = RunCommand(command + " --help");
  HelpPage page = ParseHelpPage(r.out);
  if (r.exit_code != 0) {
    page.ok = false;
    page.error = "exit " + std::to_string(r.exit_code) + ": " + r.err;
  }
  return pages_.emplace(key, std::move(page)).first->second;
}

std::set<std::string> HelpCache::OptionsBelow(
    const std::string& binary, const std::vector<std::string>& path) {
  std::set<std::string> options;
  const HelpPage page = Get(binary, path);
  for (const auto& [name, option] : page.options) options.insert(name);
  for (const std::string& sub : page.subcommands) {
    std::vector<std::string> below = path;
    below.push_back(sub);
    for (const std::string& o : OptionsBelow(binary, below)) options.insert(o);
  }
  return options;
}

namespace {

bool IsPlaceholder(const std::string& word) {
  static const std::regex kCaps("^[A-Z][A-Z0-9_]*$");
  return (word.find('<') != std::string::npos &&
          word.find('>') != std::string::npos) ||
         word.find("...") != std::string::npos ||
         word.find("\u2026") != std::string::npos ||
         std::regex_match(word, kCaps);
}

bool IsFlag(const std::string& word) {
  static const std::regex kNumber(R"(^-[0-9.]+$)");
  return word.size() > 1 && word[0] == '-' && !std::regex_match(word, kNumber);
}

std::vector<std::string> Alternatives(const std::string& word) {
  std::vector<std::string> alternatives;
  std::istringstream in(word);
  for (std::string a; std::getline(in, a, '|');) {
    if (!a.empty()) alternatives.push_back(a);
  }
  return alternatives;
}

}  // namespace

std::vector<std::string> CheckDocCommand(const DocCommand& command,
                                         HelpCache& help) {
  std::vector<std::string> problems;
  std::vector<std::string> path;
  auto name = [&] {
    std::string n = command.binary;
    for (const std::string& p : path) n += " " + p;
    return n;
  };
  auto report = [&](const std::string& what) {
    problems.push_back(command.file + ":" + std::to_string(command.line) +
                       ": `" + command.text + "`: " + what);
  };
  const HelpPage* page = &help.Get(command.binary, path);
  if (!page->ok) {
    report("`" + name() + " --help` fails: " + page->error);
    return problems;
  }
  bool open = false;  // a placeholder stands where a subcommand would
  std::set<std::string> open_options;
  bool value_pending = false, repeating = false;
  int positionals = 0;
  for (const std::string& word : command.args) {
    if (word == "--") break;
    if (value_pending) {
      value_pending = false;
      continue;
    }
    if (IsFlag(word)) {
      repeating = false;
      const size_t eq = word.find('=');
      const std::string flag = word.substr(0, eq);
      const HelpPage::Option* found = nullptr;
      for (const std::string& alt : Alternatives(flag)) {
        if (alt.find('<') != std::string::npos) continue;
        auto it = page->options.find(alt);
        if (it != page->options.end()) {
          found = found ? found : &it->second;
          continue;
        }
        if (open && open_options.empty())
          open_options = help.OptionsBelow(command.binary, path);
        if (!open || open_options.count(alt) == 0) {
          report("unknown flag " + alt + " (not in `" + name() + " --help`" +
                 (open ? " nor below it" : "") + ")");
        }
      }
      if (eq == std::string::npos) {
        // An unknown flag is taken to have a value, so that one stale flag
        // is reported once, not again as an unexpected argument.
        value_pending = found ? found->takes_value : true;
        repeating = found && found->repeats;
      }
      continue;
    }
    if (repeating || open) continue;
    if (!page->subcommands.empty() && positionals == 0) {
      if (IsPlaceholder(word)) {
        open = true;  // its options below are read at its first flag
        continue;
      }
      const std::vector<std::string> alternatives = Alternatives(word);
      bool all_known = !alternatives.empty();
      for (const std::string& alt : alternatives) {
        if (std::find(page->subcommands.begin(), page->subcommands.end(),
                      alt) == page->subcommands.end()) {
          all_known = false;
          report("unknown subcommand `" + name() + " " + alt + "` (`" + name() +
                 " --help` lists: " +
                 [&] {
                   std::string list;
                   for (const std::string& s : page->subcommands)
                     list += (list.empty() ? "" : ", ") + s;
                   return list;
                 }() +
                 ")");
        }
      }
      if (!all_known) return problems;
      for (size_t a = 1; a < alternatives.size(); ++a) {
        std::vector<std::string> other = path;
        other.push_back(alternatives[a]);
        if (!help.Get(command.binary, other).ok)
          report("`" + name() + " " + alternatives[a] + " --help` fails");
      }
      path.push_back(alternatives[0]);
      page = &help.Get(command.binary, path);
      if (!page->ok) {
        report("`" + name() + " --help` fails: " + page->error);
        return problems;
      }
      continue;
    }
    if (positionals < page->positionals || page->positional_repeats ||
        IsPlaceholder(word)) {
      ++positionals;
      continue;
    }
    report("unexpected argument `" + word + "` (`" + name() +
           " --help` lists " + std::to_string(page->positionals) +
           " positional argument(s))");
  }
  const bool asks_help = std::find(command.args.begin(), command.args.end(),
                                   "--help") != command.args.end() ||
                         std::find(command.args.begin(), command.args.end(),
                                   "-h") != command.args.end();
  // (An inline span may name a group of subcommands: `tunefleet token`.)
  if (command.fenced && !open && !asks_help && page->subcommand_required) {
    report("`" + name() + "` needs a subcommand (`" + name() +
           " --help` lists them)");
  }
  return problems;
}

}  // namespace tunefleet::testing
