// The .gz writer's streamed images (src/io/fits_streamed_images.hpp): any piece of the output,
// at any offset and length, equals the same stretch of the whole; the header gets the real
// axes and a CHECKSUM that makes the HDU sum to ones' complement -0 (the FITS checksum
// convention's test); a uint32 image is stored with its sign bit flipped (BZERO 2^31).
#include "io/fits_datasum.hpp"
#include "io/fits_streamed_images.hpp"

#include <kspecter/core/error.hpp>

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace {

namespace io = kspecter::io;
using Bytes = std::vector<unsigned char>;

// A card of 80 characters.
std::string card(std::string const& text) { return text + std::string(80 - text.size(), ' '); }

// CFITSIO-like bytes: a header block with a placeholder image (every axis 1) and its data
// block, then `tail` (another HDU's bytes, here just a block of 'T').
Bytes placeholder_file(int naxis, Bytes const& tail) {
  std::string h = card("SIMPLE  =                    T") + card("BITPIX  =                  -64") +
                  card("NAXIS   =                    " + std::to_string(naxis));
  for (int i = 1; i <= naxis; ++i)
    h += card("NAXIS" + std::to_string(i) + "  =                    1 / length of data axis " +
              std::to_string(i));
  h += card("CHECKSUM= 'AAAAAAAAAAAAAAAA'   / HDU checksum") +
       card("DATASUM = '12345'              / data unit checksum") + card("END");
  h.resize(2880, ' ');
  Bytes out(h.begin(), h.end());
  out.resize(2 * 2880, 0);  // the placeholder's data and fill
  out.insert(out.end(), tail.begin(), tail.end());
  return out;
}

Bytes whole(io::ByteSource const& s) {
  Bytes scratch(s.size), out(s.size);
  unsigned char const* p = s.bytes(0, s.size, scratch.data());
  std::memcpy(out.data(), p, s.size);
  return out;
}

TEST(fits_streamed, every_piece_equals_the_whole_and_the_hdu_sums_to_minus_zero) {
  std::vector<double> values(1000);  // 8000 bytes: three blocks, the last one partly fill
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = 1.0 / double(i + 3) - 0.1 * double(i);
  Bytes const tail(2880, 'T');
  Bytes const fits = placeholder_file(2, tail);
  io::StreamedImage im{1, {250, 4}, values.data(), 8, 0, io::fits_datasum(values.data(), 1000)};
  io::ByteSource const src = io::streamed_fits(fits.data(), fits.size(), {im}, {{0, 2880, 5760}});
  ASSERT_EQ(src.size, 2880u + 8640u + 2880u);
  Bytes const all = whole(src);

  std::string const header(all.begin(), all.begin() + 2880);
  EXPECT_EQ(header.substr(3 * 80, 30), "NAXIS1  =                  250");
  EXPECT_EQ(header.substr(4 * 80, 30), "NAXIS2  =                    4");
  EXPECT_EQ(header.substr(4 * 80 + 30, 25), " / length of data axis 2 ");  // comments kept
  // The HDU (header and data) sums to -0: CHECKSUM is right for the real data.
  EXPECT_EQ(io::fits_sum_bytes(0, all.data(), 2880 + 8640), 0xFFFFFFFFul);
  // The data in big-endian order, then zeros, then the rest of the file as it was.
  for (std::size_t i = 0; i < values.size(); ++i) {
    std::uint64_t u = 0;
    for (int b = 0; b < 8; ++b) u = u << 8 | all[2880 + 8 * i + std::size_t(b)];
    double v;
    std::memcpy(&v, &u, 8);
    ASSERT_EQ(v, values[i]) << i;
  }
  for (std::size_t i = 2880 + 8000; i < 2880 + 8640; ++i) ASSERT_EQ(all[i], 0) << i;
  EXPECT_TRUE(Bytes(all.end() - 2880, all.end()) == tail);

  // Any stretch, values cut anywhere, equals the whole's.
  Bytes scratch(all.size());
  for (std::size_t offset : {0, 1, 2879, 2880, 2883, 5000, 10879, 10880, 11519, 11520}) {
    for (std::size_t n : {1, 3, 8, 13, 2881, 6000}) {
      if (offset + n > all.size()) continue;
      unsigned char const* p = src.bytes(offset, n, scratch.data());
      ASSERT_TRUE(std::equal(p, p + n, all.begin() + std::ptrdiff_t(offset)))
          << "offset " << offset << ", " << n << " bytes";
    }
  }
}

TEST(fits_streamed, unsigned_values_are_stored_with_the_sign_bit_flipped) {
  std::vector<std::uint32_t> values = {0, 1, 0x80000000u, 0xFFFFFFFFu, 7};
  Bytes const fits = placeholder_file(1, {});
  io::StreamedImage im{1, {5},         values.data(),
                       4, 0x80000000u, io::fits_datasum(values.data(), 5, 0x80000000u)};
  Bytes const all = whole(io::streamed_fits(fits.data(), fits.size(), {im}, {{0, 2880, 5760}}));
  for (std::size_t i = 0; i < values.size(); ++i) {
    std::uint32_t u = 0;
    for (int b = 0; b < 4; ++b) u = u << 8 | all[2880 + 4 * i + std::size_t(b)];
    EXPECT_EQ(u, values[i] ^ 0x80000000u) << i;
  }
  EXPECT_EQ(io::fits_sum_bytes(0, all.data(), all.size()), 0xFFFFFFFFul);
}

TEST(fits_streamed, a_placeholder_without_its_cards_is_an_error) {
  std::vector<float> values(4, 1.0f);
  Bytes const fits = placeholder_file(1, {});
  io::StreamedImage im{1, {2, 2}, values.data(), 4, 0, 0};  // NAXIS2 is not in the header
  EXPECT_THROW(io::streamed_fits(fits.data(), fits.size(), {im}, {{0, 2880, 5760}}),
               kspecter::Error);
  io::StreamedImage one{1, {4}, values.data(), 4, 0, 0};
  EXPECT_THROW(io::streamed_fits(fits.data(), fits.size(), {one}, {{0, 2000, 5760}}),
               kspecter::Error);  // a header that is not whole blocks
}

}  // namespace
