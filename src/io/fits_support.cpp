#include "fits_support.hpp"

#include "atomic_output.hpp"

#include <kspecter/io/threads.hpp>

#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdlib>

namespace kspecter::io {

bool files_on_several_threads() { return fits_is_reentrant() != 0; }

std::string fits_message(int status) {
  char text[FLEN_STATUS] = {0};
  fits_get_errstatus(status, text);
  std::string msg = std::string("CFITSIO: ") + text;
  char detail[FLEN_ERRMSG] = {0};
  if (fits_read_errmsg(detail) && detail[0] && msg.find(detail) == std::string::npos)
    msg += std::string(" (") + detail + ")";
  fits_clear_errmsg();
  if (file_size_limit_reached())
    msg += "; the process's file size limit (ulimit -f) was reached: EFBIG, File too large";
  return msg + " [status " + std::to_string(status) + "]";
}

FitsPtr create_fits(AtomicOutput& out, int& status) {
  fitsfile* raw = nullptr;
  out.create([&](char const* temp) { fits_create_diskfile(&raw, temp, &status); });
  return FitsPtr(raw);
}

std::optional<std::string> read_key_text(fitsfile* f, char const* key) {
  char value[FLEN_VALUE] = {0};
  int status = 0;
  if (fits_read_keyword(f, key, value, nullptr, &status)) {
    fits_clear_errmsg();
    return std::nullopt;
  }
  return std::string(value);
}

std::optional<long long> parse_integer(std::string_view v) {
  while (!v.empty() && v.front() == ' ') v.remove_prefix(1);
  while (!v.empty() && v.back() == ' ') v.remove_suffix(1);
  if (v.size() > 1 && v[0] == '+' && v[1] != '-') v.remove_prefix(1);  // FITS allows "+5"
  long long out = 0;
  auto const [end, err] = std::from_chars(v.data(), v.data() + v.size(), out);
  if (v.empty() || err != std::errc() || end != v.data() + v.size()) return std::nullopt;
  return out;
}

std::optional<double> parse_real(std::string_view v) {
  while (!v.empty() && v.front() == ' ') v.remove_prefix(1);
  while (!v.empty() && v.back() == ' ') v.remove_suffix(1);
  if (v.empty() || v.size() > 64 || v[0] == '\'') return std::nullopt;
  std::string t(v);
  for (auto& c : t)
    if (c == 'D' || c == 'd') c = 'E';
  char* end = nullptr;
  double const x = std::strtod(t.c_str(), &end);
  if (end != t.c_str() + t.size() || !std::isfinite(x)) return std::nullopt;
  return x;
}

std::optional<long long> read_integer_key(fitsfile* f, char const* key) {
  auto const text = read_key_text(f, key);
  return text ? parse_integer(*text) : std::nullopt;
}

std::string upper_trimmed(std::string s) {
  while (!s.empty() && s.back() == ' ') s.pop_back();
  for (auto& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

}  // namespace kspecter::io
