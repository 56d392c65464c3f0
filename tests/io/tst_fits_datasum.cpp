// The DATASUM FitsWriter sums from memory (src/io/fits_datasum.hpp) against two references:
// the FITS standard's word-by-word ones' complement sum with end-around carry, and CFITSIO's
// own DATASUM of the same values written by CFITSIO (in memory) as float, double and
// unsigned 32-bit images. Sizes around the 2880-byte block, and the words where ones'
// complement sums differ from plain ones: zeros, all ones, sign bits, NaN and infinities.
#include "io/fits_datasum.hpp"

#include <fitsio.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

namespace {

using kspecter::io::fits_datasum;

// The standard's definition: each big-endian 32-bit word added with the carry out of bit 31
// added back in.
template <class T>
unsigned long reference_sum(std::vector<T> const& v, std::uint32_t flip) {
  std::vector<std::uint32_t> words;
  for (T const& x : v) {
    if constexpr (sizeof(T) == 4) {
      std::uint32_t w;
      std::memcpy(&w, &x, 4);
      words.push_back(w ^ flip);
    } else {
      std::uint64_t w;
      std::memcpy(&w, &x, 8);
      words.push_back(std::uint32_t(w >> 32));
      words.push_back(std::uint32_t(w));
    }
  }
  std::uint64_t sum = 0;
  for (std::uint32_t w : words) {
    sum += w;
    if (sum > 0xFFFFFFFFu) sum = (sum & 0xFFFFFFFFu) + 1;
  }
  return static_cast<unsigned long>(sum);
}

// DATASUM as CFITSIO computes it for these values written by CFITSIO into an image HDU.
template <class T>
unsigned long cfitsio_sum(std::vector<T> const& v, int bitpix, int datatype) {
  void* mem = nullptr;
  std::size_t size = 0;
  fitsfile* f = nullptr;
  int st = 0;
  fits_create_memfile(&f, &mem, &size, 2880, std::realloc, &st);
  long naxes[1] = {long(v.size())};
  fits_create_img(f, bitpix, 1, naxes, &st);
  if (!v.empty()) fits_write_img(f, datatype, 1, LONGLONG(v.size()), const_cast<T*>(v.data()), &st);
  unsigned long datasum = 0, hdusum = 0;
  fits_get_chksum(f, &datasum, &hdusum, &st);
  fits_close_file(f, &st);
  std::free(mem);
  EXPECT_EQ(st, 0);
  return datasum;
}

template <class T>
std::vector<T> with_edges(std::vector<T> v, std::vector<T> const& edges) {
  v.insert(v.begin(), edges.begin(), edges.end());
  return v;
}

TEST(fits_datasum, floats_match_the_standard_and_cfitsio) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> u(-1e6f, 1e6f);
  float const inf = std::numeric_limits<float>::infinity();
  for (std::size_t n : {0u, 1u, 719u, 720u, 721u, 5000u}) {
    std::vector<float> v(n);
    for (float& x : v) x = u(rng);
    if (n > 8)
      v = with_edges(v, {0.0f, -0.0f, inf, -inf, std::numeric_limits<float>::quiet_NaN(),
                         std::numeric_limits<float>::denorm_min(), -1.0f});
    SCOPED_TRACE(n);
    EXPECT_EQ(fits_datasum(v.data(), v.size()), reference_sum(v, 0));
    EXPECT_EQ(fits_datasum(v.data(), v.size()), cfitsio_sum(v, FLOAT_IMG, TFLOAT));
  }
}

TEST(fits_datasum, doubles_match_the_standard_and_cfitsio) {
  std::mt19937 rng(8);
  std::normal_distribution<double> g(0.0, 1e3);
  for (std::size_t n : {1u, 359u, 360u, 361u, 3000u}) {
    std::vector<double> v(n);
    for (double& x : v) x = g(rng);
    if (n > 8) v = with_edges(v, {0.0, -0.0, std::numeric_limits<double>::quiet_NaN(), -2.0});
    SCOPED_TRACE(n);
    EXPECT_EQ(fits_datasum(v.data(), v.size()), reference_sum(v, 0));
    EXPECT_EQ(fits_datasum(v.data(), v.size()), cfitsio_sum(v, DOUBLE_IMG, TDOUBLE));
  }
}

