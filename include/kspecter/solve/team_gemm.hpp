// Team-level building blocks of the batched solves: a tiled GEMM whose operands are staged
// through team scratch and accumulated in per-thread register micro-tiles, small unblocked
// triangular kernels, and the scratch bookkeeping they share. One team owns one matrix.
#pragma once

#include <kspecter/core/error.hpp>
#include <kspecter/core/kokkos_compat.hpp>
#include <kspecter/solve/tuning.hpp>

#include <Kokkos_Core.hpp>

#include <string>

namespace kspecter::solve::detail {

KOKKOS_INLINE_FUNCTION int imin(int a, int b) { return a < b ? a : b; }
KOKKOS_INLINE_FUNCTION int imax(int a, int b) { return a > b ? a : b; }
inline int round_up(int x, int q) { return (x + q - 1) / q * q; }

/// sqrt(a² + b²) without overflow or underflow of the squares; NaN in, NaN out.
KOKKOS_INLINE_FUNCTION double hypot2(double a, double b) {
  a = compat::fabs(a);
  b = compat::fabs(b);
  double const big = a > b ? a : b;
  double const small = a > b ? b : a;
  if (big == 0.0) return small;  // small is 0 or NaN
  double const t = small / big;
  return big * compat::sqrt(1.0 + t * t);
}

/// A read-only operand of team_gemm: element (x, k) is p[x * sx + k * sk], where x is the
/// output index (the row of A, the column of B) and k the summation index.
struct Operand {
  double const* p;
  int sx;
  int sk;
};

enum GemmFlags : unsigned {
  /// Store only elements with row >= column (C's origin is on the matrix diagonal).
  kStoreLower = 1u,
  /// A(x, k) = 0 for k > x: the K loop of a micro-tile stops after its last row.
  kALower = 2u,
  /// B(x, k) = 0 for k > x: the K loop of a micro-tile stops after its last column.
  kBUpper = 4u,
};

/// C (m x n, row stride ldc) = beta * C + alpha * A(m x k) * B(n x k)ᵀ.
/// beta is 0 or 1; with beta = 0, C is not read (it may hold NaN).
/// The flags only skip work on structural zeros; the operands must hold those zeros.
/// C may alias an operand when the aliased index matches (C row i is A's row i, or C
/// column j is B's column j) and the other output dimension fits one tile (n <= tn for an
/// aliased A, m <= tr for an aliased B): every tile reads all of its operand rows before it
/// writes.
struct GemmArgs {
  int m, n, k;
  double alpha, beta;
  Operand a, b;
  double* c;
  int ldc;
  unsigned flags;
  int tr, tn;  // output tile (multiples of mr and nr, at most Tuning::max_tile)
};

/// Per-team scratch of team_gemm: `stage` (level 0) holds the staged K-chunks of A and B,
/// `acc` (level 1, max_tile² doubles) holds accumulators when the team has fewer threads
/// than the tile has micro-tiles (always so on the host, where a team is one thread).
struct GemmWork {
  double* stage;
  int stage_len;
  double* acc;
};

/// Copies dst[p * ld + x] = op(x0 + x, k0 + p) for x < tile, p < kc (zero for x >= xlen).
template <class Tune, class Member>
KOKKOS_INLINE_FUNCTION void stage_operand(Member const& team, double* dst, int ld, int tile,
                                          Operand const& op, int x0, int xlen, int k0, int kc) {
  if (Tune::coalesce && op.sk != 1) {
    // Consecutive threads read consecutive x (contiguous in memory when sx == 1).
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, tile), [&](int x) {
      double const* src = op.p + (x0 + x) * op.sx + k0 * op.sk;
      if (x < xlen)
        for (int p = 0; p < kc; ++p) dst[p * ld + x] = src[p * op.sk];
      else
        for (int p = 0; p < kc; ++p) dst[p * ld + x] = 0.0;
    });
  } else {
    // One staged row per k: consecutive threads read consecutive k on a GPU (sk == 1); on
    // the host the inner loop is a plain copy or gather into contiguous memory.
    int const xl = imin(xlen, tile);
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, kc), [&](int p) {
      double const* src = op.p + x0 * op.sx + (k0 + p) * op.sk;
      double* d = dst + p * ld;
      for (int x = 0; x < xl; ++x) d[x] = src[x * op.sx];
      for (int x = xl; x < tile; ++x) d[x] = 0.0;
    });
  }
}

