// Every command line of tunefleet, tunefleet-server and tunefleet-agent in
// README.md, docs/*.md and the READMEs of the folders (bench/, deploy/...,
// examples/...), in fenced code blocks and inline code spans, checked
// against the built binaries' own --help: its subcommands exist and every
// flag it uses is one its subcommand lists (tests/support/doc_commands.h).
// A renamed flag or subcommand fails here, naming file:line, until the
// guides say the new name. The planted texts below show that it can fail.
#include <filesystem>
#include <iostream>
#include <iterator>
#include <map>
#include <regex>
#include <string>
#include <utility>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/support/command_runner.h"
#include "tests/support/doc_commands.h"

namespace tunefleet::testing {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::SizeIs;

std::map<std::string, std::string> Binaries() {
  return {{"tunefleet", CliBinary()},
          {"tunefleet-server", BinaryDir() + "/server/tunefleet-server"},
          {"tunefleet-agent", BinaryDir() + "/device_agent/tunefleet-agent"}};
}

// README.md, docs/*.md and every README.md one or two folders down (not
// in hidden folders nor build trees), relative to the source tree.
std::vector<std::string> DocFiles() {
  namespace fs = std::filesystem;
  const fs::path root = SourceDir();
  std::vector<std::string> files = {"README.md"};
  for (const auto& entry : fs::directory_iterator(root / "docs")) {
    if (entry.path().extension() == ".md")
      files.push_back(fs::relative(entry.path(), root).string());
  }
  auto skipped = [](const fs::path& dir) {
    const std::string name = dir.filename().string();
    return name.empty() || name[0] == '.' || name.rfind("build", 0) == 0 ||
           name == "node_modules";
  };
  for (const auto& top : fs::directory_iterator(root)) {
    if (!top.is_directory() || skipped(top.path())) continue;
    if (fs::exists(top.path() / "README.md"))
      files.push_back(fs::relative(top.path() / "README.md", root).string());
    for (const auto& sub : fs::directory_iterator(top.path())) {
      if (sub.is_directory() && !skipped(sub.path()) &&
          fs::exists(sub.path() / "README.md"))
        files.push_back(fs::relative(sub.path() / "README.md", root).string());
    }
  }
  std::sort(files.begin() + 1, files.end());
  return files;
}

TEST(DocsCommands, EveryCommandIsKnownToItsBinary) {
  HelpCache help(Binaries());
  const std::vector<std::string> files = DocFiles();
  int fenced = 0, inline_spans = 0;
  std::vector<std::string> problems;
  for (const std::string& file : files) {
    const std::string text = ReadAll(SourceDir() + "/" + file);
    ASSERT_FALSE(text.empty()) << file;
    for (const DocCommand& c : ExtractDocCommands(text, file)) {
      (c.fenced ? fenced : inline_spans)++;
      for (std::string& p : CheckDocCommand(c, help))
        problems.push_back(std::move(p));
    }
  }
  std::cout << "docs_commands_test: " << fenced + inline_spans
            << " command lines (" << fenced << " in fenced blocks, "
            << inline_spans << " in inline code) in " << files.size()
            << " files, against " << help.runs() << " --help pages\n";
  // The guides and README hold more than this many; fewer means the
  // extraction broke, not that the docs are clean.
  EXPECT_GE(fenced, 40);
  EXPECT_GE(inline_spans, 80);
  EXPECT_GE(files.size(), 25u);
  std::string report;
  for (const std::string& p : problems) report += "\n  " + p;
  EXPECT_THAT(problems, ::testing::IsEmpty())
      << problems.size() << " stale command line(s) in the docs:" << report;
}

// The scripts the docs tell users to run (bash deploy/quickstart.sh, ...)
// are where the docs say.
TEST(DocsCommands, ScriptsTheDocsNameExist) {
  const std::regex kScript(
      R"((^|[^A-Za-z0-9_./-])((deploy|examples|bench|tests|\.ci)/)"
      R"([A-Za-z0-9_./-]+\.(sh|py|mjs)))");
  int scripts = 0;
  for (const std::string& file : DocFiles()) {
    const std::string text = ReadAll(SourceDir() + "/" + file);
    for (std::sregex_iterator it(text.begin(), text.end(), kScript), end;
         it != end; ++it) {
      const std::string path = (*it)[2].str();
      ++scripts;
      EXPECT_TRUE(std::filesystem::exists(SourceDir() + "/" + path))
          << file << " names " << path << ", which is not in the tree";
    }
  }
  EXPECT_GE(scripts, 30);
}

// The extraction alone, on the forms the guides use.
TEST(DocsCommands, ExtractsEveryFormOfCommandLine) {
  const std::string text = R"(Intro `tunefleet query --json` and a mention of
`tunefleet-agent` (no arguments: not a command), `tunefleet_tuned::Model`.

```sh
# tunefleet tune --a-comment
TUNEFLEET_TOKEN=x tunefleet tune --op gemm \
    --shape 'M=1,N=1,K=1' --trials 2   # a comment
(umask 077; sudo tunefleet token add --role agent --tokens t > agent.token)
tunefleet jobs --json | jq . && tunefleet-server --db a.db 2>/dev/null &
adb shell "cd /d; HOME=/d setsid nohup ./tunefleet-agent --server h:1"
tunefleet records export (--db FILE | --server ADDR) [--json]
```

```
$ build/cli/tunefleet devices --db t.db
tunefleet devices: an output line
  tunefleet-server          (a diagram)
```

```cpp
tunefleet tune --in-cpp-block
```
)";
  const std::vector<DocCommand> c = ExtractDocCommands(text, "planted.md");
  ASSERT_THAT(c, SizeIs(8));
  EXPECT_EQ(c[0].line, 1);
  EXPECT_FALSE(c[0].fenced);
  EXPECT_THAT(c[0].args, ElementsAre("query", "--json"));
  EXPECT_EQ(c[1].line, 6);
  EXPECT_TRUE(c[1].fenced);
  EXPECT_THAT(c[1].args, ElementsAre("tune", "--op", "gemm", "--shape",
                                     "M=1,N=1,K=1", "--trials", "2"));
  EXPECT_THAT(c[2].args,
              ElementsAre("token", "add", "--role", "agent", "--tokens", "t"));
  EXPECT_EQ(c[3].binary, "tunefleet");
  EXPECT_THAT(c[3].args, ElementsAre("jobs", "--json"));
  EXPECT_EQ(c[4].binary, "tunefleet-server");
  EXPECT_THAT(c[4].args, ElementsAre("--db", "a.db"));
  EXPECT_EQ(c[5].binary, "tunefleet-agent");
  EXPECT_THAT(c[5].args, ElementsAre("--server", "h:1"));
  EXPECT_THAT(c[6].args, ElementsAre("records", "export", "--db", "FILE",
                                     "--server", "ADDR", "--json"));
  EXPECT_EQ(c[7].line, 15);
  EXPECT_THAT(c[7].args, ElementsAre("devices", "--db", "t.db"));
}

