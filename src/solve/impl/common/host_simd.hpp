// Host (one thread per matrix) update of a GEMM tile by one staged K-chunk, with the
// register micro-kernel chosen at run time for the CPU at hand: AVX-512F, AVX2+FMA, or the
// portable C++ one. A default build targets baseline x86-64 (SSE2, no FMA), which runs the
// portable kernel at a quarter of what the same core does with AVX2+FMA; dispatching here
// keeps one binary fast on any x86-64 without a -march flag.
#pragma once

#include <Kokkos_Core.hpp>
#include <cstdlib>
#include <string>

#if (defined(__x86_64__) || defined(_M_X64)) && (defined(__GNUC__) || defined(__clang__)) && \
    !defined(__CUDACC__) && !defined(__HIPCC__) && !defined(KSPECTER_SOLVE_NO_HOST_SIMD)
#define KSPECTER_SOLVE_HOST_SIMD 1
#include <immintrin.h>
#else
#define KSPECTER_SOLVE_HOST_SIMD 0
#endif

namespace kspecter::solve::detail {

/// One K-chunk of a tile, single-threaded. at[p * lda + i] and bt[p * ldb + j] are the
/// staged operands (zero beyond mlen / nlen); acc[i * ldacc + j] the tile's accumulators.
/// tr, tn are multiples of 16. The flags are team_gemm's (GemmFlags), the coordinates
/// (k0, ti, tj) place the chunk and the tile in the call, for the triangular skips.
struct ChunkArgs {
  double const* at;
  int lda;
  double const* bt;
  int ldb;
  double* acc;
  int ldacc;
  int tr, tn, mlen, nlen;
  int kcc, k0, ti, tj;
  unsigned flags;
  bool first;  // acc starts from zero
};

#if KSPECTER_SOLVE_HOST_SIMD

// Same meaning as GemmFlags (team_gemm.hpp, which includes this header).
inline constexpr unsigned kChunkStoreLower = 1u, kChunkALower = 2u, kChunkBUpper = 4u;

/// Loops over the MR x NR micro-tiles of the tile, skipping those outside the valid
/// region or above the diagonal, and limits each K loop by the triangular flags. A macro,
/// not a template, so that the loop is compiled inside each target-specific function
/// (lambdas and inlined callees do not inherit a target attribute).
#define KSPECTER_SOLVE_CHUNK_LOOP(g, MR, NR, MICRO)                                               \
  for (int i0 = 0; i0 < (g).mlen; i0 += (MR)) {                                                   \
    for (int j0 = 0; j0 < (g).nlen; j0 += (NR)) {                                                 \
      if (((g).flags & kChunkStoreLower) && (g).tj + j0 > (g).ti + i0 + (MR)-1) break;            \
      int plim = (g).kcc;                                                                         \
      if ((g).flags & kChunkALower) {                                                             \
        int const lim = (g).ti + i0 + (MR) - (g).k0;                                              \
        plim = plim < lim ? plim : lim;                                                           \
      }                                                                                           \
      if ((g).flags & kChunkBUpper) {                                                             \
        int const lim = (g).tj + j0 + (NR) - (g).k0;                                              \
        plim = plim < lim ? plim : lim;                                                           \
      }                                                                                           \
      if (plim < 0) plim = 0;                                                                     \
      MICRO((g).acc + i0 * (g).ldacc + j0, (g).ldacc, (g).at + i0, (g).lda, (g).bt + j0, (g).ldb, \
            plim, (g).first);                                                                     \
    }                                                                                             \
  }

// 4 x 8: eight ymm accumulators, two B loads and four broadcasts per k.
__attribute__((target("avx2,fma"), always_inline)) inline void micro_avx2(double* c, int ldc,
                                                                          double const* a, int lda,
                                                                          double const* b, int ldb,
                                                                          int kc, bool first) {
  __m256d c0[4], c1[4];
  for (int r = 0; r < 4; ++r) {
    c0[r] = first ? _mm256_setzero_pd() : _mm256_loadu_pd(c + r * ldc);
    c1[r] = first ? _mm256_setzero_pd() : _mm256_loadu_pd(c + r * ldc + 4);
  }
  for (int p = 0; p < kc; ++p) {
    __m256d const b0 = _mm256_loadu_pd(b + p * ldb), b1 = _mm256_loadu_pd(b + p * ldb + 4);
    double const* ap = a + p * lda;
    for (int r = 0; r < 4; ++r) {
      __m256d const ar = _mm256_broadcast_sd(ap + r);
      c0[r] = _mm256_fmadd_pd(ar, b0, c0[r]);
      c1[r] = _mm256_fmadd_pd(ar, b1, c1[r]);
    }
  }
  for (int r = 0; r < 4; ++r) {
    _mm256_storeu_pd(c + r * ldc, c0[r]);
    _mm256_storeu_pd(c + r * ldc + 4, c1[r]);
  }
}

__attribute__((target("avx2,fma"))) inline void chunk_avx2(ChunkArgs const& g) {
  KSPECTER_SOLVE_CHUNK_LOOP(g, 4, 8, micro_avx2)
}

// 8 x 16: sixteen zmm accumulators, two B loads and eight broadcasts per k.
__attribute__((target("avx512f"), always_inline)) inline void micro_avx512(double* c, int ldc,
                                                                           double const* a, int lda,
                                                                           double const* b, int ldb,
                                                                           int kc, bool first) {
  __m512d c0[8], c1[8];
  for (int r = 0; r < 8; ++r) {
    c0[r] = first ? _mm512_setzero_pd() : _mm512_loadu_pd(c + r * ldc);
    c1[r] = first ? _mm512_setzero_pd() : _mm512_loadu_pd(c + r * ldc + 8);
  }
  for (int p = 0; p < kc; ++p) {
    __m512d const b0 = _mm512_loadu_pd(b + p * ldb), b1 = _mm512_loadu_pd(b + p * ldb + 8);
    double const* ap = a + p * lda;
    for (int r = 0; r < 8; ++r) {
      __m512d const ar = _mm512_set1_pd(ap[r]);
      c0[r] = _mm512_fmadd_pd(ar, b0, c0[r]);
      c1[r] = _mm512_fmadd_pd(ar, b1, c1[r]);
    }
  }
  for (int r = 0; r < 8; ++r) {
    _mm512_storeu_pd(c + r * ldc, c0[r]);
    _mm512_storeu_pd(c + r * ldc + 8, c1[r]);
  }
}

__attribute__((target("avx512f"))) inline void chunk_avx512(ChunkArgs const& g) {
  KSPECTER_SOLVE_CHUNK_LOOP(g, 8, 16, micro_avx512)
}

#undef KSPECTER_SOLVE_CHUNK_LOOP

// One QL sweep's rotations hi, hi-1, ..., lo applied to the rows of zt (m x m); rotation
// i: row i+1 <- s row_i + c row_{i+1}, row i <- c row_i - s row_{i+1}. Every column carries
// the running row in a register through the whole chain; four vectors of columns at a time
// keep four independent chains in flight (the chain is latency-bound otherwise).
#define KSPECTER_SOLVE_ROTATION_CHAIN(VT, W, LOAD, STORE, SET1, MUL, FMADD, FMSUB) \
  int c0 = 0;                                                                      \
  for (; c0 + 4 * (W) <= m; c0 += 4 * (W)) {                                       \
    VT k[4];                                                                       \
    for (int q = 0; q < 4; ++q) k[q] = LOAD(zt + (hi + 1) * m + c0 + q * (W));     \
    for (int i = hi; i >= lo; --i) {                                               \
      VT const c = SET1(cs[i]), s = SET1(sn[i]);                                   \
      double const* zi = zt + i * m + c0;                                          \
      double* zj = zt + (i + 1) * m + c0;                                          \
      for (int q = 0; q < 4; ++q) {                                                \
        VT const g = LOAD(zi + q * (W));                                           \
        STORE(zj + q * (W), FMADD(s, g, MUL(c, k[q])));                            \
        k[q] = FMSUB(c, g, MUL(s, k[q]));                                          \
      }                                                                            \
    }                                                                              \
    for (int q = 0; q < 4; ++q) STORE(zt + lo * m + c0 + q * (W), k[q]);           \
  }                                                                                \
  for (; c0 + (W) <= m; c0 += (W)) {                                               \
    VT k = LOAD(zt + (hi + 1) * m + c0);                                           \
    for (int i = hi; i >= lo; --i) {                                               \
      VT const c = SET1(cs[i]), s = SET1(sn[i]);                                   \
      VT const g = LOAD(zt + i * m + c0);                                          \
      STORE(zt + (i + 1) * m + c0, FMADD(s, g, MUL(c, k)));                        \
      k = FMSUB(c, g, MUL(s, k));                                                  \
    }                                                                              \
    STORE(zt + lo * m + c0, k);                                                    \
  }                                                                                \
  for (; c0 < m; ++c0) {                                                           \
    double k = zt[(hi + 1) * m + c0];                                              \
    for (int i = hi; i >= lo; --i) {                                               \
      double const g = zt[i * m + c0];                                             \
      zt[(i + 1) * m + c0] = sn[i] * g + cs[i] * k;                                \
      k = cs[i] * g - sn[i] * k;                                                   \
    }                                                                              \
    zt[lo * m + c0] = k;                                                           \
  }

__attribute__((target("avx2,fma"))) inline void rotation_chain_avx2(double* zt, int m,
                                                                    double const* cs,
                                                                    double const* sn, int lo,
                                                                    int hi) {
  KSPECTER_SOLVE_ROTATION_CHAIN(__m256d, 4, _mm256_loadu_pd, _mm256_storeu_pd, _mm256_set1_pd,
                                _mm256_mul_pd, _mm256_fmadd_pd, _mm256_fmsub_pd)
}

__attribute__((target("avx512f"))) inline void rotation_chain_avx512(double* zt, int m,
                                                                     double const* cs,
                                                                     double const* sn, int lo,
                                                                     int hi) {
  KSPECTER_SOLVE_ROTATION_CHAIN(__m512d, 8, _mm512_loadu_pd, _mm512_storeu_pd, _mm512_set1_pd,
                                _mm512_mul_pd, _mm512_fmadd_pd, _mm512_fmsub_pd)
}

#undef KSPECTER_SOLVE_ROTATION_CHAIN

using ChunkFn = void (*)(ChunkArgs const&);
using RotationFn = void (*)(double*, int, double const*, double const*, int, int);

/// Which vector ISA the host kernels use: 2 = AVX-512F, 1 = AVX2+FMA, 0 = portable C++.
/// KSPECTER_SOLVE_SIMD=none|avx2|avx512 caps it (benchmarks; results differ by rounding).
inline int host_simd_level() {
  static int const level = [] {
    char const* env = std::getenv("KSPECTER_SOLVE_SIMD");
    std::string const want = env ? env : "";
    __builtin_cpu_init();
    int have = 0;
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) have = 1;
    if (have == 1 && __builtin_cpu_supports("avx512f")) have = 2;
    if (want == "none") return 0;
    if (want == "avx2") return have < 1 ? have : 1;
    return have;
  }();
  return level;
}

inline RotationFn host_rotation_kernel() {
  int const level = host_simd_level();
  return level == 2   ? RotationFn(rotation_chain_avx512)
         : level == 1 ? RotationFn(rotation_chain_avx2)
                      : RotationFn(nullptr);
}

/// The widest GEMM-chunk kernel this CPU runs, or nullptr for the portable path.
inline ChunkFn host_chunk_kernel() {
  int const level = host_simd_level();
  return level == 2 ? ChunkFn(chunk_avx512) : level == 1 ? ChunkFn(chunk_avx2) : ChunkFn(nullptr);
}

#endif  // KSPECTER_SOLVE_HOST_SIMD

}  // namespace kspecter::solve::detail