/// acc += At[0:plim, 0:MR]ᵀ Bt[0:plim, 0:NR] with At, Bt staged K-major.
template <int MR, int NR>
KOKKOS_FORCEINLINE_FUNCTION void micro_kernel(double (&acc)[MR][NR], double const* at, int lda,
                                              double const* bt, int ldb, int plim) {
  for (int p = 0; p < plim; ++p) {
    double const* ap = at + p * lda;
    double const* bp = bt + p * ldb;
    double b[NR];
    for (int c = 0; c < NR; ++c) b[c] = bp[c];
    for (int r = 0; r < MR; ++r) {
      double const a = ap[r];
      for (int c = 0; c < NR; ++c) acc[r][c] += a * b[c];
    }
  }
}

template <int MR, int NR>
KOKKOS_FORCEINLINE_FUNCTION void store_micro(double const (&acc)[MR][NR], GemmArgs const& g,
                                             int gi0, int gj0, int mlen_left, int nlen_left) {
  for (int r = 0; r < MR && r < mlen_left; ++r) {
    double* crow = g.c + (gi0 + r) * g.ldc + gj0;
    int cend = imin(NR, nlen_left);
    if (g.flags & kStoreLower) cend = imin(cend, gi0 + r - gj0 + 1);
    if (g.beta == 0.0)
      for (int c = 0; c < cend; ++c) crow[c] = g.alpha * acc[r][c];
    else
      for (int c = 0; c < cend; ++c) crow[c] = g.beta * crow[c] + g.alpha * acc[r][c];
  }
}

/// The whole team computes C = beta C + alpha A Bᵀ (see GemmArgs). Starts and ends with a
/// team barrier, so it may read what the team just wrote and its result is visible to all.
template <class Tune, class Member>
KOKKOS_INLINE_FUNCTION void team_gemm(Member const& team, GemmWork const& w, GemmArgs const& g) {
  constexpr int MR = Tune::mr, NR = Tune::nr;
  int const lda = g.tr + Tune::pad, ldb = g.tn + Tune::pad;
  int kc = w.stage_len / (lda + ldb);
  kc = kc >= 8 ? kc / 4 * 4 : kc;
  double* const at = w.stage;
  double* const bt = w.stage + kc * lda;
  int const nmc = g.tn / NR;
  int const nmt = (g.tr / MR) * nmc;
  int const nthreads = team.team_size();
  int const rank = team.team_rank();
  bool const persistent = nthreads >= nmt;  // uniform across the team

  for (int ti = 0; ti < g.m; ti += g.tr) {
    int const mlen = imin(g.tr, g.m - ti);
    for (int tj = 0; tj < g.n; tj += g.tn) {
      if ((g.flags & kStoreLower) && tj > ti + mlen - 1) break;  // rest of the row is above
      int const nlen = imin(g.tn, g.n - tj);
      double acc[MR][NR];
      for (int r = 0; r < MR; ++r)
        for (int c = 0; c < NR; ++c) acc[r][c] = 0.0;

      for (int k0 = 0; k0 < g.k; k0 += kc) {
        int const kcc = imin(kc, g.k - k0);
        team.team_barrier();
        stage_operand<Tune>(team, at, lda, g.tr, g.a, ti, mlen, k0, kcc);
        stage_operand<Tune>(team, bt, ldb, g.tn, g.b, tj, nlen, k0, kcc);
        team.team_barrier();
        for (int mt = rank; mt < nmt; mt += nthreads) {
          int const i0 = (mt / nmc) * MR, j0 = (mt % nmc) * NR;
          if (i0 >= mlen || j0 >= nlen) continue;
          if ((g.flags & kStoreLower) && tj + j0 > ti + i0 + MR - 1) continue;
          int plim = kcc;
          if (g.flags & kALower) plim = imin(plim, ti + i0 + MR - k0);
          if (g.flags & kBUpper) plim = imin(plim, tj + j0 + NR - k0);
          if (persistent) {
            if (plim > 0) micro_kernel<MR, NR>(acc, at + i0, lda, bt + j0, ldb, plim);
          } else {
            double* ac = w.acc + i0 * g.tn + j0;
            if (k0 == 0) {
              for (int r = 0; r < MR; ++r)
                for (int c = 0; c < NR; ++c) acc[r][c] = 0.0;
            } else {
              for (int r = 0; r < MR; ++r)
                for (int c = 0; c < NR; ++c) acc[r][c] = ac[r * g.tn + c];
            }
            if (plim > 0) micro_kernel<MR, NR>(acc, at + i0, lda, bt + j0, ldb, plim);
            for (int r = 0; r < MR; ++r)
              for (int c = 0; c < NR; ++c) ac[r * g.tn + c] = acc[r][c];
          }
        }
      }

      for (int mt = rank; mt < nmt; mt += nthreads) {
        int const i0 = (mt / nmc) * MR, j0 = (mt % nmc) * NR;
        if (i0 >= mlen || j0 >= nlen) continue;
        if ((g.flags & kStoreLower) && tj + j0 > ti + i0 + MR - 1) continue;
        if (!persistent) {
          double const* ac = w.acc + i0 * g.tn + j0;
          for (int r = 0; r < MR; ++r)
            for (int c = 0; c < NR; ++c) acc[r][c] = g.k > 0 ? ac[r * g.tn + c] : 0.0;
        }
        store_micro<MR, NR>(acc, g, ti + i0, tj + j0, mlen - i0, nlen - j0);
      }
    }
  }
  team.team_barrier();
}

