#include <kspecter/core/error.hpp>
#include <kspecter/core/log.hpp>

namespace kspecter {

LogLevel parse_log_level(std::string const& s) {
  if (s == "quiet") return LogLevel::quiet;
  if (s == "info") return LogLevel::info;
  if (s == "debug") return LogLevel::debug;
  throw ParameterError("log level must be quiet, info or debug, not '" + s + "'");
}

}  // namespace kspecter