// CLI11's help format as the binaries print it.
TEST(DocsCommands, ParsesAHelpPage) {
  const HelpPage page = ParseHelpPage(R"(tunefleet: the CLI.
  tunefleet tune --op gemm (an example before Usage: not an option)
Usage: tunefleet token [OPTIONS] SUBCOMMAND

Options:
  -h,--help                   Print this help message and exit
  --tokens TEXT REQUIRED      tokens file
  --role TEXT:{agent,tuner,reader} REQUIRED
                              agent, tuner or reader (-x is not a flag)
  --input-shape TEXT ...      repeat
  --no-auth Excludes: --tokens
                              no tokens

Positionals:
  job INT REQUIRED            job id

Subcommands:
  add                         make a token
  list                        names and roles
)");
  ASSERT_TRUE(page.ok);
  EXPECT_TRUE(page.subcommand_required);
  EXPECT_THAT(page.subcommands, ElementsAre("add", "list"));
  EXPECT_EQ(page.positionals, 1);
  ASSERT_EQ(page.options.size(), 6u);
  EXPECT_FALSE(page.options.at("-h").takes_value);
  EXPECT_FALSE(page.options.at("--help").takes_value);
  EXPECT_TRUE(page.options.at("--tokens").takes_value);
  EXPECT_TRUE(page.options.at("--role").takes_value);
  EXPECT_TRUE(page.options.at("--input-shape").repeats);
  EXPECT_FALSE(page.options.at("--no-auth").takes_value);
  EXPECT_FALSE(ParseHelpPage("no usage here").ok);
}