/// Output tile for a GEMM dimension: the whole extent when it fits one tile, else the
/// block size (both multiples of the micro-tile side q).
template <class Tune>
inline int tile_for(int extent, int q) {
  int const whole = round_up(extent < 1 ? 1 : extent, q);
  return whole <= Tune::max_tile ? whole : round_up(Tune::block, q);
}

/// Level-0 doubles for staging: whatever level-0 scratch is left after `reserved` bytes,
/// checked to hold at least a 4-deep K chunk of two maximal tiles.
template <class Policy, class Tune>
inline int stage_doubles(int reserved_bytes, char const* who) {
  int const avail = (Policy::scratch_size_max(0) - reserved_bytes - 256) / int(sizeof(double));
  int const need = 4 * 2 * (Tune::max_tile + Tune::pad);
  if (avail < need)
    throw ParameterError(std::string(who) + ": team scratch too small (" +
                         std::to_string(Policy::scratch_size_max(0)) + " bytes)");
  return avail;
}

/// Factors the w x w lower triangle of T (row stride ld) in place, T = L Lᵀ, unblocked.
/// Returns 0, or j + 1 if pivot j is not positive and finite (T is then left part-done).
template <class Member>
KOKKOS_INLINE_FUNCTION int team_potrf_unblocked(Member const& team, double* t, int ld, int w) {
  for (int j = 0; j < w; ++j) {
    double inv = 0.0;
    Kokkos::single(
        Kokkos::PerTeam(team),
        [&](double& v) {
          double const d = t[j * ld + j];
          if (d > 0.0 && compat::isfinite(d)) {
            double const s = compat::sqrt(d);
            t[j * ld + j] = s;
            v = 1.0 / s;
          } else {
            v = 0.0;
          }
        },
        inv);
    if (!(inv > 0.0)) return j + 1;
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, j + 1, w),
                         [&](int i) { t[i * ld + j] *= inv; });
    team.team_barrier();
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, j + 1, w), [&](int i) {
      double const lij = t[i * ld + j];
      double* ti = t + i * ld;
      for (int l = j + 1; l <= i; ++l) ti[l] -= lij * t[l * ld + j];
    });
    team.team_barrier();
  }
  return 0;
}

/// out (w x w, row stride ldo, full square with zeros above the diagonal) = T⁻¹ for the
/// lower-triangular T (row stride ld). Columns are independent: one per thread.
template <class Member>
KOKKOS_INLINE_FUNCTION void team_trtri_unblocked(Member const& team, double const* t, int ld,
                                                 int w, double* out, int ldo) {
  Kokkos::parallel_for(Kokkos::TeamThreadRange(team, w), [&](int q) {
    for (int i = 0; i < q; ++i) out[i * ldo + q] = 0.0;
    out[q * ldo + q] = 1.0 / t[q * ld + q];
    for (int i = q + 1; i < w; ++i) {
      double const* ti = t + i * ld;
      double s = 0.0;
      for (int p = q; p < i; ++p) s += ti[p] * out[p * ldo + q];
      out[i * ldo + q] = -s / ti[i];
    }
  });
  team.team_barrier();
}

}  // namespace kspecter::solve::detail
