// The leveled logger: desiutil's levels (DEBUG, INFO, WARNING, ERROR, CRITICAL), one line a
// message on stderr from the ranks that are allowed to speak (rank 0 by default), in one of two
// formats: kspecter's elapsed-time prefix or desiutil's `LEVEL:file:line:function: message`.
// A front end may send every line elsewhere instead (set_log_sink: the Python module hands
// them to Python's `logging`). warn() is the library's warning, on the same path.
#pragma once

#include <chrono>
#include <string>

namespace kspecter {

/// desiutil's (Python logging's) levels and numbers.
enum class LogLevel { debug = 10, info = 20, warning = 30, error = 40, critical = 50 };

/// Parses DEBUG, INFO, WARNING (or WARN), ERROR, CRITICAL in any case, and kspecter's older
/// spellings: quiet (WARNING: only warnings and errors), info, debug. Throws ParameterError.
LogLevel parse_log_level(std::string const& s);

/// "DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL".
char const* log_level_name(LogLevel level);

/// The level $DESI_LOGLEVEL asks for, read as desiutil's get_logger reads it: INFO when unset;
/// a value that is not a level gives INFO and a warning ("Invalid level='X' ignored.").
LogLevel log_level_from_environment();

/// How a line looks: `[kspecter   1.234 s] message` (elapsed: seconds since the process
/// started; WARNING and above carry their level) or desiutil's
/// `INFO:extract_job.cpp:106:frame_done: message`.
enum class LogFormat { elapsed, desi };

/// Parses "elapsed" or "desi"; throws ParameterError.
LogFormat parse_log_format(std::string const& s);

/// Where a message comes from: the caller's file, line and function (GCC's and Clang's
/// __builtin_FILE & co. as default arguments; "kspecter", 0, "" where a compiler lacks them).
struct SourceLocation {
  char const* file = "kspecter";
  int line = 0;
  char const* function = "";
#if defined(__has_builtin)
#if __has_builtin(__builtin_FILE) && __has_builtin(__builtin_LINE) && \
    __has_builtin(__builtin_FUNCTION)
#define KSPECTER_LOG_HAS_LOCATION 1
#endif
#endif
#ifdef KSPECTER_LOG_HAS_LOCATION
  static SourceLocation current(char const* f = __builtin_FILE(), int l = __builtin_LINE(),
                                char const* fn = __builtin_FUNCTION()) {
    return {f, l, fn};
  }
#else
  static SourceLocation current() { return {}; }
#endif
};

/// The process's log settings: the format of every line, and the level of warn() (the
/// Loggers carry their own). Defaults: elapsed, INFO. Set once at start-up (not thread-safe
/// against lines being written).
void set_log_format(LogFormat format);
LogFormat log_format();
void set_log_level(LogLevel level);
LogLevel log_level();

/// Seconds since the process started (since this library was loaded).
double seconds_since_start();

/// Receives every line that passes its level, in place of stderr: the level, the message and
/// where it was written. May be called from any thread.
using LogSink = void (*)(LogLevel level, std::string const& message, SourceLocation const& where);

/// Sends the lines to `sink` (nullptr: back to stderr). Returns the previous one.
LogSink set_log_sink(LogSink sink);

/// Writes one line: to the sink if one is set, else to stderr in the process's format.
/// Thread-safe (lines never interleave).
void log_line(LogLevel level, std::string const& message, SourceLocation const& where);

/// Where the library's warnings go: a function that takes the message.
using WarningHandler = void (*)(std::string const& message);

/// Reports something that did not stop the work but that a user should know (a gzip file with
/// trailing garbage, say): a WARNING line (log_line) when the process's level lets warnings
/// through, or the handler set. Thread-safe.
void warn(std::string const& message, SourceLocation const& where = SourceLocation::current());

/// Sends warn()'s messages to `handler` (nullptr: back to log_line). Returns the previous one.
WarningHandler set_warning_handler(WarningHandler handler);

class Logger {
 public:
  explicit Logger(LogLevel level = LogLevel::info, bool speaks = true)
      : level_(level), speaks_(speaks) {}
  void debug(std::string const& msg, SourceLocation const& w = SourceLocation::current()) const {
    emit(LogLevel::debug, msg, w);
  }
  void info(std::string const& msg, SourceLocation const& w = SourceLocation::current()) const {
    emit(LogLevel::info, msg, w);
  }
  void warning(std::string const& msg, SourceLocation const& w = SourceLocation::current()) const {
    emit(LogLevel::warning, msg, w);
  }
  void error(std::string const& msg, SourceLocation const& w = SourceLocation::current()) const {
    emit(LogLevel::error, msg, w);
  }
  void critical(std::string const& msg, SourceLocation const& w = SourceLocation::current()) const {
    emit(LogLevel::critical, msg, w);
  }
  LogLevel level() const { return level_; }
  bool enabled(LogLevel l) const {
    return speaks_ && static_cast<int>(l) >= static_cast<int>(level_);
  }
  /// Seconds since the process started.
  double elapsed() const { return seconds_since_start(); }

 private:
  void emit(LogLevel l, std::string const& msg, SourceLocation const& w) const {
    if (enabled(l)) log_line(l, msg, w);
  }
  LogLevel level_;
  bool speaks_;
};

}  // namespace kspecter