// Stale lines planted in a doc text are reported against the real
// binaries' help, each naming its line and what is unknown; comments,
// output, placeholders and valid lines are not.
TEST(DocsCommands, PlantedStaleLinesAreReported) {
  const std::string text =
      R"(Prose: `tunefleet frobnicate --x` and `tunefleet tune --op gemm`.

```sh
# tunefleet tune --in-a-comment
tunefleet tune --op gemm --shape M=1,N=1,K=1 --made-up-flag 3
TUNEFLEET_TOKEN=abc tunefleet query --db t.db \
    --also-made-up
tunefleet emit --db t.db --device-key K --out o && tunefleet-server --listen 127.0.0.1:0 --bogus-server-flag
tunefleet jobs --json | tunefleet nosuchsub --db t.db
tunefleet token frobnicate --tokens t
tunefleet <command> --help
tunefleet token <sub> --tokens t --not-anywhere
tunefleet watch 12 13 --server h:1
tunefleet token
tunefleet watch|cancel 12 --server h:1
```

```
$ tunefleet-agent --info --no-such-agent-flag
tunefleet tune --an-output-line
```
)";
  HelpCache help(Binaries());
  std::vector<std::string> problems;
  for (const DocCommand& c : ExtractDocCommands(text, "planted.md")) {
    for (std::string& p : CheckDocCommand(c, help))
      problems.push_back(std::move(p));
  }
  std::string all;
  for (const std::string& p : problems) all += p + "\n";
  ASSERT_THAT(problems, SizeIs(10)) << all;
  EXPECT_THAT(problems[0],
              HasSubstr("planted.md:1: `tunefleet frobnicate --x`: unknown "
                        "subcommand `tunefleet frobnicate`"));
  // problems[1] on: where each was planted, and what it says.
  const std::pair<const char*, const char*> later[] = {
      {"planted.md:5: ",
       "unknown flag --made-up-flag (not in `tunefleet tune --help`)"},
      {"planted.md:6: ", "unknown flag --also-made-up"},
      {"planted.md:8: ",
       "unknown flag --bogus-server-flag (not in `tunefleet-server --help`)"},
      {"planted.md:9: ", "unknown subcommand `tunefleet nosuchsub`"},
      {"planted.md:10: ", "unknown subcommand `tunefleet token frobnicate`"},
      {"planted.md:12: ",
       "unknown flag --not-anywhere (not in `tunefleet token --help` nor "
       "below it)"},
      {"planted.md:13: ", "unexpected argument `13`"},
      {"planted.md:14: ", "`tunefleet token` needs a subcommand"},
      {"planted.md:19: ", "unknown flag --no-such-agent-flag"},
  };
  for (size_t i = 0; i < std::size(later); ++i) {
    EXPECT_THAT(problems[i + 1], HasSubstr(later[i].first)) << i + 1;
    EXPECT_THAT(problems[i + 1], HasSubstr(later[i].second)) << i + 1;
  }
  // Each --help ran once however often the text used it.
  const int runs = help.runs();
  for (const DocCommand& c : ExtractDocCommands(text, "planted.md"))
    CheckDocCommand(c, help);
  EXPECT_EQ(help.runs(), runs);
}

}  // namespace
}  // namespace tunefleet::testing
