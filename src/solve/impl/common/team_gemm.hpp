// Team-level building blocks of the batched solves: a tiled GEMM whose operands are staged
// through team scratch and accumulated in per-thread register micro-tiles, small unblocked
// triangular kernels, and the scratch bookkeeping they share. One team owns one matrix.
#pragma once

#include <Kokkos_Core.hpp>
#include <kspecter/core/error.hpp>
#include <kspecter/core/kokkos_compat.hpp>
#include <string>

#include "../tuning.hpp"
#include "host_simd.hpp"

namespace kspecter::solve::detail {

using compat::imax;
using compat::imin;
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

/// Σ x[i] y[i]. On the host with independent partial sums (lanes) that the compiler
/// vectorises; the summation order is fixed, so results are reproducible.
template <class Tune>
KOKKOS_INLINE_FUNCTION double dot(double const* x, double const* y, int n) {
  if constexpr (Tune::coalesce) {
    double s = 0.0;
    for (int i = 0; i < n; ++i) s += x[i] * y[i];
    return s;
  } else {
    constexpr int L = 8;
    double acc[L] = {};
    int i = 0;
    for (; i + L <= n; i += L)
      for (int l = 0; l < L; ++l) acc[l] += x[i + l] * y[i + l];
    for (int l = 0; i + l < n; ++l) acc[l] += x[i + l] * y[i + l];
    double s = 0.0;
    for (int l = 0; l < L; ++l) s += acc[l];
    return s;
  }
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

/// GemmArgs in the order of the formula C = beta C + alpha A Bᵀ.
KOKKOS_INLINE_FUNCTION GemmArgs gemm(int m, int n, int k, double alpha, Operand a, Operand b,
                                     double beta, double* c, int ldc, unsigned flags, int tr,
                                     int tn) {
  return GemmArgs{m, n, k, alpha, beta, a, b, c, ldc, flags, tr, tn};
}

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
  if constexpr (Tune::coalesce) {
    // All threads share one flat index; consecutive threads read consecutive addresses
    // (along k when sk == 1, along x otherwise). The row stride ld of dst is odd (pad), so
    // the transposing writes of the sk == 1 case do not collide in shared-memory banks.
    int const total = tile * kc;
    if (op.sk == 1) {
      Kokkos::parallel_for(Kokkos::TeamThreadRange(team, total), [&](int e) {
        int const x = e / kc, p = e - x * kc;
        dst[p * ld + x] = x < xlen ? op.p[(x0 + x) * op.sx + k0 + p] : 0.0;
      });
    } else {
      Kokkos::parallel_for(Kokkos::TeamThreadRange(team, total), [&](int e) {
        int const p = e / tile, x = e - p * tile;
        dst[p * ld + x] = x < xlen ? op.p[(x0 + x) * op.sx + (k0 + p) * op.sk] : 0.0;
      });
    }
  } else {
    // Host: one staged row per k, the inner loop a plain copy (sx == 1) or a gather.
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
  static_assert(Tune::quantum % MR == 0 && Tune::quantum % NR == 0, "tiles must hold micro-tiles");
  static_assert(Tune::block % Tune::quantum == 0 && Tune::max_tile % Tune::quantum == 0,
                "block and max_tile must be multiples of the quantum");
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
#if KSPECTER_SOLVE_HOST_SIMD
  ChunkFn const simd = (Tune::host_simd && nthreads == 1) ? host_chunk_kernel() : nullptr;
#endif

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
#if KSPECTER_SOLVE_HOST_SIMD
        if (simd) {
          simd(ChunkArgs{at, lda, bt, ldb, w.acc, g.tn, g.tr, g.tn, mlen, nlen, kcc, k0, ti, tj,
                         g.flags, k0 == 0});
          continue;
        }
#endif
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
/// block size (both multiples of Tune::quantum, hence of every micro-tile side).
template <class Tune>
inline int tile_for(int extent) {
  int const whole = round_up(extent < 1 ? 1 : extent, Tune::quantum);
  return whole <= Tune::max_tile ? whole : Tune::block;
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

/// The team size to launch: the tuning's, unless the kernel cannot run that many threads
/// (registers, scratch) on this device. `probe` carries the scratch request; `tag` says
/// whether the kernel is a parallel_for or a parallel_reduce.
template <class Policy, class Kernel, class Tag = Kokkos::ParallelForTag>
int team_size_for(Policy const& probe, Kernel const& kernel, int want, Tag tag = {}) {
  int const most = probe.team_size_max(kernel, tag);
  return want < most ? want : most;
}

/// A policy of `league` teams with l0_bytes and l1_bytes of team scratch, and the tuning's
/// team size `want` unless fewer threads fit (team_size_for).
template <class Policy, class Kernel, class Tag = Kokkos::ParallelForTag>
Policy team_policy_for(typename Policy::execution_space const& space, int league, int l0_bytes,
                       int l1_bytes, Kernel const& kernel, int want, Tag tag = {}) {
  auto const sized = [&](Policy p) {
    return p.set_scratch_size(0, Kokkos::PerTeam(l0_bytes))
        .set_scratch_size(1, Kokkos::PerTeam(l1_bytes));
  };
  return sized(
      Policy(space, league, team_size_for(sized(Policy(space, league, 1)), kernel, want, tag)));
}

/// Factors the w x w lower triangle of T (row stride ld) in place, T = L Lᵀ, unblocked,
/// right-looking; col (w doubles of scratch) holds the current column contiguously.
/// Returns 0, or j + 1 if pivot j is not positive and finite (T is then left part-done).
template <class Member>
KOKKOS_INLINE_FUNCTION int team_potrf_unblocked(Member const& team, double* t, int ld, int w,
                                                double* col) {
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
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, j + 1, w), [&](int i) {
      double const v = t[i * ld + j] * inv;
      t[i * ld + j] = v;
      col[i] = v;
    });
    team.team_barrier();
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, j + 1, w), [&](int i) {
      double const lij = col[i];
      double* ti = t + i * ld;
      for (int l = j + 1; l <= i; ++l) ti[l] -= lij * col[l];
    });
    team.team_barrier();
  }
  return 0;
}

/// out (w x w, row stride ldo, full square with zeros above the diagonal) = T⁻¹ for the
/// lower-triangular T (row stride ld). GPU: one column per thread (independent forward
/// substitutions). Host: row by row, out[i, :i] = -(Σ_p T[i][p] out[p, :]) / T[i][i], whose
/// inner loops are contiguous axpys.
template <class Tune, class Member>
KOKKOS_INLINE_FUNCTION void team_trtri_unblocked(Member const& team, double const* t, int ld, int w,
                                                 double* out, int ldo) {
  if constexpr (Tune::coalesce) {
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
  } else {
    Kokkos::single(Kokkos::PerTeam(team), [&]() {
      for (int i = 0; i < w; ++i) {
        double const* ti = t + i * ld;
        double* oi = out + i * ldo;
        for (int q = 0; q < w; ++q) oi[q] = 0.0;
        for (int p = 0; p < i; ++p) {
          double const f = ti[p];
          double const* op = out + p * ldo;
          for (int q = 0; q <= p; ++q) oi[q] += f * op[q];
        }
        double const d = 1.0 / ti[i];
        for (int q = 0; q < i; ++q) oi[q] *= -d;
        oi[i] = d;
      }
    });
  }
  team.team_barrier();
}

}  // namespace kspecter::solve::detail
