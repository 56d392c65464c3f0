// Counter-based random numbers for the simulator: Philox4x32-10 (Salmon et al. 2011,
// "Parallel random numbers: as easy as 1, 2, 3"), and uniform, normal and Poisson variates
// drawn from it. A variate depends only on (seed, stream, index), never on which thread or
// backend draws it or in which order, which is what makes simulated images reproducible
// bit for bit across thread counts.
#pragma once

#include <kspecter/core/kokkos_compat.hpp>

#include <Kokkos_Core.hpp>

#include <cstdint>

namespace kspecter::sim {

/// Philox4x32 with 10 rounds: a bijection of the 128-bit counter keyed by 64 bits.
KOKKOS_INLINE_FUNCTION void philox4x32_10(std::uint32_t const ctr_in[4],
                                          std::uint32_t const key_in[2], std::uint32_t out[4]) {
  std::uint32_t c0 = ctr_in[0], c1 = ctr_in[1], c2 = ctr_in[2], c3 = ctr_in[3];
  std::uint32_t k0 = key_in[0], k1 = key_in[1];
  for (int r = 0; r < 10; ++r) {
    std::uint64_t const p0 = std::uint64_t(0xD2511F53u) * c0;
    std::uint64_t const p1 = std::uint64_t(0xCD9E8D57u) * c2;
    std::uint32_t const hi0 = std::uint32_t(p0 >> 32), lo0 = std::uint32_t(p0);
    std::uint32_t const hi1 = std::uint32_t(p1 >> 32), lo1 = std::uint32_t(p1);
    c0 = hi1 ^ c1 ^ k0;
    c1 = lo1;
    c2 = hi0 ^ c3 ^ k1;
    c3 = lo0;
    k0 += 0x9E3779B9u;
    k1 += 0xBB67AE85u;
  }
  out[0] = c0;
  out[1] = c1;
  out[2] = c2;
  out[3] = c3;
}

/// Independent streams of the simulator (the third counter word), so that e.g. the number of
/// uniforms a Poisson draw consumed never shifts the read noise.
namespace stream {
constexpr std::uint32_t poisson = 1;
constexpr std::uint32_t read_noise = 2;
constexpr std::uint32_t spectra = 3;
constexpr std::uint32_t defects = 4;
}  // namespace stream

/// A sequence of random words for one (seed, stream, index): counter (index lo, index hi,
/// stream, block), key = seed. Cheap to construct in a kernel; keeps no global state.
class CounterRng {
 public:
  KOKKOS_INLINE_FUNCTION CounterRng(std::uint64_t seed, std::uint32_t stream_id,
                                    std::uint64_t index)
      : ctr_{std::uint32_t(index), std::uint32_t(index >> 32), stream_id, 0u},
        key_{std::uint32_t(seed), std::uint32_t(seed >> 32)} {}

  KOKKOS_INLINE_FUNCTION std::uint32_t next_u32() {
    if (used_ == 4) {
      philox4x32_10(ctr_, key_, buf_);
      ++ctr_[3];
      used_ = 0;
    }
    return buf_[used_++];
  }

  /// Uniform double in the open interval (0, 1), 53 random bits.
  KOKKOS_INLINE_FUNCTION double uniform() {
    std::uint32_t const a = next_u32() >> 5, b = next_u32() >> 6;  // 27 + 26 bits
    return (double(a) * 67108864.0 + double(b) + 0.5) * (1.0 / 9007199254740992.0);
  }

  /// Standard normal (Box-Muller, cosine branch: two uniforms per variate).
  KOKKOS_INLINE_FUNCTION double normal() {
    double const u1 = uniform(), u2 = uniform();
    return compat::sqrt(-2.0 * compat::log(u1)) * compat::cos(6.283185307179586 * u2);
  }

  /// Poisson variate of mean `lambda` (0 when lambda <= 0 or not finite). Inversion by
  /// sequential search below 10, Hoermann's transformed rejection (PTRS, 1993) above.
  KOKKOS_INLINE_FUNCTION double poisson(double lambda) {
    if (!(lambda > 0.0) || !compat::isfinite(lambda)) return 0.0;
    if (lambda < 10.0) {
      double const u = uniform();
      double p = compat::exp(-lambda), cdf = p;
      int k = 0;
      while (u > cdf && k < 200) {
        ++k;
        p *= lambda / k;
        cdf += p;
      }
      return double(k);
    }
    double const slam = compat::sqrt(lambda), loglam = compat::log(lambda);
    double const b = 0.931 + 2.53 * slam;
    double const a = -0.059 + 0.02483 * b;
    double const inv_alpha = 1.1239 + 1.1328 / (b - 3.4);
    double const vr = 0.9277 - 3.6224 / (b - 2.0);
    for (;;) {
      double const u = uniform() - 0.5, v = uniform();
      double const us = 0.5 - compat::fabs(u);
      double const k = compat::floor((2.0 * a / us + b) * u + lambda + 0.43);
      if (us >= 0.07 && v <= vr) return k;
      if (k < 0.0 || (us < 0.013 && v > us)) continue;
      if (compat::log(v) + compat::log(inv_alpha) - compat::log(a / (us * us) + b) <=
          -lambda + k * loglam - compat::lgamma(k + 1.0))
        return k;
    }
  }

 private:
  std::uint32_t ctr_[4];
  std::uint32_t key_[2];
  std::uint32_t buf_[4] = {0, 0, 0, 0};
  int used_ = 4;
};

}  // namespace kspecter::sim
