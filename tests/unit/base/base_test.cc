// Unit tests of tunefleet_base: files, hashes, JSON limits, child processes
// with deadlines, order statistics and time.
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <stdexcept>
#include <string>

#include "absl/strings/escaping.h"
#include "base/enum_names.h"
#include "base/files.h"
#include "base/flags.h"
#include "base/guarded_main.h"
#include "base/hash.h"
#include "base/host_port.h"
#include "base/json_limits.h"
#include "base/printable.h"
#include "base/stats.h"
#include "base/subprocess.h"
#include "base/time.h"
#include "gtest/gtest.h"

namespace tunefleet::base {
namespace {

std::string TestDir(const std::string& name) {
  const std::string dir =
      ::testing::TempDir() + "/base_test_" + std::to_string(getpid()) + name;
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

// GuardedMain: run()'s exit code, or report()'s with the exception's
// what() when run() throws.
TEST(GuardedMain, ReturnsRunsCodeOrReportsWhatItThrew) {
  std::string reported;
  auto report = [&reported](const char* what) {
    reported = what;
    return 7;
  };
  EXPECT_EQ(GuardedMain([] { return 3; }, report), 3);
  EXPECT_EQ(reported, "");
  EXPECT_EQ(
      GuardedMain([]() -> int { throw std::runtime_error("no such flag"); },
                  report),
      7);
  EXPECT_EQ(reported, "no such flag");
  EXPECT_EQ(GuardedMain([]() -> int { throw 42; }, report), 7);
  EXPECT_EQ(reported, "an unknown exception");
}

TEST(Hash, Sha256MatchesFips180Vectors) {
  EXPECT_EQ(absl::BytesToHexString(Sha256("abc")),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(absl::BytesToHexString(Sha256("")),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
}

TEST(Hash, Fnv1aMatchesPublishedVectors) {
  // Test vectors of the FNV-1a 64-bit hash (Fowler/Noll/Vo reference).
  EXPECT_EQ(Fnv1aHex(""), "cbf29ce484222325");
  EXPECT_EQ(Fnv1aHex("a"), "af63dc4c8601ec8c");
  EXPECT_EQ(Fnv1aHex("foobar"), "85944171f73967e8");
}

TEST(Files, AtomicWriteReplacesWholeFilesWithTheGivenMode) {
  const std::string dir = TestDir("files");
  const std::string path = dir + "/f.txt";
  ASSERT_TRUE(WriteFileAtomically(path, "first", 0600).ok());
  ASSERT_TRUE(WriteFileAtomically(path, "second", 0600, /*sync=*/true).ok());
  EXPECT_EQ(*ReadWholeFile(path), "second");
  struct stat st {};
  ASSERT_EQ(stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  // No temporary file is left behind.
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir),
                          std::filesystem::directory_iterator()),
            1);
  const absl::Status missing_dir =
      WriteFileAtomically(dir + "/no/such/dir/f", "x");
  EXPECT_TRUE(absl::IsNotFound(missing_dir)) << missing_dir;
  const auto missing = ReadWholeFile(dir + "/nope", "tokens file");
  EXPECT_TRUE(absl::IsNotFound(missing.status()));
  EXPECT_NE(missing.status().message().find("cannot read tokens file"),
            std::string::npos);
}

TEST(JsonLimits, DepthIgnoresBracketsInStrings) {
  EXPECT_EQ(JsonDepth("{}"), 1);
  EXPECT_EQ(JsonDepth(R"({"a": [[1], {"b": "[[[["}]})"), 3);
  EXPECT_EQ(JsonDepth(R"("\"[")"), 0);
  EXPECT_EQ(JsonDepth(std::string(100, '[')), 100);
}

TEST(JsonLimits, JsonShapeCountsValuesAndStrings) {
  const TextShape s = JsonShape(R"({"a": [1, 2, {"bb": "xyz\"w"}], "c": 3})");
  EXPECT_EQ(s.depth, 3);
  EXPECT_GE(s.values, 5u);  // a, its 3 items, bb, c (at most: counted loosely)
  EXPECT_EQ(s.longest_string, 6u);  // xyz\"w as written
  EXPECT_EQ(JsonShape("").values, 0u);
  EXPECT_EQ(JsonShape("1").values, 1u);
}

TEST(JsonLimits, TomlShapeCountsWhatToml_ppWouldBuild) {
  const std::pair<const char*, int> depths[] = {
      // The document's table is depth 1; a dotted key's every segment adds
      // one.
      {"", 1},
      {"a = 1\n", 1},
      {"a.b.c = 1\n", 3},
      {"a . \"b.c\" . 'd.e' = 1\n", 3},
      {"[t.u]\nx.y = 1\n", 4},
      {"[[t.u]]\nx = 1\n", 4},
      // A header through an earlier array of tables: a's last table holds b
      // (document 1, a 2, its table 3, b 4, b's table 5).
      {"[[a]]\n[[a.b]]\nx = 1\n", 5},
      {"a = [[1], [[2]]]\n", 4},
      {"a = { b = { c.d = 1 } }\n", 4},
      {"a = [ # [[[[\n 1, \"]]]\", '[[',\n]\n", 2},
      {"s = \"\"\"\nx.y.z = 1\n[a.b.c]\n\"\"\"\n", 1},
      {"# a.b.c.d = 1\n", 1},
  };
  for (const auto& [text, depth] : depths) {
    EXPECT_EQ(TomlShape(text).depth, depth) << text;
  }
  // 20,000 segments in 40 KB.
  std::string deep = "a";
  for (int i = 1; i < 20000; ++i) deep += ".a";
  EXPECT_EQ(TomlShape(deep + " = 1\n").depth, 20000);
  EXPECT_EQ(TomlShape(deep + " = 1\n").values, 20000u);
  EXPECT_EQ(TomlShape("[" + deep + "]\n").depth, 20001);
  EXPECT_EQ(TomlShape("a = " + std::string(300, '[')).depth, 301);
  // Keys (each segment) and array items; the longest string or key.
  const TextShape s = TomlShape("a.b = [1, 2, 3]\nlong = 'abcdefgh'\n");
  EXPECT_EQ(s.values, 6u);
  EXPECT_EQ(s.longest_string, 10u);  // 'abcdefgh' with its quotes
}

TEST(Printable, RefusesControlsEscapesAndBidiControls) {
  EXPECT_TRUE(IsPrintable(""));
  EXPECT_TRUE(IsPrintable("Mali-G610 r0p0 (OpenCL 3.0) \xc3\xa9\xe2\x82\xac"));
  EXPECT_FALSE(IsPrintable("a\nb"));
  EXPECT_FALSE(IsPrintable("a\tb"));
  EXPECT_FALSE(IsPrintable("\x1b[2J"));
  EXPECT_FALSE(IsPrintable("a\x7f"));
  EXPECT_FALSE(IsPrintable("\xc2\x9b"));      // C1 CSI
  EXPECT_FALSE(IsPrintable("\xe2\x80\xae"));  // U+202E right-to-left override
  EXPECT_FALSE(IsPrintable("\xe2\x81\xa6"));  // U+2066
  EXPECT_FALSE(IsPrintable("\xe2\x80\xa8"));  // U+2028 line separator
  EXPECT_FALSE(IsPrintable("\xff"));          // malformed
  EXPECT_FALSE(IsPrintable("\xc0\xaf"));      // overlong '/'
  EXPECT_FALSE(IsPrintable("\xed\xa0\x80"));  // a surrogate
}

TEST(Printable, EscapesWhatItRefuses) {
  EXPECT_EQ(EscapeUnprintable("plain \\ text"), "plain \\ text");
  EXPECT_EQ(EscapeUnprintable("a\n[server] b\x1b[2J\\"),
            "a\\n[server] b\\x1b[2J\\\\");
  EXPECT_EQ(EscapeUnprintable("x\xe2\x80\xaey\xffz"), "x\\u{202e}y\\xffz");
  EXPECT_TRUE(IsPrintable(EscapeUnprintable("\t\r\x01\xc2\x85")));
}

TEST(Stats, MedianAndNearestRankPercentile) {
  EXPECT_EQ(Median({}), 0);
  EXPECT_EQ(Median({3, 1, 2}), 2);
  EXPECT_EQ(Median({4, 1, 3, 2}), 2.5);
  EXPECT_EQ(NearestRankPercentile({5, 1, 9, 3}, 90), 9);
  EXPECT_EQ(NearestRankPercentile({5, 1, 9, 3}, 50), 3);
  EXPECT_EQ(NearestRankPercentile({7}, 1), 7);
}

TEST(Subprocess, ReportsExitCodesSignalsAndDeadlines) {
  auto ok = Subprocess::Spawn({"/bin/sh", "-c", "exit 3"}, {});
  ASSERT_TRUE(ok.ok()) << ok.status();
  const absl::StatusOr<ExitStatus> done = ok->Wait(DeadlineIn(10000));
  ASSERT_TRUE(done.ok()) << done.status();
  EXPECT_FALSE(done->signaled);
  EXPECT_EQ(done->code, 3);
  EXPECT_EQ(done->ToString(), "exit code 3");

  auto sleeper = Subprocess::Spawn({"/bin/sleep", "30"}, {});
  ASSERT_TRUE(sleeper.ok());
  EXPECT_TRUE(absl::IsDeadlineExceeded(sleeper->Wait(DeadlineIn(50)).status()));
  EXPECT_TRUE(sleeper->running());
  const ExitStatus killed = sleeper->Kill();
  EXPECT_TRUE(killed.signaled);
  EXPECT_EQ(killed.code, SIGKILL);
  EXPECT_FALSE(sleeper->running());

  EXPECT_TRUE(absl::IsUnavailable(
      Subprocess::Spawn({"/no/such/program"}, {}).status()));
}

TEST(Subprocess, OutputAndEnvironmentReachTheChild) {
  const std::string log = TestDir("env") + "/out.log";
  Subprocess::Options options;
  options.output_path = log;
  options.env = {"TUNEFLEET_BASE_TEST=hello"};
  auto child = Subprocess::Spawn(
      {"/bin/sh", "-c", "echo $TUNEFLEET_BASE_TEST; echo oops >&2"}, options);
  ASSERT_TRUE(child.ok());
  ASSERT_TRUE(child->Wait(DeadlineIn(10000)).ok());
  EXPECT_EQ(*ReadWholeFile(log), "hello\noops\n");
}

TEST(Subprocess, RunInChildReturnsBytesAndSurvivesCrashesAndHangs) {
  auto good = RunInChild([] { return std::string("result"); }, 10000);
  ASSERT_TRUE(good.ok()) << good.status();
  EXPECT_TRUE(good->exit.success());
  EXPECT_EQ(good->bytes, "result");

  auto crash = RunInChild(
      []() -> std::string {
        raise(SIGSEGV);
        return "unreachable";
      },
      10000);
  ASSERT_TRUE(crash.ok()) << crash.status();
  EXPECT_TRUE(crash->exit.signaled);
  EXPECT_EQ(crash->exit.code, SIGSEGV);
  EXPECT_TRUE(crash->bytes.empty());

  auto hang = RunInChild(
      [] {
        sleep(30);
        return std::string();
      },
      100);
  EXPECT_TRUE(absl::IsDeadlineExceeded(hang.status())) << hang.status();
}

TEST(Subprocess, ReadFullSeesEndOfFileAndDeadline) {
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  UniqueFd read_end(fds[0]), write_end(fds[1]);
  char buffer[8];
  EXPECT_TRUE(absl::IsDeadlineExceeded(
      ReadFull(read_end.get(), buffer, 4, DeadlineIn(30))));
  ASSERT_TRUE(WriteAll(write_end.get(), "abcd"));
  ASSERT_TRUE(ReadFull(read_end.get(), buffer, 4, DeadlineIn(1000)).ok());
  EXPECT_EQ(std::string(buffer, 4), "abcd");
  write_end.Reset();
  EXPECT_TRUE(absl::IsOutOfRange(
      ReadFull(read_end.get(), buffer, 1, DeadlineIn(1000))));
}

TEST(Time, RealClockIsTheSystemClock) {
  const int64_t before = NowMs();
  const int64_t read = RealClock().NowMs();
  EXPECT_GE(read, before);
  EXPECT_LE(read, NowMs());
  EXPECT_GT(before, int64_t{1600000000000});  // after September 2020
}

TEST(HostPort, ParsesNamesAddressesAndBracketedIpv6) {
  struct Case {
    const char* text;
    const char* host;
    int port;
    const char* back;
  };
  for (const Case& c :
       {Case{"127.0.0.1:7878", "127.0.0.1", 7878, "127.0.0.1:7878"},
        Case{"tuner.lan:1", "tuner.lan", 1, "tuner.lan:1"},
        Case{"[::1]:65535", "::1", 65535, "[::1]:65535"},
        Case{"ipv6host:80", "ipv6host", 80, "ipv6host:80"}}) {
    absl::StatusOr<HostPort> got = ParseHostPort(c.text, "--server");
    ASSERT_TRUE(got.ok()) << c.text << ": " << got.status();
    EXPECT_EQ(got->host, c.host);
    EXPECT_EQ(got->port, c.port);
    EXPECT_EQ(got->ToString(), c.back);
  }
  EXPECT_TRUE(ParseHostPort("0.0.0.0:0", "--listen", true).ok());
}

TEST(HostPort, RefusesWhatGrpcWouldMisreadNamingTheFlagAndTheForm) {
  for (const char* bad :
       {"", "127.0.0.1", "127.0.0.1:", ":7878", "http://127.0.0.1:7878",
        "dns:///tuner:7878", "ipv4:127.0.0.1:1", "host:port", "host:-1",
        "host:70000", "host:0", "::1:7878", "[::1]", "[::1]7878",
        "[::1:7878"}) {
    absl::StatusOr<HostPort> got = ParseHostPort(bad, "--server");
    ASSERT_FALSE(got.ok()) << bad;
    EXPECT_EQ(got.status().code(), absl::StatusCode::kInvalidArgument);
    const std::string message(got.status().message());
    EXPECT_NE(message.find("--server '"), std::string::npos) << message;
    EXPECT_NE(message.find("HOST:PORT"), std::string::npos) << message;
  }
}

enum class Shade { kLight, kDark, kUnnamed };

TEST(EnumNames, NameAndParseServeOneTable) {
  constexpr base::EnumNames<Shade, 2> kShades{
      {{{Shade::kLight, "light"}, {Shade::kDark, "dark"}}}};
  static_assert(absl::string_view(kShades.Name(Shade::kDark)) == "dark");
  EXPECT_STREQ(kShades.Name(Shade::kLight), "light");
  EXPECT_STREQ(kShades.Name(Shade::kUnnamed), "?");
  EXPECT_STREQ(kShades.Name(Shade::kUnnamed, "none"), "none");
  EXPECT_EQ(kShades.Parse("dark"), Shade::kDark);
  EXPECT_EQ(kShades.Parse("Dark"), std::nullopt);
  EXPECT_EQ(kShades.Parse(""), std::nullopt);
  EXPECT_EQ(kShades.List(), "light, dark");
}

TEST(Flags, RangeOptionShowsItsDefaultAndRefusesValuesOutside) {
  int runs = 10;
  CLI::App app{"test"};
  CLI::Option* option =
      base::AddRangeOption(&app, "--runs", runs, "measured runs", 1, 100);
  EXPECT_EQ(option->get_default_str(), "10");
  const char* in_range[] = {"test", "--runs", "100"};
  app.parse(3, const_cast<char**>(in_range));
  EXPECT_EQ(runs, 100);
  const char* outside[] = {"test", "--runs", "0"};
  EXPECT_THROW(app.parse(3, const_cast<char**>(outside)), CLI::ValidationError);
  EXPECT_EQ(runs, 100);
}

}  // namespace
}  // namespace tunefleet::base
