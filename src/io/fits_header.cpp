// FitsHeader: records parsed and written by the FITS 4.0 rules for fixed-format values
// (strings quoted with '' for a quote, integers and logicals right-justified to column 30)
// and the long-string convention (a string ending in & continues on CONTINUE records).
#include "fits_support.hpp"

#include <kspecter/core/error.hpp>
#include <kspecter/io/fits_header.hpp>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace kspecter::io {

namespace {

constexpr std::size_t record_size = 80;

std::string record_key(std::string const& r) { return upper_trimmed(r.substr(0, 8)); }

bool has_value(std::string const& r) { return r.size() >= 10 && r.compare(8, 2, "= ") == 0; }

// The value field of a record (columns 11-80), blanks on the left dropped.
std::string value_field(std::string const& r) {
  if (!has_value(r)) return {};
  std::size_t const first = r.find_first_not_of(' ', 10);
  return first == std::string::npos ? std::string() : r.substr(first);
}

// A quoted string at the start of `v`: its text ('' made '), nullopt when `v` is not one.
std::optional<std::string> unquote(std::string const& v) {
  if (v.empty() || v[0] != '\'') return std::nullopt;
  std::string out;
  for (std::size_t i = 1; i < v.size(); ++i) {
    if (v[i] != '\'') {
      out += v[i];
    } else if (i + 1 < v.size() && v[i + 1] == '\'') {
      out += '\'';
      ++i;
    } else {
      return out;
    }
  }
  return std::nullopt;  // no closing quote
}

// An unquoted value: up to the comment.
std::string token(std::string const& v) {
  std::string t = v.substr(0, v.find('/'));
  while (!t.empty() && t.back() == ' ') t.pop_back();
  return t;
}

std::string quote(std::string const& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("''") : std::string(1, c);
  return q + "'";
}

std::string pad(std::string r) {
  r.resize(record_size, ' ');
  return r;
}

std::string with_comment(std::string r, std::string const& comment) {
  if (!comment.empty() && r.size() + 3 < record_size) r += " / " + comment;
  return pad(r);
}

std::string key_field(std::string const& key) {
  std::string k = key;
  k.resize(8, ' ');
  return k + "= ";
}

// A fixed-format value right-justified to column 30.
std::string fixed_record(std::string const& key, std::string const& value,
                         std::string const& comment) {
  std::string v = value;
  if (v.size() < 20) v = std::string(20 - v.size(), ' ') + v;
  return with_comment(key_field(key) + v, comment);
}

// The shortest text of `v` that reads back as `v`, as Python's repr writes it (astropy
// writes header reals so): fixed notation for exponents -4 .. 15, else d.dddE+XX; always with
// a '.', so that FITS reads a real.
std::string real_text(double v) {
  char b[64];
  int digits = 1;
  for (; digits < 17; ++digits) {
    std::snprintf(b, sizeof b, "%.*E", digits - 1, v);
    if (std::strtod(b, nullptr) == v) break;
  }
  std::snprintf(b, sizeof b, "%.*E", digits - 1, v);
  int const exponent = std::atoi(std::strchr(b, 'E') + 1);
  if (exponent >= -4 && exponent < 16)
    std::snprintf(b, sizeof b, "%.*f", std::max(0, digits - 1 - exponent), v);
  std::string s = b;
  if (s.find('.') == std::string::npos) {  // 900 -> 900.0, 1E+20 -> 1.0E+20
    std::size_t const e = s.find('E');
    s.insert(e == std::string::npos ? s.size() : e, ".0");
  }
  return s;
}

void check_key(std::string const& key) {
  bool ok = !key.empty() && key.size() <= 8;
  for (char c : key)
    ok = ok && (std::isupper(static_cast<unsigned char>(c)) ||
                std::isdigit(static_cast<unsigned char>(c)) || c == '-' || c == '_');
  if (!ok) throw ParameterError("'" + key + "' is not a FITS keyword (1-8 of A-Z 0-9 - _)");
  if (structural_key(key)) throw ParameterError("header keyword " + key + " is set by the writer");
}

}  // namespace

bool structural_key(std::string const& key) {
  std::string const k = upper_trimmed(key);
  static char const* const names[] = {"SIMPLE",  "XTENSION", "BITPIX",   "NAXIS",   "EXTEND",
                                      "PCOUNT",  "GCOUNT",   "EXTNAME",  "BSCALE",  "BZERO",
                                      "END",     "CHECKSUM", "DATASUM",  "ZIMAGE",  "ZTENSION",
                                      "ZBITPIX", "ZNAXIS",   "ZCMPTYPE", "ZSIMPLE", "ZEXTEND"};
  for (auto n : names)
    if (k == n) return true;
  if (k.rfind("NAXIS", 0) == 0 && k.size() > 5 &&
      k.find_first_not_of("0123456789", 5) == std::string::npos)
    return true;
  return false;
}

void FitsHeader::add_record(std::string record) {
  record = pad(std::move(record));
  if (structural_key(record_key(record))) return;
  records_.push_back(std::move(record));
}

int FitsHeader::find(std::string const& key) const {
  std::string const k = upper_trimmed(key);
  for (std::size_t i = 0; i < records_.size(); ++i)
    if (has_value(records_[i]) && record_key(records_[i]) == k) return static_cast<int>(i);
  return -1;
}

