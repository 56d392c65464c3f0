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

/// Bytes of the data unit the header describes, as CFITSIO computes them (FITS 4.0, eq. 1
/// and 2, random groups included), or nullopt for sizes it would not accept.
std::optional<std::uint64_t> data_size(std::vector<std::string> const& cards, bool primary) {
  auto key = [&](std::string name) -> std::optional<long long> {
    name.resize(8, ' ');
    for (auto const& c : cards)
      if (c.compare(0, 8, name) == 0) return integer_value(value_field(c));
    return std::nullopt;
  };
  auto const bitpix = key("BITPIX"), naxis = key("NAXIS");
  if (!bitpix || !naxis || *naxis < 0 || *naxis > 999) return std::nullopt;
  if (*bitpix != 8 && *bitpix != 16 && *bitpix != 32 && *bitpix != 64 && *bitpix != -32 &&
      *bitpix != -64)
    return std::nullopt;
  if (*naxis == 0) return std::uint64_t(0);
  bool groups = false;
  if (primary && key("NAXIS1") == 0)
    for (auto const& c : cards)
      if (c.compare(0, 8, "GROUPS  ") == 0) groups = unquoted_token(value_field(c)) == "T";
  long long const pcount = primary && !groups ? 0 : key("PCOUNT").value_or(0);
  long long const gcount = primary && !groups ? 1 : key("GCOUNT").value_or(1);
  constexpr long long limit = 1LL << 40;  // bytes: far beyond any file kspecter reads
  if (pcount < 0 || pcount > limit || gcount < 0 || gcount > limit) return std::nullopt;
  long long n = 1;
  for (long long a = groups ? 2 : 1; a <= *naxis; ++a) {
    auto const len = key("NAXIS" + std::to_string(a));
    if (!len || *len < 0 || *len > limit) return std::nullopt;
    if (*len != 0 && n > limit / *len) return std::nullopt;
    n *= *len;
  }
  long long const per_group = (std::llabs(*bitpix) / 8) * (pcount + n);  // <= 2^44
  if (gcount != 0 && per_group > limit / gcount) return std::nullopt;
  return static_cast<std::uint64_t>(per_group * gcount);
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
      if (token.size() >= 70)
        throw InputError(path, name,
                         "header card " + std::to_string(i + 1) + " (" + h.cards[i].substr(0, 8) +
                             ") has a value of " + std::to_string(token.size()) +
                             " characters without quotes, which no FITS value is");
    }
    auto const size = h.complete ? data_size(h.cards, hdu == 1) : std::nullopt;
    if (!size) return;
    std::uint64_t const padded = (*size + block_size - 1) / block_size * block_size;
    in.seekg(static_cast<std::streamoff>(padded), std::ios::cur);
  }
}

}  // namespace kspecter::io
