// A minimal leveled logger: messages go to stderr, prefixed with the elapsed time, from the
// ranks that are allowed to speak (rank 0 by default).
#pragma once

#include <chrono>
#include <cstdio>
#include <string>

namespace kspecter {

enum class LogLevel { quiet = 0, info = 1, debug = 2 };

/// Parses "quiet", "info" or "debug"; throws ParameterError otherwise.
LogLevel parse_log_level(std::string const& s);

/// Where the library's warnings go: a function that takes the message.
using WarningHandler = void (*)(std::string const& message);

/// Reports something that did not stop the work but that a user should know (a gzip file with
/// trailing garbage, say): "kspecter: warning: MESSAGE" on stderr, or to the handler set.
/// Thread-safe.
void warn(std::string const& message);

/// Sends warn()'s messages to `handler` (nullptr: back to stderr). Returns the previous one.
WarningHandler set_warning_handler(WarningHandler handler);

class Logger {
 public:
  Logger(LogLevel level = LogLevel::info, bool speaks = true)
      : level_(level), speaks_(speaks), start_(std::chrono::steady_clock::now()) {}
  void info(std::string const& msg) const { emit(LogLevel::info, msg); }
  void debug(std::string const& msg) const { emit(LogLevel::debug, msg); }
  LogLevel level() const { return level_; }
  double elapsed() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  }

 private:
  void emit(LogLevel l, std::string const& msg) const {
    if (!speaks_ || static_cast<int>(l) > static_cast<int>(level_)) return;
    std::fprintf(stderr, "[kspecter %8.3f s] %s\n", elapsed(), msg.c_str());
  }
  LogLevel level_;
  bool speaks_;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace kspecter
