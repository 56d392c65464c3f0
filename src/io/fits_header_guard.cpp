#include "fits_header_guard.hpp"
#include "fits_support.hpp"

#include <kspecter/core/error.hpp>

#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kspecter::io {
namespace {

constexpr std::size_t card_size = 80, block_size = 2880;

/// The value field of a card as CFITSIO's ffpsvc finds it ("= " in columns 9-10, else after
/// the first '='), leading blanks skipped; empty for cards without a value.
std::string_view value_field(std::string_view card) {
  card = card.substr(0, card.find('\0'));  // CFITSIO sees a C string
  std::string_view const key = card.substr(0, 8);
  std::size_t pos = std::string_view::npos;
  if (card.rfind("HIERARCH ", 0) == 0) {
    pos = card.find('=');
  } else if (card.size() < 9 || key == "COMMENT " || key == "HISTORY " || key == "END     " ||
             key == "CONTINUE" || key == "        ") {
    return {};
  } else if (card.substr(8, 2) == "= ") {
    pos = 8;
  } else {
    pos = card.find('=');
  }
  if (pos == std::string_view::npos) return {};
  std::string_view v = card.substr(pos + 1);
  std::size_t const first = v.find_first_not_of(' ');
  return first == std::string_view::npos ? std::string_view() : v.substr(first);
}

/// An unquoted value (number, logical, or junk): up to the first blank or '/'.
std::string_view unquoted_token(std::string_view value) {
  if (value.empty() || value[0] == '\'' || value[0] == '(' || value[0] == '/') return {};
  return value.substr(0, value.find_first_of(" /"));
}

std::optional<long long> integer_value(std::string_view value) {
  std::string_view const token = unquoted_token(value);
  return token.empty() ? std::nullopt : parse_integer(token);
}

std::string quoted_string(std::string_view value) {
  if (value.empty() || value[0] != '\'') return {};
  std::string_view s = value.substr(1, value.find('\'', 1) - 1);
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  return std::string(s);
}

/// One header: its cards up to END, or up to the end of the file when it has no END (CFITSIO
/// parses cards as it reads them, so those count too).
struct Header {
  std::vector<std::string> cards;
  bool complete = false;  // END found
};

Header read_header(std::istream& in) {
  Header h;
  std::string block(block_size, ' ');
  while (in.read(block.data(), block_size) || in.gcount() > 0) {
    std::size_t const n = static_cast<std::size_t>(in.gcount()) / card_size * card_size;
    for (std::size_t c = 0; c < n; c += card_size) {
      h.cards.push_back(block.substr(c, card_size));
      if (h.cards.back().compare(0, 8, "END     ") == 0) {
        h.complete = true;
        return h;
      }
    }
  }
  return h;
}

/// The integer value of the first card named `name` (as CFITSIO finds it), or nullopt.
std::optional<long long> integer_key(std::vector<std::string> const& cards, std::string name) {
  name.resize(8, ' ');
  for (auto const& c : cards)
    if (c.compare(0, 8, name) == 0) return integer_value(value_field(c));
  return std::nullopt;
}

/// The size of the data unit a header describes, as CFITSIO computes it (FITS 4.0, eq. 1
/// and 2, random groups included): bytes, or why there is none. `huge` marks a size beyond
/// any file kspecter reads (the file is then truncated), apart from a malformed header.
struct DataSize {
  std::optional<std::uint64_t> bytes;
  bool huge = false;
  std::string problem;  // what is malformed, when neither bytes nor huge
};

DataSize data_size(std::vector<std::string> const& cards, bool primary) {
  auto key = [&](std::string const& name) { return integer_key(cards, name); };
  auto malformed = [](std::string why) { return DataSize{std::nullopt, false, std::move(why)}; };
  auto const bitpix = key("BITPIX"), naxis = key("NAXIS");
  if (!bitpix) return malformed("no integer BITPIX");
  if (!naxis || *naxis < 0 || *naxis > 999) return malformed("no NAXIS from 0 to 999");
  if (*bitpix != 8 && *bitpix != 16 && *bitpix != 32 && *bitpix != 64 && *bitpix != -32 &&
      *bitpix != -64)
    return malformed("BITPIX " + std::to_string(*bitpix) +
                     ", which is no FITS data type (8, 16, 32, 64, -32, -64)");
  if (*naxis == 0) return {std::uint64_t(0)};
  bool groups = false;
  if (primary && key("NAXIS1") == 0)
    for (auto const& c : cards)
      if (c.compare(0, 8, "GROUPS  ") == 0) groups = unquoted_token(value_field(c)) == "T";
  long long const pcount = primary && !groups ? 0 : key("PCOUNT").value_or(0);
  long long const gcount = primary && !groups ? 1 : key("GCOUNT").value_or(1);
  constexpr long long limit = 1LL << 40;  // bytes: far beyond any file kspecter reads
  if (pcount < 0 || gcount < 0) return malformed("a negative PCOUNT or GCOUNT");
  if (pcount > limit || gcount > limit) return {std::nullopt, true};
  long long n = 1;
  for (long long a = groups ? 2 : 1; a <= *naxis; ++a) {
    auto const len = key("NAXIS" + std::to_string(a));
    if (!len || *len < 0) return malformed("no NAXIS" + std::to_string(a) + " of 0 or more");
    if (*len > limit || (*len != 0 && n > limit / *len)) return {std::nullopt, true};
    n *= *len;
  }
  long long const per_group = (std::llabs(*bitpix) / 8) * (pcount + n);  // <= 2^44
  if (gcount != 0 && per_group > limit / gcount) return {std::nullopt, true};
  return {static_cast<std::uint64_t>(per_group * gcount)};
}

// What CFITSIO converts a keyword's value to when it parses it on its own, before kspecter
// asks: the structural keywords of every header (BITPIX, NAXISn, PCOUNT, GCOUNT, TFIELDS,
// TBCOLn; for an extension of a type it does not know too, through ffgidt), the
// tile-compression keywords as it moves to a compressed image
// (imcomp_get_compressed_image_par and the ZIMAGE test), and the scaling and null keywords
// of images and tables as it moves to any HDU.
enum class ValueKind { none, integer, real, integer_or_real, logical, string, integer_or_string };

ValueKind parsed_kind(std::string_view key) {
  // CFITSIO takes a card's name up to its first blank ("ZVAL2  T" is ZVAL2 to it).
  key = key.substr(0, key.find(' '));
  auto indexed = [&](std::string_view stem) {  // STEMn, n = 1-999
    if (key.size() <= stem.size() || key.size() > stem.size() + 3 ||
        key.substr(0, stem.size()) != stem)
      return false;
    std::string_view const n = key.substr(stem.size());
    return n[0] != '0' && n.find_first_not_of("0123456789") == std::string_view::npos;
  };
  if (key == "ZBITPIX" || key == "ZNAXIS" || key == "ZBLANK" || key == "ZDITHER0" ||
      key == "ZPCOUNT" || key == "ZGCOUNT" || key == "ZTHEAP" || key == "BLANK" || key == "THEAP" ||
      key == "TFIELDS" || key == "BITPIX" || key == "NAXIS" || key == "PCOUNT" || key == "GCOUNT" ||
      indexed("NAXIS") || indexed("TBCOL") || indexed("ZNAXIS") || indexed("ZTILE"))
    return ValueKind::integer;
  if (indexed("ZVAL")) return ValueKind::integer_or_real;
  if (key == "ZSCALE" || key == "ZZERO" || key == "BSCALE" || key == "BZERO" || indexed("TSCAL") ||
      indexed("TZERO"))
    return ValueKind::real;
  if (key == "ZIMAGE" || key == "ZSIMPLE" || key == "ZEXTEND" || key == "SIMPLE" ||
      key == "EXTEND" || key == "GROUPS")
    return ValueKind::logical;
  if (key == "ZCMPTYPE" || key == "ZQUANTIZ" || key == "ZTENSION" || indexed("ZNAME"))
    return ValueKind::string;
  if (indexed("TNULL")) return ValueKind::integer_or_string;  // string in ASCII tables
  return ValueKind::none;
}

bool is_integer_text(std::string_view t) {
  if (!t.empty() && (t[0] == '+' || t[0] == '-')) t.remove_prefix(1);
  return !t.empty() && t.find_first_not_of("0123456789") == std::string_view::npos;
}

bool is_real_text(std::string_view t) {  // FITS 4.0 §4.2.4: [sign] digits [. digits] [E|D exp]
  if (!t.empty() && (t[0] == '+' || t[0] == '-')) t.remove_prefix(1);
  std::size_t const e = t.find_first_of("EeDd");
  std::string_view const mantissa = t.substr(0, e);
  std::size_t const dot = mantissa.find('.');
  std::string_view const whole = mantissa.substr(0, dot);
  std::string_view const frac =
      dot == std::string_view::npos ? std::string_view() : mantissa.substr(dot + 1);
  auto digits = [](std::string_view d) {
    return d.find_first_not_of("0123456789") == std::string_view::npos;
  };
  if (!digits(whole) || !digits(frac) || whole.size() + frac.size() == 0) return false;
  return e == std::string_view::npos || is_integer_text(t.substr(e + 1));
}

/// Why the value field `value` is not one CFITSIO converts safely to `kind`, or "" when it
/// is. CFITSIO 4.2 reports a failed conversion by appending 30 characters of the value to a
/// message in an 81-byte buffer already holding up to 58 (ffc2j, ffc2jj, ffc2i …): a value
/// of 28 characters or more that does not convert overruns it (glibc aborts the process).
/// So the value must be of the kind asked for, and short.
std::string value_problem(std::string_view value, ValueKind kind) {
  if (value.empty() || value[0] == '/') return "no value";
  std::string_view token;
  std::string_view rest;
  if (value[0] == '\'') {
    std::size_t end = 1;
    for (;; ++end) {
      end = value.find('\'', end);
      if (end == std::string_view::npos) return "a string without its closing quote";
      if (end + 1 < value.size() && value[end + 1] == '\'') {
        ++end;  // '' inside a string
        continue;
      }
      break;
    }
    token = value.substr(0, end + 1);
    rest = value.substr(end + 1);
    if (kind != ValueKind::string && kind != ValueKind::integer_or_string)
      return "a string where a number or logical is expected";
  } else {
    if (value[0] == '(') return "a complex number, which this keyword never holds";
    std::size_t const end = value.find_first_of(" /");
    token = value.substr(0, end);
    rest = end == std::string_view::npos ? std::string_view() : value.substr(end);
    bool const ok = kind == ValueKind::logical ? token == "T" || token == "F"
                    : kind == ValueKind::integer || kind == ValueKind::integer_or_string
                        ? is_integer_text(token)
                    : kind == ValueKind::real || kind == ValueKind::integer_or_real
                        ? is_real_text(token)
                        : false;
    if (!ok)
      return std::string("'") + std::string(token.substr(0, 20)) +
             (token.size() > 20 ? "..." : "") + "', not " +
             (kind == ValueKind::logical                                      ? "T or F"
              : kind == ValueKind::string                                     ? "a quoted string"
              : kind == ValueKind::real || kind == ValueKind::integer_or_real ? "a number"
                                                                              : "an integer");
    if (token.size() >= 28)
      return "a number written in " + std::to_string(token.size()) +
             " characters (at most 27 are read safely)";
  }
  std::size_t const after = rest.find_first_not_of(' ');
  if (after != std::string_view::npos && rest[after] != '/')
    return "text after the value that is not a '/' comment";
  return {};
}

/// A tile-compressed image whose axis has no pixel: CFITSIO divides by that length when the
/// ZTILEn of the axis is missing (its default tile is the whole axis; fuzz seed 20261129).
void check_compressed_axes(std::string const& path, std::string const& name,
                           std::vector<std::string> const& cards) {
  auto key = [&](std::string const& name) { return integer_key(cards, name); };
  bool compressed = false;
  for (auto const& c : cards)
    if (c.compare(0, 8, "ZIMAGE  ") == 0) compressed = unquoted_token(value_field(c)) == "T";
  if (!compressed) return;
  long long const naxis = key("ZNAXIS").value_or(0);
  for (long long a = 1; a <= naxis && a <= 999; ++a)
    if (auto const len = key("ZNAXIS" + std::to_string(a)); len && *len <= 0)
      throw InputError(path, name,
                       "the tile-compressed image's ZNAXIS" + std::to_string(a) + " is " +
                           std::to_string(*len) + ": every axis needs at least one pixel");
}

}  // namespace