TEST(fits_datasum, unsigned_words_are_stored_with_the_sign_bit_flipped) {
  std::mt19937 rng(9);
  for (std::size_t n : {1u, 720u, 4001u}) {
    std::vector<unsigned> v(n);
    for (unsigned& x : v) x = unsigned(rng());
    if (n > 8) v = with_edges(v, {0u, 0xFFFFFFFFu, 0x80000000u, 0x7FFFFFFFu, 1u});
    SCOPED_TRACE(n);
    EXPECT_EQ(fits_datasum(v.data(), v.size(), 0x80000000u), reference_sum(v, 0x80000000u));
    EXPECT_EQ(fits_datasum(v.data(), v.size(), 0x80000000u), cfitsio_sum(v, ULONG_IMG, TUINT));
  }
  // Words that are all ones sum to ones' complement -0 (0xFFFFFFFF), never to +0.
  std::vector<unsigned> const ones(1000, 0x7FFFFFFFu);  // stored as 0xFFFFFFFF
  EXPECT_EQ(fits_datasum(ones.data(), ones.size(), 0x80000000u), 0xFFFFFFFFul);
  EXPECT_EQ(reference_sum(ones, 0x80000000u), 0xFFFFFFFFul);
}

TEST(fits_datasum, big_endian_bytes_match_the_standard_and_cfitsio_on_a_table) {
  // A binary table's data unit as CFITSIO wrote it, summed from its bytes in memory.
  void* mem = nullptr;
  std::size_t size = 0;
  fitsfile* f = nullptr;
  int st = 0;
  fits_create_memfile(&f, &mem, &size, 2880, std::realloc, &st);
  fits_create_img(f, BYTE_IMG, 0, nullptr, &st);
  char const* names[] = {"FIBER", "TARGETID", "NAME"};
  char const* forms[] = {"J", "K", "7A"};
  fits_create_tbl(f, BINARY_TBL, 0, 3, const_cast<char**>(names), const_cast<char**>(forms),
                  nullptr, const_cast<char*>("FIBERMAP"), &st);
  std::mt19937 rng(4);
  std::vector<long long> fiber(777), target(777);
  for (auto& x : fiber) x = rng() % 5000;
  for (auto& x : target) x = (static_cast<long long>(rng()) << 24) ^ rng();
  fits_write_col(f, TLONGLONG, 1, 1, 1, 777, fiber.data(), &st);
  fits_write_col(f, TLONGLONG, 2, 1, 1, 777, target.data(), &st);
  std::vector<std::string> text(777, "ELG");
  std::vector<char*> ptr;
  for (auto& t : text) ptr.push_back(t.data());
  fits_write_col(f, TSTRING, 3, 1, 1, 777, ptr.data(), &st);
  unsigned long datasum = 0, hdusum = 0;
  fits_get_chksum(f, &datasum, &hdusum, &st);
  LONGLONG head = 0, data = 0, end = 0;
  fits_get_hduaddrll(f, &head, &data, &end, &st);
  fits_flush_file(f, &st);
  ASSERT_EQ(st, 0);
  char const* bytes = static_cast<char const*>(mem) + data;
  std::vector<unsigned> words;
  for (LONGLONG i = 0; i + 4 <= end - data; i += 4) {
    auto const* b = reinterpret_cast<unsigned char const*>(bytes + i);
    words.push_back(unsigned(b[0]) << 24 | unsigned(b[1]) << 16 | unsigned(b[2]) << 8 | b[3]);
  }
  EXPECT_EQ(kspecter::io::fits_datasum_bytes(bytes, std::size_t(end - data)), datasum);
  EXPECT_EQ(kspecter::io::fits_datasum_bytes(bytes, std::size_t(end - data)),
            reference_sum(words, 0));
  fits_close_file(f, &st);
  std::free(mem);
}

}  // namespace
