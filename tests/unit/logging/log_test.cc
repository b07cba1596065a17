// logging/log.h and log_flag.h: level names, the --log-level flag, the two
// forms of a line (the journal's priority prefix; time and level
// elsewhere) and when stderr counts as the journal.
#include "logging/log.h"

#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <memory>
#include <sstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "logging/log_flag.h"
#include "spdlog/sinks/ostream_sink.h"

namespace tunefleet::logging {
namespace {

using ::testing::HasSubstr;
using ::testing::MatchesRegex;

TEST(Log, LevelNamesParseBack) {
  for (Level level : {Level::kTrace, Level::kDebug, Level::kInfo, Level::kWarn,
                      Level::kError}) {
    absl::StatusOr<Level> parsed = ParseLevel(LevelName(level));
    ASSERT_TRUE(parsed.ok()) << parsed.status();
    EXPECT_EQ(*parsed, level);
  }
  absl::StatusOr<Level> bad = ParseLevel("warning");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(bad.status().message(), HasSubstr("'warning'"));
  EXPECT_THAT(bad.status().message(), HasSubstr("trace, debug, info"));
}

TEST(Log, JournalPrioritiesAreSdDaemons) {
  EXPECT_EQ(JournalPriority(Level::kTrace), 7);  // SD_DEBUG
  EXPECT_EQ(JournalPriority(Level::kDebug), 7);
  EXPECT_EQ(JournalPriority(Level::kInfo), 6);   // SD_INFO
  EXPECT_EQ(JournalPriority(Level::kWarn), 4);   // SD_WARNING
  EXPECT_EQ(JournalPriority(Level::kError), 3);  // SD_ERR
}

// The lines a logger at `level` with `journal`'s form writes.
std::string Written(bool journal, spdlog::level::level_enum level) {
  std::ostringstream out;
  auto sink = std::make_shared<spdlog::sinks::ostream_sink_st>(out);
  spdlog::logger logger("test", sink);
  logger.set_formatter(MakeFormatter(journal));
  logger.set_level(level);
  logger.debug("job {}: debug", 1);
  logger.info("job {}: info", 2);
  logger.warn("job {}: warn", 3);
  logger.error("job {}: error", 4);
  return out.str();
}

TEST(Log, TheJournalsFormIsThePriorityAndTheMessage) {
  EXPECT_EQ(Written(true, spdlog::level::debug),
            "<7>job 1: debug\n<6>job 2: info\n<4>job 3: warn\n"
            "<3>job 4: error\n");
  EXPECT_EQ(Written(true, spdlog::level::warn),
            "<4>job 3: warn\n<3>job 4: error\n");
}

TEST(Log, ElsewhereALineHasTimeAndLevel) {
  EXPECT_THAT(Written(false, spdlog::level::info),
              MatchesRegex("\\[[0-9]{4}-[0-9]{2}-[0-9]{2} "
                           "[0-9]{2}:[0-9]{2}:[0-9]{2}\\.[0-9]{3}\\] "
                           "\\[info\\] job 2: info\n"
                           "\\[[-0-9 :.]+\\] \\[warning\\] job 3: warn\n"
                           "\\[[-0-9 :.]+\\] \\[error\\] job 4: error\n"));
}

TEST(Log, StderrIsTheJournalOnlyWhenJournalStreamNamesIt) {
  struct stat st {};
  ASSERT_EQ(fstat(STDERR_FILENO, &st), 0);
  const std::string mine = absl::StrCat(st.st_dev, ":", st.st_ino);
  unsetenv("JOURNAL_STREAM");
  EXPECT_FALSE(StderrIsJournal());
  setenv("JOURNAL_STREAM", mine.c_str(), 1);
  EXPECT_TRUE(StderrIsJournal());
  // Another stream (a child whose stderr went elsewhere inherits the
  // variable), or text that is no DEVICE:INODE.
  setenv("JOURNAL_STREAM", absl::StrCat(st.st_dev, ":", st.st_ino + 1).c_str(),
         1);
  EXPECT_FALSE(StderrIsJournal());
  for (const char* bad : {"", ":", "12", "a:b", "12:"}) {
    setenv("JOURNAL_STREAM", bad, 1);
    EXPECT_FALSE(StderrIsJournal()) << bad;
  }
  unsetenv("JOURNAL_STREAM");
}

TEST(Log, SetupSetsTheLevel) {
  logging::Setup(LogOptions{.level = Level::kWarn});
  EXPECT_FALSE(Logger().should_log(spdlog::level::info));
  EXPECT_TRUE(Logger().should_log(spdlog::level::warn));
  logging::Setup(Level::kDebug);
  EXPECT_TRUE(Logger().should_log(spdlog::level::debug));
  EXPECT_FALSE(Logger().should_log(spdlog::level::trace));
  logging::Setup(LogOptions{});
  EXPECT_FALSE(Logger().should_log(spdlog::level::debug));
}

TEST(LogFlag, TakesTheNamesAndRefusesOthers) {
  CLI::App app;
  Level level = Level::kInfo;
  AddLogLevelFlag(app, &level);
  EXPECT_NO_THROW(app.parse("--log-level debug", false));
  EXPECT_EQ(level, Level::kDebug);
  EXPECT_THROW(app.parse("--log-level loud", false), CLI::ValidationError);
  EXPECT_EQ(level, Level::kDebug);
  level = Level::kInfo;
  EXPECT_NO_THROW(app.parse("", false));
  EXPECT_EQ(level, Level::kInfo);
}

}  // namespace
}  // namespace tunefleet::logging
