#include "fits_streamed_images.hpp"

#include "fits_datasum.hpp"

#include <kspecter/core/error.hpp>

#include <fitsio.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>

namespace kspecter::io {

std::size_t StreamedImage::data_bytes() const {
  std::size_t n = axes.empty() ? 0 : 1;
  for (long a : axes) n *= std::size_t(a);
  return n * std::size_t(value_bytes);
}

namespace {

constexpr std::size_t fits_block = 2880;

// A stretch of the output: bytes copied as they are (CFITSIO's, or a header made again), an
// image's values in FITS's order, or zeros (the fill after an image's data).
struct Segment {
  std::size_t begin = 0, size = 0;
  unsigned char const* bytes = nullptr;
  StreamedImage const* image = nullptr;
};

struct Layout {
  std::vector<StreamedImage> images;  // copies: the segments point into them
  std::vector<std::vector<unsigned char>> headers;
  std::vector<Segment> segments;
  std::size_t size = 0;
};

template <class U>
U big_endian(U u) {
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  if constexpr (sizeof(U) == 4) return __builtin_bswap32(u);
  if constexpr (sizeof(U) == 8) return __builtin_bswap64(u);
#endif
  return u;
}

// Value k of the image, as FITS stores it, into be[0..value_bytes).
void stored_value(StreamedImage const& im, std::size_t k, unsigned char* be) {
  auto const* src = static_cast<unsigned char const*>(im.data);
  if (im.value_bytes == 4) {
    std::uint32_t u;
    std::memcpy(&u, src + 4 * k, 4);
    u = big_endian(u ^ im.flip);
    std::memcpy(be, &u, 4);
  } else {
    std::uint64_t u;
    std::memcpy(&u, src + 8 * k, 8);
    u = big_endian(u);
    std::memcpy(be, &u, 8);
  }
}

// Bytes [from, from + n) of the image's data unit (no fill), into out.
void image_bytes(StreamedImage const& im, std::size_t from, std::size_t n, unsigned char* out) {
  std::size_t const vb = std::size_t(im.value_bytes);
  unsigned char be[8];
  std::size_t at = from, done = 0;
  for (; done < n && at % vb != 0; ++done, ++at) {  // the end of a value cut by the piece
    stored_value(im, at / vb, be);
    out[done] = be[at % vb];
  }
  std::size_t const whole = (n - done) / vb;
  for (std::size_t k = 0; k < whole; ++k) stored_value(im, at / vb + k, out + done + k * vb);
  done += whole * vb;
  at += whole * vb;
  for (; done < n; ++done, ++at) {  // the start of a value cut by the piece
    stored_value(im, at / vb, be);
    out[done] = be[at % vb];
  }
}

// The card of `key` in the header, or nullptr.
unsigned char* find_card(std::vector<unsigned char>& h, std::string key) {
  key.resize(8, ' ');
  for (std::size_t at = 0; at + 80 <= h.size(); at += 80) {
    if (std::memcmp(&h[at], "END     ", 8) == 0) break;
    if (std::memcmp(&h[at], key.data(), 8) == 0 && h[at + 8] == '=') return &h[at];
  }
  return nullptr;
}

// The placeholder's header with the real axes (an integer is right-aligned in columns 11-30,
// as CFITSIO writes it) and the CHECKSUM of the real HDU: the header, CHECKSUM zeros, summed
// onto DATASUM (already the real data's), complemented.
std::vector<unsigned char> real_header(unsigned char const* bytes, std::size_t n,
                                       StreamedImage const& im) {
  std::vector<unsigned char> h(bytes, bytes + n);
  for (std::size_t i = 0; i < im.axes.size(); ++i) {
    unsigned char* card = find_card(h, "NAXIS" + std::to_string(i + 1));
    if (!card)
      throw Error("the placeholder of HDU " + std::to_string(im.hdu) + " has no NAXIS" +
                  std::to_string(i + 1));
    char value[32];
    std::snprintf(value, sizeof value, "%20ld", im.axes[i]);
    std::memcpy(card + 10, value, 20);
  }
  unsigned char* card = find_card(h, "CHECKSUM");
  if (!card || card[10] != '\'')
    throw Error("the placeholder of HDU " + std::to_string(im.hdu) + " has no CHECKSUM");
  std::memset(card + 11, '0', 16);
  char ascii[17] = {0};
  fits_encode_chksum(fits_sum_bytes(im.datasum, h.data(), h.size()), 1, ascii);
  std::memcpy(card + 11, ascii, 16);
  return h;
}

// The segment that holds byte `offset` of the output.
std::vector<Segment>::const_iterator segment_at(Layout const& l, std::size_t offset) {
  auto const after = std::upper_bound(l.segments.begin(), l.segments.end(), offset,
                                      [](std::size_t o, Segment const& g) { return o < g.begin; });
  return after - 1;
}

// Bytes [offset, offset + n) of the output into out.
void fill(Layout const& l, std::size_t offset, std::size_t n, unsigned char* out) {
  for (auto s = segment_at(l, offset); n > 0; ++s) {
    std::size_t const from = offset - s->begin, m = std::min(n, s->size - from);
    if (s->bytes)
      std::memcpy(out, s->bytes + from, m);
    else if (s->image)
      image_bytes(*s->image, from, m, out);
    else
      std::memset(out, 0, m);
    out += m;
    offset += m;
    n -= m;
  }
}

}  // namespace

ByteSource streamed_fits(unsigned char const* fits, std::size_t size,
                         std::vector<StreamedImage> const& images,
                         std::vector<PlaceholderSpan> const& spans) {
  auto l = std::make_shared<Layout>();
  l->images = images;
  l->headers.reserve(images.size());  // the segments point into them
  auto add = [&](std::size_t n, unsigned char const* bytes, StreamedImage const* image) {
    if (n > 0) l->segments.push_back({l->size, n, bytes, image});
    l->size += n;
  };
  if (spans.size() != images.size()) throw Error("one placeholder span an image expected");
  std::size_t pos = 0;
  for (std::size_t i = 0; i < images.size(); ++i) {
    PlaceholderSpan const& s = spans[i];
    if (s.head < pos || s.data < s.head || s.end < s.data || s.end > size ||
        (s.data - s.head) % fits_block != 0)
      throw Error("the placeholder of HDU " + std::to_string(images[i].hdu) + " is misplaced");
    add(s.head - pos, fits + pos, nullptr);
    l->headers.push_back(real_header(fits + s.head, s.data - s.head, images[i]));
    add(l->headers.back().size(), l->headers.back().data(), nullptr);
    std::size_t const data = images[i].data_bytes();
    add(data, nullptr, &l->images[i]);
    add((fits_block - data % fits_block) % fits_block, nullptr, nullptr);
    pos = s.end;
  }
  add(size - pos, fits + pos, nullptr);
  std::size_t const total = l->size;
  return {total, [l](std::size_t offset, std::size_t n, unsigned char* scratch) {
            auto const s = segment_at(*l, offset);
            if (s->bytes && offset + n <= s->begin + s->size) return s->bytes + (offset - s->begin);
            fill(*l, offset, n, scratch);
            return static_cast<unsigned char const*>(scratch);
          }};
}

}  // namespace kspecter::io
