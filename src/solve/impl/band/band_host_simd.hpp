// Host (one thread per block) kernels of band_strided_inverse_blocks, with the vector ISA
// picked at run time as in host_simd.hpp: the band substitution of one row of Z = L⁻¹ E
// over the window of earlier rows, with the row's columns in vector registers through the
// whole band (one load per FMA, no stores until the end). The Gram products of each group
// of rows go through host_simd.hpp's GEMM-chunk kernels.
#pragma once

#include "../common/host_simd.hpp"

namespace kspecter::solve::detail {

/// One row of the substitution: out[q] = -(Σ_t l[t] z[t][q]) * inv for q < 8 nc (z over up
/// to two contiguous runs of window rows, row stride ld), in chunks of 8 columns.
struct BandRowArgs {
  double* out;
  double const* l1;  // the band entries for the first run of rows
  double const* z1;  // its first window row
  int n1;
  double const* l2;  // the second run (after the window wraps), n2 may be 0
  double const* z2;
  int n2;
  int ld;
  int ncol;  // columns to produce (a multiple of 8, <= ld)
  double inv;
};

#if KSPECTER_SOLVE_HOST_SIMD

#define KSPECTER_BAND_ROW(VT, W, LOAD, STORE, SET1, ZERO, FNMADD, MUL) \
  for (int c0 = 0; c0 < g.ncol; c0 += 4 * (W)) {                       \
    int const nv = (g.ncol - c0) / (W) < 4 ? (g.ncol - c0) / (W) : 4;  \
    VT a0 = ZERO(), a1 = ZERO(), a2 = ZERO(), a3 = ZERO();             \
    double const* ls[2] = {g.l1, g.l2};                                \
    double const* zs[2] = {g.z1, g.z2};                                \
    int const ns[2] = {g.n1, g.n2};                                    \
    for (int run = 0; run < 2; ++run) {                                \
      double const* l = ls[run];                                       \
      double const* z = zs[run] + c0;                                  \
      if (nv == 4) {                                                   \
        for (int t = 0; t < ns[run]; ++t) {                            \
          VT const lt = SET1(l[t]);                                    \
          double const* zt = z + t * g.ld;                             \
          a0 = FNMADD(lt, LOAD(zt), a0);                               \
          a1 = FNMADD(lt, LOAD(zt + (W)), a1);                         \
          a2 = FNMADD(lt, LOAD(zt + 2 * (W)), a2);                     \
          a3 = FNMADD(lt, LOAD(zt + 3 * (W)), a3);                     \
        }                                                              \
      } else {                                                         \
        for (int t = 0; t < ns[run]; ++t) {                            \
          VT const lt = SET1(l[t]);                                    \
          double const* zt = z + t * g.ld;                             \
          a0 = FNMADD(lt, LOAD(zt), a0);                               \
          if (nv > 1) a1 = FNMADD(lt, LOAD(zt + (W)), a1);             \
          if (nv > 2) a2 = FNMADD(lt, LOAD(zt + 2 * (W)), a2);         \
        }                                                              \
      }                                                                \
    }                                                                  \
    VT const inv = SET1(g.inv);                                        \
    STORE(g.out + c0, MUL(a0, inv));                                   \
    if (nv > 1) STORE(g.out + c0 + (W), MUL(a1, inv));                 \
    if (nv > 2) STORE(g.out + c0 + 2 * (W), MUL(a2, inv));             \
    if (nv > 3) STORE(g.out + c0 + 3 * (W), MUL(a3, inv));             \
  }

__attribute__((target("avx2,fma"))) inline void band_row_avx2(BandRowArgs const& g) {
  KSPECTER_BAND_ROW(__m256d, 4, _mm256_loadu_pd, _mm256_storeu_pd, _mm256_set1_pd,
                    _mm256_setzero_pd, _mm256_fnmadd_pd, _mm256_mul_pd)
}

__attribute__((target("avx512f"))) inline void band_row_avx512(BandRowArgs const& g) {
  KSPECTER_BAND_ROW(__m512d, 8, _mm512_loadu_pd, _mm512_storeu_pd, _mm512_set1_pd,
                    _mm512_setzero_pd, _mm512_fnmadd_pd, _mm512_mul_pd)
}

#undef KSPECTER_BAND_ROW

using BandRowFn = void (*)(BandRowArgs const&);

/// The widest band-row kernel this CPU runs, or nullptr for the portable path.
inline BandRowFn host_band_row_kernel() {
  int const level = host_simd_level();
  return level == 2   ? BandRowFn(band_row_avx512)
         : level == 1 ? BandRowFn(band_row_avx2)
                      : BandRowFn(nullptr);
}

#endif  // KSPECTER_SOLVE_HOST_SIMD

}  // namespace kspecter::solve::detail
