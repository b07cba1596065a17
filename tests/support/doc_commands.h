// The command lines of tunefleet's binaries written in Markdown, and a
// check of each against the binary's own --help (tests/integration/
// docs_commands_test.cc): a renamed flag or subcommand must not leave a
// stale guide behind.
#ifndef TUNEFLEET_TESTS_SUPPORT_DOC_COMMANDS_H_
#define TUNEFLEET_TESTS_SUPPORT_DOC_COMMANDS_H_

#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace tunefleet::testing {

// The binaries whose command lines are checked.
inline const std::set<std::string>& DocBinaries() {
  static const std::set<std::string> names = {"tunefleet", "tunefleet-server",
                                              "tunefleet-agent"};
  return names;
}

// One invocation of a binary of DocBinaries() in a Markdown file.
struct DocCommand {
  std::string file;
  int line = 0;        // 1-based: the first line of the command
  std::string text;    // the (continuation-joined) line as written
  std::string binary;  // "tunefleet", "tunefleet-server", "tunefleet-agent"
  std::vector<std::string> args;  // the words after the binary, unquoted
  bool fenced = false;  // in a fenced code block (else an inline `span`)
};

// Every invocation in `markdown`, named `file` in the results:
//  - in fenced code blocks of shell (sh, bash, shell, console) or of no
//    language: `\` continuations joined; comment lines skipped; where the
//    block has `$ ` prompts only the prompted lines are commands (the rest
//    is output); in a block of no language only lines at the fence's
//    column (indented lines there are diagrams or output);
//  - in inline code spans with at least one word after the binary.
// In a line, every command of a list or pipeline counts (`;`, `&&`, `||`,
// `|`, `&`, `$(...)`, a subshell's `(`), and the text of a quoted argument
// (adb shell "...", ssh host '...') is searched too. Before the binary:
// VAR=value prefixes, sudo, env, exec, nohup, setsid, time, timeout N.
// A `|` followed by a flag (`(--db FILE | --server ADDR)`) or inside a
// word (`agent|tuner`) is a synopsis' alternative, not a pipe; `[`, `]`,
// `(`, `)` around words are synopsis brackets and dropped; redirections
// and their targets are dropped.
std::vector<DocCommand> ExtractDocCommands(std::string_view markdown,
                                           const std::string& file);

// What one `--help` page (CLI11's format) says.
struct HelpPage {
  bool ok = false;
  std::string error;  // why not ok: the exit code and output
  struct Option {
    bool takes_value = false;  // a type follows the name (TEXT, INT, ...)
    bool repeats = false;      // "TEXT ..." : more than one value
  };
  std::map<std::string, Option> options;  // "--op", "-h", ... -> Option
  std::vector<std::string> subcommands;
  bool subcommand_required = false;  // "Usage: ... SUBCOMMAND" (no [])
  int positionals = 0;               // names under "Positionals:"
  bool positional_repeats = false;
};

// Parses the text of `BINARY [SUBCOMMAND...] --help`.
HelpPage ParseHelpPage(std::string_view text);

// The help pages of the binaries, each `--help` run once.
class HelpCache {
 public:
  // `binaries`: name -> path of the built binary.
  explicit HelpCache(std::map<std::string, std::string> binaries)
      : binaries_(std::move(binaries)) {}
  // The page of `binary` `path...` --help (not ok if it fails).
  const HelpPage& Get(const std::string& binary,
                      const std::vector<std::string>& path);
  // Every option of `path` and of the subcommands below it, recursively.
  std::set<std::string> OptionsBelow(const std::string& binary,
                                     const std::vector<std::string>& path);
  int runs() const { return runs_; }

 private:
  std::map<std::string, std::string> binaries_;
  std::map<std::string, HelpPage> pages_;
  int runs_ = 0;
};

// The problems of `command` against its binary's help: a subcommand its
// parent does not list (or whose --help fails), a flag its subcommand's
// help does not list, an argument where the subcommand takes none. Each
// problem is one line naming file:line, the command and what is unknown.
// Placeholders (`<command>`, `...`, an ALL-CAPS word) where a subcommand
// would be leave the subcommand open: its flags must then be known to the
// binary at that level or to some subcommand below it.
std::vector<std::string> CheckDocCommand(const DocCommand& command,
                                         HelpCache& help);

}  // namespace tunefleet::testing

#endif  // TUNEFLEET_TESTS_SUPPORT_DOC_COMMANDS_H_
