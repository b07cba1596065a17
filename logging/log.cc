#include "logging/log.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <ctime>
#include <string>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "spdlog/pattern_formatter.h"
#include "spdlog/sinks/stdout_sinks.h"

namespace tunefleet::logging {
namespace {

// Each level: its name, spdlog's level and its sd-daemon(3) priority.
struct LevelRow {
  Level level;
  absl::string_view name;
  spdlog::level::level_enum spdlog_level;
  int priority;
};
constexpr LevelRow kLevels[] = {
    {Level::kTrace, "trace", spdlog::level::trace, 7},
    {Level::kDebug, "debug", spdlog::level::debug, 7},
    {Level::kInfo, "info", spdlog::level::info, 6},
    {Level::kWarn, "warn", spdlog::level::warn, 4},
    {Level::kError, "error", spdlog::level::err, 3},
};

const LevelRow& RowOf(Level level) {
  for (const LevelRow& row : kLevels) {
    if (row.level == level) return row;
  }
  return kLevels[2];  // info
}

// The level of a line of spdlog's (critical, which tunefleet does not
// use, as error).
Level FromSpdlog(spdlog::level::level_enum level) {
  for (const LevelRow& row : kLevels) {
    if (row.spdlog_level == level) return row.level;
  }
  return Level::kError;
}

// "%*": the sd-daemon(3) prefix "<N>" of the line's level.
class PriorityFlag : public spdlog::custom_flag_formatter {
 public:
  void format(const spdlog::details::log_msg& msg, const std::tm&,
              spdlog::memory_buf_t& dest) override {
    const char text[] = {
        '<', static_cast<char>('0' + JournalPriority(FromSpdlog(msg.level))),
        '>'};
    dest.append(text, text + sizeof(text));
  }
  std::unique_ptr<custom_flag_formatter> clone() const override {
    return std::make_unique<PriorityFlag>();
  }
};

std::unique_ptr<spdlog::logger> MakeLogger() {
  auto logger = std::make_unique<spdlog::logger>(
      "tunefleet", std::make_shared<spdlog::sinks::stderr_sink_mt>());
  logger->set_formatter(MakeFormatter(false));
  logger->set_level(spdlog::level::info);
  logger->flush_on(spdlog::level::trace);
  return logger;
}

}  // namespace

absl::StatusOr<Level> ParseLevel(absl::string_view name) {
  for (const LevelRow& row : kLevels) {
    if (name == row.name) return row.level;
  }
  return absl::InvalidArgumentError(
      absl::StrCat("log level '", name, "' is none of ", kLevelNames));
}

absl::string_view LevelName(Level level) { return RowOf(level).name; }

int JournalPriority(Level level) { return RowOf(level).priority; }

bool StderrIsJournal() {
  const char* stream = std::getenv("JOURNAL_STREAM");
  if (stream == nullptr) return false;
  const std::pair<std::string, std::string> parts =
      absl::StrSplit(stream, absl::MaxSplits(':', 1));
  uint64_t device = 0, inode = 0;
  if (!absl::SimpleAtoi(parts.first, &device) ||
      !absl::SimpleAtoi(parts.second, &inode)) {
    return false;
  }
  struct stat st {};
  if (fstat(STDERR_FILENO, &st) != 0) return false;
  return static_cast<uint64_t>(st.st_dev) == device &&
         static_cast<uint64_t>(st.st_ino) == inode;
}

std::unique_ptr<spdlog::formatter> MakeFormatter(bool journal) {
  auto formatter = std::make_unique<spdlog::pattern_formatter>();
  if (journal) {
    formatter->add_flag<PriorityFlag>('*').set_pattern("%*%v");
  } else {
    formatter->set_pattern("[%Y-%m-%d %H:%M:%S.%e] [%l] %v");
  }
  return formatter;
}

void Setup(const LogOptions& options) {
  spdlog::logger& logger = Logger();
  logger.set_formatter(MakeFormatter(options.journal));
  logger.set_level(RowOf(options.level).spdlog_level);
}

void Setup(Level level) {
  Setup(LogOptions{.level = level, .journal = StderrIsJournal()});
}

spdlog::logger& Logger() {
  // Never destroyed: threads that log while the process exits (detached
  // ones, gRPC's) must not meet a destroyed logger.
  static spdlog::logger* const logger = MakeLogger().release();
  return *logger;
}

}  // namespace tunefleet::logging
