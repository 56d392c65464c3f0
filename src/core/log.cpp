#include <kspecter/core/error.hpp>
#include <kspecter/core/log.hpp>

#include <atomic>
#include <cstdio>

namespace kspecter {

namespace {
std::atomic<WarningHandler> warning_handler{nullptr};
}  // namespace

void warn(std::string const& message) {
  if (WarningHandler const h = warning_handler.load()) {
    h(message);
    return;
  }
  std::fprintf(stderr, "kspecter: warning: %s\n", message.c_str());
}

WarningHandler set_warning_handler(WarningHandler handler) {
  return warning_handler.exchange(handler);
}

LogLevel parse_log_level(std::string const& s) {
  if (s == "quiet") return LogLevel::quiet;
  if (s == "info") return LogLevel::info;
  if (s == "debug") return LogLevel::debug;
  throw ParameterError("log level must be quiet, info or debug, not '" + s + "'");
}

}  // namespace kspecter
