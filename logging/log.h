// The log of tunefleet's daemons, tunefleet-server and tunefleet-agent:
// one logger per process (spdlog), writing lines with a level to stderr.
// main() sets it up once with Setup() (the level from --log-level,
// log_flag.h); code anywhere logs with logging::Info("...{}...", value)
// and its siblings (fmt's format strings, checked at compile time).
//
// The line's form depends on where stderr goes (docs/FLEET.md,
// "Logs").
//  - to the systemd journal (JOURNAL_STREAM names stderr's device and
//    inode, as systemd sets it for a service's stdout/stderr): the
//    message after sd-daemon(3)'s priority prefix, "<6>message"; the
//    journal adds the time and keeps the priority;
//  - anywhere else: "[2026-11-29 16:05:01.123] [info] message" (local
//    time, milliseconds; spdlog names warn "warning").
// Before Setup() (a library used in another program, the tunefleet CLI's
// embedded server) the logger writes at level info in the second form.
#ifndef TUNEFLEET_LOGGING_LOG_H_
#define TUNEFLEET_LOGGING_LOG_H_

#include <memory>
#include <utility>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "spdlog/logger.h"

namespace tunefleet::logging {

// The levels, least severe first; a logger at level L writes the lines of
// L and above.
enum class Level { kTrace, kDebug, kInfo, kWarn, kError };

// "trace, debug, info, warn, error": the names ParseLevel() takes.
inline constexpr absl::string_view kLevelNames =
    "trace, debug, info, warn, error";

// The level named `name` (one of kLevelNames). Errors: INVALID_ARGUMENT
// naming the value and the names taken.
absl::StatusOr<Level> ParseLevel(absl::string_view name);

// The name of `level` ("warn" for kWarn).
absl::string_view LevelName(Level level);

// The sd-daemon(3) priority of `level`: 7 (debug) for trace and debug, 6
// (info), 4 (warning), 3 (err).
int JournalPriority(Level level);

// Whether stderr is the systemd journal: JOURNAL_STREAM is
// "DEVICE:INODE" and those are stderr's (systemd.exec(5): a process whose
// stderr was redirected elsewhere inherits the variable but not the
// stream).
bool StderrIsJournal();

// How lines are written.
struct LogOptions {
  Level level = Level::kInfo;
  // true: sd-daemon priority prefix, no time; false: time and level.
  bool journal = false;
};

// The formatter of `journal` lines (LogOptions::journal), for sinks of
// tests.
std::unique_ptr<spdlog::formatter> MakeFormatter(bool journal);

// Sets up the process's logger: `options.level`, the form of
// `options.journal`. Call from main() before threads log; later calls
// change both.
void Setup(const LogOptions& options);

// Setup() with `level` and the form StderrIsJournal() says.
void Setup(Level level);

// The process's logger (stderr). Thread-safe.
spdlog::logger& Logger();

// Writes a line at `kLevel` to Logger(): the function objects Trace,
// Debug, Info, Warn and Error below, one per level, are called as
// functions, logging::Info("...{}...", value).
template <spdlog::level::level_enum kLevel>
struct LevelLog {
  template <typename... Args>
  void operator()(spdlog::format_string_t<Args...> format,
                  Args&&... args) const {
    Logger().log(kLevel, format, std::forward<Args>(args)...);
  }
};

inline constexpr LevelLog<spdlog::level::trace> Trace{};
inline constexpr LevelLog<spdlog::level::debug> Debug{};
inline constexpr LevelLog<spdlog::level::info> Info{};
inline constexpr LevelLog<spdlog::level::warn> Warn{};
inline constexpr LevelLog<spdlog::level::err> Error{};

}  // namespace tunefleet::logging

#endif  // TUNEFLEET_LOGGING_LOG_H_