void guard_fits_headers(std::string const& path) {
  std::ifstream in(path, std::ios::binary);
  guard_fits_headers(path, in);
}

void guard_fits_headers(std::string const& path, std::istream& in) {
  for (int hdu = 1; in; ++hdu) {
    Header const h = read_header(in);
    if (h.cards.empty() || h.cards[0].compare(0, 8, hdu == 1 ? "SIMPLE  " : "XTENSION") != 0)
      return;
    std::string name = hdu == 1 ? "PRIMARY" : "HDU " + std::to_string(hdu);
    for (auto const& c : h.cards)
      if (c.compare(0, 8, "EXTNAME ") == 0 && !quoted_string(value_field(c)).empty())
        name = quoted_string(value_field(c));
    for (std::size_t i = 0; i < h.cards.size(); ++i) {
      std::string_view const token = unquoted_token(value_field(h.cards[i]));
      // A tile size that is not a positive integer: CFITSIO divides by what it makes of it
      // when it opens the compressed HDU (0 from a quoted value with NULs, say).
      if (h.cards[i].compare(0, 5, "ZTILE") == 0 && h.cards[i].size() > 5 && h.cards[i][5] >= '1' &&
          h.cards[i][5] <= '9') {
        auto const v = integer_value(value_field(h.cards[i]));
        if (!v || *v <= 0)
          throw InputError(path, name,
                           "header card " + std::to_string(i + 1) + " (" + h.cards[i].substr(0, 8) +
                               ") gives a tile size of " +
                               (v ? std::to_string(*v) : std::string("no integer")) +
                               ": tiles are a whole number of pixels, at least 1");
      }
      if (ValueKind const kind = parsed_kind(std::string_view(h.cards[i]).substr(0, 8));
          kind != ValueKind::none) {
        if (std::string const why = value_problem(value_field(h.cards[i]), kind); !why.empty())
          throw InputError(path, name,
                           "header card " + std::to_string(i + 1) + " (" + h.cards[i].substr(0, 8) +
                               ") has " + why + ": not a value CFITSIO reads safely");
      }
      if (token.size() >= 70)
        throw InputError(path, name,
                         "header card " + std::to_string(i + 1) + " (" + h.cards[i].substr(0, 8) +
                             ") has a value of " + std::to_string(token.size()) +
                             " characters without quotes, which no FITS value is");
    }
    check_compressed_axes(path, name, h.cards);
    if (!h.complete) return;  // cut short: the readers report the file as truncated
    DataSize const size = data_size(h.cards, hdu == 1);
    if (size.huge) return;  // beyond the file: the readers report it as truncated
    // CFITSIO reads the structural cards by position and may go on past a header whose data
    // size the guard cannot know (a NAXIS card with a mangled name, fuzz seed 20261130):
    // the HDUs after it would go unchecked.
    if (!size.bytes)
      throw InputError(path, name,
                       "corrupt header: " + size.problem +
                           ", so the size of its data "
                           "cannot be known");
    std::uint64_t const padded = (*size.bytes + block_size - 1) / block_size * block_size;
    in.seekg(static_cast<std::streamoff>(padded), std::ios::cur);
  }
}

}  // namespace kspecter::io
