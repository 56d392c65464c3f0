#include <kspecter/core/error.hpp>
#include <kspecter/core/log.hpp>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>

namespace kspecter {

namespace {

auto const process_start = std::chrono::steady_clock::now();
std::atomic<WarningHandler> warning_handler{nullptr};
std::atomic<LogSink> log_sink{nullptr};
std::atomic<LogFormat> process_format{LogFormat::elapsed};
std::atomic<LogLevel> process_level{LogLevel::info};
std::mutex stderr_lines;

std::string upper(std::string s) {
  for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

bool level_named(std::string const& s, LogLevel& out) {
  std::string const u = upper(s);
  if (u == "DEBUG")
    out = LogLevel::debug;
  else if (u == "INFO")
    out = LogLevel::info;
  else if (u == "WARNING" || u == "WARN" || u == "QUIET")
    out = LogLevel::warning;
  else if (u == "ERROR")
    out = LogLevel::error;
  else if (u == "CRITICAL")
    out = LogLevel::critical;
  else
    return false;
  return true;
}

char const* basename_of(char const* path) {
  char const* slash = std::strrchr(path, '/');
  return slash ? slash + 1 : path;
}

}  // namespace

LogLevel parse_log_level(std::string const& s) {
  LogLevel l;
  if (!level_named(s, l))
    throw ParameterError(
        "log level must be DEBUG, INFO, WARNING, ERROR or CRITICAL (or quiet), "
        "not '" +
        s + "'");
  return l;
}

char const* log_level_name(LogLevel level) {
  switch (level) {
    case LogLevel::debug: return "DEBUG";
    case LogLevel::info: return "INFO";
    case LogLevel::warning: return "WARNING";
    case LogLevel::error: return "ERROR";
    case LogLevel::critical: return "CRITICAL";
  }
  return "INFO";
}

LogLevel log_level_from_environment() {
  char const* v = std::getenv("DESI_LOGLEVEL");
  if (!v) return LogLevel::info;
  LogLevel l;
  // desiutil's get_logger: upper-cased; anything else is ignored with a warning, giving INFO.
  if (level_named(v, l) && upper(v) != "QUIET") return l;
  warn("Invalid level='" + upper(v) + "' ignored.  Setting INFO. ($DESI_LOGLEVEL)");
  return LogLevel::info;
}

LogFormat parse_log_format(std::string const& s) {
  if (s == "elapsed") return LogFormat::elapsed;
  if (s == "desi") return LogFormat::desi;
  throw ParameterError("log format must be elapsed or desi, not '" + s + "'");
}

void set_log_format(LogFormat format) { process_format = format; }
LogFormat log_format() { return process_format; }
void set_log_level(LogLevel level) { process_level = level; }
LogLevel log_level() { return process_level; }

double seconds_since_start() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - process_start).count();
}

LogSink set_log_sink(LogSink sink) { return log_sink.exchange(sink); }

void log_line(LogLevel level, std::string const& message, SourceLocation const& where) {
  if (LogSink const s = log_sink.load()) {
    s(level, message, where);
    return;
  }
  std::string line;
  if (process_format.load() == LogFormat::desi) {
    line = std::string(log_level_name(level)) + ":" + basename_of(where.file) + ":" +
           std::to_string(where.line) + ":" + where.function + ": " + message + "\n";
  } else {
    char prefix[48];
    std::snprintf(prefix, sizeof prefix, "[kspecter %8.3f s] ", seconds_since_start());
    line = prefix;
    if (level >= LogLevel::warning) line += std::string(log_level_name(level)) + ": ";
    line += message + "\n";
  }
  std::lock_guard<std::mutex> lock(stderr_lines);
  std::fputs(line.c_str(), stderr);
}

void warn(std::string const& message, SourceLocation const& where) {
  if (WarningHandler const h = warning_handler.load()) {
    h(message);
    return;
  }
  if (static_cast<int>(LogLevel::warning) >= static_cast<int>(process_level.load()))
    log_line(LogLevel::warning, message, where);
}

WarningHandler set_warning_handler(WarningHandler handler) {
  return warning_handler.exchange(handler);
}

}  // namespace kspecter