int FitsHeader::extent(int at) const {
  int n = 1;
  std::string v = value_field(records_[std::size_t(at)]);
  for (;;) {
    auto const s = unquote(v);
    if (!s || s->empty() || s->back() != '&') return n;
    std::size_t const next = std::size_t(at + n);
    if (next >= records_.size() || records_[next].compare(0, 8, "CONTINUE") != 0) return n;
    std::size_t const first = records_[next].find_first_not_of(' ', 8);
    v = first == std::string::npos ? std::string() : records_[next].substr(first);
    ++n;
  }
}

std::vector<std::string> FitsHeader::keys() const {
  std::vector<std::string> out;
  for (auto const& r : records_)
    if (has_value(r)) out.push_back(record_key(r));
  return out;
}

std::optional<std::string> FitsHeader::value_text(std::string const& key) const {
  int const at = find(key);
  if (at < 0) return std::nullopt;
  std::string const v = value_field(records_[std::size_t(at)]);
  if (auto const s = unquote(v)) return quote(*s);
  return token(v);
}

std::optional<std::string> FitsHeader::get_string(std::string const& key, std::string const& file,
                                                  std::string const& hdu) const {
  int const at = find(key);
  if (at < 0) return std::nullopt;
  std::string out;
  int const n = extent(at);
  for (int i = 0; i < n; ++i) {
    std::string const& r = records_[std::size_t(at + i)];
    std::string const v =
        i == 0 ? value_field(r) : r.substr(std::min(r.size(), r.find_first_not_of(' ', 8)));
    auto const s = unquote(v);
    if (!s)
      throw InputError(file, hdu,
                       "keyword " + upper_trimmed(key) + " = " + token(v) + " is not a string");
    out += i + 1 < n ? s->substr(0, s->size() - 1) : *s;  // drop each '&' but the last's text
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

std::optional<double> FitsHeader::get_number(std::string const& key, std::string const& file,
                                             std::string const& hdu) const {
  auto const text = value_text(key);
  if (!text) return std::nullopt;
  auto const v = parse_real(*text);
  if (!v)
    throw InputError(file, hdu,
                     "keyword " + upper_trimmed(key) + " = " + *text + " is not a finite number");
  return v;
}

std::optional<long long> FitsHeader::get_integer(std::string const& key, std::string const& file,
                                                 std::string const& hdu) const {
  auto const text = value_text(key);
  if (!text) return std::nullopt;
  auto const v = parse_integer(*text);
  if (!v)
    throw InputError(file, hdu,
                     "keyword " + upper_trimmed(key) + " = " + *text + " is not an integer");
  return v;
}

void FitsHeader::put(std::string const& key, std::vector<std::string> records) {
  int const at = find(key);
  if (at < 0) {
    records_.insert(records_.end(), records.begin(), records.end());
    return;
  }
  auto const first = records_.begin() + at;
  records_.erase(first, first + extent(at));
  records_.insert(records_.begin() + at, records.begin(), records.end());
}

void FitsHeader::set_string(std::string const& key, std::string const& value,
                            std::string const& comment) {
  check_key(key);
  // A quoted value fits in columns 11-80 (70 characters, quotes included); a longer one is
  // cut into pieces of at most 67 characters ending in '&', on CONTINUE records. A quote is
  // never split from its double.
  std::string padded = value;
  if (padded.size() < 8) padded.resize(8, ' ');  // FITS: at least 8 characters in quotes
  if (quote(padded).size() <= 70) {
    put(key, {with_comment(key_field(key) + quote(padded), comment)});
    return;
  }
  std::vector<std::string> out;
  std::size_t at = 0;
  while (at < value.size()) {
    std::size_t n = 0, width = 0;
    while (at + n < value.size() && width + (value[at + n] == '\'' ? 2 : 1) <= 66) {
      width += value[at + n] == '\'' ? 2 : 1;
      ++n;
    }
    std::string piece = value.substr(at, n);
    at += n;
    bool const last = at >= value.size();
    std::string const q = quote(last ? piece : piece + "&");
    out.push_back(out.empty() ? key_field(key) + q : "CONTINUE  " + q);
  }
  out.back() = with_comment(out.back(), comment);
  for (auto& r : out) r = pad(r);
  put(key, out);
}

void FitsHeader::set_integer(std::string const& key, long long value, std::string const& comment) {
  check_key(key);
  put(key, {fixed_record(key, std::to_string(value), comment)});
}

void FitsHeader::set_number(std::string const& key, double value, std::string const& comment) {
  check_key(key);
  if (!std::isfinite(value))
    throw ParameterError("header keyword " + key + ": " + std::to_string(value) +
                         " is not a finite number");
  put(key, {fixed_record(key, real_text(value), comment)});
}

void FitsHeader::set_logical(std::string const& key, bool value, std::string const& comment) {
  check_key(key);
  put(key, {fixed_record(key, value ? "T" : "F", comment)});
}

void FitsHeader::erase(std::string const& key) {
  int const at = find(key);
  if (at < 0) return;
  auto const first = records_.begin() + at;
  records_.erase(first, first + extent(at));
}

void set_dependency(FitsHeader& header, std::string const& name, std::string const& version) {
  for (int i = 0; i < 100; ++i) {
    char nam[9], ver[9];
    std::snprintf(nam, sizeof nam, "DEPNAM%02d", i);
    std::snprintf(ver, sizeof ver, "DEPVER%02d", i);
    if (header.has(nam)) {
      if (header.get_string(nam, "", "") != name) continue;
    } else {
      header.set_string(nam, name);
    }
    header.set_string(ver, version);
    return;
  }
  throw ParameterError("header: DEPNAM00 .. DEPNAM99 are all taken; cannot record " + name);
}

}  // namespace kspecter::io
