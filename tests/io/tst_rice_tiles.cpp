// The RICE_1 tile check (src/io/rice_tiles.hpp) against CFITSIO's own Rice encoder: every
// stream the encoder writes is accepted, and every proper prefix of it is refused (the
// decoder would need a byte beyond it); a preproc MASK whose tile CFITSIO would decode past
// its end is refused with the tile named, before CFITSIO touches it.
#include "io/rice_tiles.hpp"

#include <fitsio.h>
extern "C" {  // CFITSIO's encoder; fitsio2.h declares it without C linkage for C++
#include <fitsio2.h>
}
#include <gtest/gtest.h>

#include <limits>

#include <cstdint>
#include <random>
#include <vector>

namespace {

// Values of three kinds, in runs: zeros (FS -1 blocks), small differences (Rice codes) and
// full-range noise (raw blocks), so that every branch of the decoder is walked.
template <class T>
std::vector<T> mixed_values(int n, unsigned seed) {
  std::mt19937 rng(seed);
  std::vector<T> v(std::size_t(n), T(0));
  std::uniform_int_distribution<int> kind(0, 2), small(-3, 3);
  std::uniform_int_distribution<long long> full(std::numeric_limits<T>::min(),
                                                std::numeric_limits<T>::max());
  for (int i = 0; i < n;) {
    int const k = kind(rng), run = 1 + int(rng() % 80);
    for (int j = 0; j < run && i < n; ++j, ++i)
      v[std::size_t(i)] = k == 0 ? T(0) : k == 1 ? T(small(rng)) : T(full(rng));
  }
  return v;
}

int encode(std::vector<signed char>& a, std::vector<unsigned char>& c, int nblock) {
  return fits_rcomp_byte(a.data(), int(a.size()), c.data(), int(c.size()), nblock);
}
int encode(std::vector<short>& a, std::vector<unsigned char>& c, int nblock) {
  return fits_rcomp_short(a.data(), int(a.size()), c.data(), int(c.size()), nblock);
}
int encode(std::vector<int>& a, std::vector<unsigned char>& c, int nblock) {
  return fits_rcomp(a.data(), int(a.size()), c.data(), int(c.size()), nblock);
}

template <class T>
void every_prefix_is_refused(int bytepix) {
  for (int nblock : {16, 32}) {
    for (unsigned seed = 1; seed <= 6; ++seed) {
      int const n = 50 + int(seed) * 397;
      auto a = mixed_values<T>(n, seed * 101 + unsigned(bytepix));
      std::vector<unsigned char> c(std::size_t(n) * sizeof(T) * 2 + 64);
      int const len = encode(a, c, nblock);
      ASSERT_GT(len, 0) << "CFITSIO's encoder failed";
      EXPECT_TRUE(kspecter::io::rice_stream_fits(c.data(), len, n, nblock, bytepix))
          << "bytepix " << bytepix << ", seed " << seed << ": a whole stream refused";
      for (int cut = 0; cut < len; ++cut)
        ASSERT_FALSE(kspecter::io::rice_stream_fits(c.data(), cut, n, nblock, bytepix))
            << "bytepix " << bytepix << ", seed " << seed << ": the prefix of " << cut << " of "
            << len << " bytes was accepted";
    }
  }
}

TEST(rice_tiles, encoder_streams_fit_and_their_prefixes_do_not) {
  every_prefix_is_refused<signed char>(1);
  every_prefix_is_refused<short>(2);
  every_prefix_is_refused<int>(4);
}

// A run of zero bits longer than the tile: the decoder's leading-zero count would read on.
TEST(rice_tiles, a_zero_run_to_the_end_is_refused) {
  std::vector<unsigned char> c(64, 0);
  c[2] = 0x10;  // bytepix 2: first value raw, then FS code 1 (FS 0), then only zeros
  EXPECT_FALSE(kspecter::io::rice_stream_fits(c.data(), long(c.size()), 1000, 32, 2));
  // The same bytes as a tile of zero differences: FS code 0 everywhere, nothing read past.
  c[2] = 0;
  EXPECT_TRUE(kspecter::io::rice_stream_fits(c.data(), long(c.size()), 1000, 32, 2));
}

}  // namespace
