// Strided diagonal blocks of the inverse of a band matrix from its Cholesky factor (declared
// in band.hpp).
#pragma once

#include <Kokkos_Core.hpp>
#include <kspecter/core/error.hpp>
#include <kspecter/core/kokkos_compat.hpp>
#include <kspecter/core/profiling.hpp>
#include <kspecter/solve/band.hpp>
#include <string>

#include "band_cholesky.hpp"
#include "band_host_simd.hpp"

namespace kspecter::solve {

namespace detail {

#if KSPECTER_SOLVE_HOST_SIMD
struct BandBlockHost {
  int n, w, m, stride;
  int ld;     // window row stride = tile (columns m .. tile - 1 stay zero)
  int wrows;  // window rows, a multiple of group
  int group;  // rows per Gram chunk
  int tile;   // GEMM tile (multiple of 16) >= m; acc is tile x tile
};

// The host path with vector kernels: each row of Z is one band_row call (its columns in
// registers through the band), each group of rows one rank-group update of C's lower
// triangle by the GEMM-chunk kernel; a group's rows are consecutive window slots (the
// window's rows are a multiple of the group, groups start at multiples of it).
inline void band_block_host(BandBlockHost const& g, double const* L, int s, double* Z, double* acc,
                            double* C, BandRowFn row, ChunkFn chunk) {
  int const b = g.w - 1, ld = g.ld, W = g.wrows;
  for (int e = 0; e < g.tile * g.tile; ++e) acc[e] = 0.0;
  for (int r = s; r < g.n; ++r) {
    double const* lr = L + std::size_t(r) * g.w;
    int const nq = compat::imin(g.m - 1, (r - s) / g.stride) + 1;
    int const ncol = (nq + 7) / 8 * 8;
    int const j0 = compat::imax(r - b, s), len = r - j0;
    int const s0 = j0 % W, n1 = compat::imin(len, W - s0);
    double* out = Z + (r % W) * ld;
    double const inv = 1.0 / lr[b];
    row(BandRowArgs{out, lr + (j0 - r + b), Z + s0 * ld, n1, lr + (j0 + n1 - r + b), Z, len - n1,
                    ld, ncol, inv});
    for (int q = ncol; q < ld; ++q) out[q] = 0.0;
    if ((r - s) % g.stride == 0 && (r - s) / g.stride < g.m) out[(r - s) / g.stride] += inv;
    if ((r + 1) % g.group == 0 || r == g.n - 1) {
      int const g0 = compat::imax(s, r - r % g.group);
      double const* zg = Z + (g0 % W) * ld;
      chunk(ChunkArgs{zg, ld, zg, ld, acc, g.tile, g.tile, g.tile, nq, nq, r - g0 + 1, 0, 0, 0,
                      kChunkStoreLower, false});
    }
  }
  for (int q1 = 0; q1 < g.m; ++q1)
    for (int q2 = 0; q2 <= q1; ++q2) {
      double const v = acc[q1 * g.tile + q2];
      C[q1 * g.m + q2] = v;
      C[q2 * g.m + q1] = v;
    }
}
#endif

// For block (p, k) with first index s and stride t: Z = L⁻¹ E, E = the columns s + t q of
// the identity, by band forward substitution, row by row from row s (above it Z is zero):
//   z(r, q) = (δ(r, s + t q) - Σ_{r-b <= j < r} L(r, j) z(j, q)) / L(r, r),
// and C = Zᵀ Z accumulated row by row, C(q1, q2) += z(r, q1) z(r, q2). Column q is zero above
// row s + t q (its "start"), so rows only touch the columns started so far. The last b rows
// of Z live in a circular window in team scratch (row r in slot r mod (b + 1)).
// GPU: thread q runs the substitution of column q (its own history only, so no barrier);
// after one barrier per row, each thread adds the row's products to its share of C's lower
// triangle, held in registers (the triangle folded into a rectangle of rows q, m - 1 - q).
// Host: row r is an axpy over the started columns per band entry, then a rank-1 update of
// C's lower triangle, in the output block itself (both vectorised, L1-resident).
template <class Tune, class ExecSpace>
void band_strided_inverse_blocks_impl(
    ExecSpace const& space, BandBatch<typename ExecSpace::memory_space> l,
    Kokkos::View<const int**, Kokkos::LayoutRight, typename ExecSpace::memory_space> slot,
    int stride, MatrixBatch<typename ExecSpace::memory_space> c) {
  using Policy = Kokkos::TeamPolicy<ExecSpace, Kokkos::Schedule<Kokkos::Dynamic>>;
  using Member = typename Policy::member_type;
  using Scratch = Kokkos::View<double*, typename ExecSpace::scratch_memory_space,
                               Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  ScopedRegion region("kspecter::solve::band_strided_inverse_blocks");
  int const nmat = int(l.extent(0));
  int const n = int(l.extent(1));
  int const w = int(l.extent(2));
  int const nblock = int(slot.extent(1));
  int const m = int(c.extent(1));
  if (int(c.extent(2)) != m || int(c.extent(0)) < nmat * nblock || int(slot.extent(0)) < nmat)
    throw ParameterError("solve::band_strided_inverse_blocks: c must be [" +
                         std::to_string(nmat * nblock) + "][m][m] and slot [" +
                         std::to_string(nmat) + "][nblock]");
  if (stride < 1 || (m > 0 && (m - 1) * stride >= n))
    throw ParameterError("solve::band_strided_inverse_blocks: " + std::to_string(m) +
                         " indices of stride " + std::to_string(stride) +
                         " do not fit a matrix of size " + std::to_string(n));
  if (nmat == 0 || nblock == 0 || m == 0) return;
  int const b = w - 1;
  int const nacc = m * (m + 1) / 2;
  if constexpr (Tune::coalesce) {
    if (nacc > Tune::max_acc * Tune::blocks_team_size)
      throw ParameterError("solve::band_strided_inverse_blocks: blocks of " + std::to_string(m) +
                           " need more accumulators than BandTuning gives");
  }
  // Scratch: GPU, the window [w][m] and two rows of L; host, the window [wrows][ld] (rows
  // grouped by kGroup for the Gram chunks, columns padded to the GEMM tile) and the tile's
  // accumulators.
  constexpr int kGroup = 8;
  int const tile = (m + 15) / 16 * 16, ld = tile;
  int const wrows = (w + kGroup - 1) / kGroup * kGroup;
  std::size_t const win = Tune::coalesce ? std::size_t(w) * m : std::size_t(wrows) * ld;
  std::size_t const extra = Tune::coalesce ? 2 * std::size_t(w) : std::size_t(tile) * tile + m;
  std::size_t const bytes = Scratch::shmem_size(win + extra);
  int const level = int(bytes) <= Policy::scratch_size_max(0) ? 0 : 1;
#if KSPECTER_SOLVE_HOST_SIMD
  BandRowFn const row_fn = Tune::coalesce ? nullptr : host_band_row_kernel();
  ChunkFn const chunk_fn = Tune::coalesce ? nullptr : host_chunk_kernel();
#endif

  auto kernel = KOKKOS_LAMBDA(Member const& team) {
    int const p = team.league_rank() / nblock, k = team.league_rank() % nblock;
    int const s = slot(p, k);
    double* C = &c(std::size_t(p) * nblock + k, 0, 0);
    if (s < 0 || s >= n) {  // not a block: the identity
      Kokkos::parallel_for(Kokkos::TeamThreadRange(team, m * m),
                           [&](int e) { C[e] = (e / m == e % m) ? 1.0 : 0.0; });
      return;
    }
    double const* L = &l(p, 0, 0);
    (void)stride;  // nvcc: a lambda may not capture a variable first inside if constexpr
    (void)b;
    (void)w;
    (void)ld;
    (void)wrows;
    (void)tile;
    Scratch sz(team.team_scratch(level), win + extra);
    double* Z = sz.data();  // the window: rows of Z by slot
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, int(win)), [&](int e) { Z[e] = 0.0; });
    team.team_barrier();

    if constexpr (Tune::coalesce) {
      int const nt = team.team_size(), rank = team.team_rank();
      // This thread's accumulators: entries (q1, q2), q1 >= q2, of the triangle folded into
      // rows (q, m - 1 - q), packed q1 << 16 | q2 once (-1: none), so that the rows below
      // need no index arithmetic.
      int const rows = (m + 1) / 2;
      int idx[Tune::max_acc];
      double acc[Tune::max_acc];
      for (int e = 0; e < Tune::max_acc; ++e) {
        acc[e] = 0.0;
        int const f = rank + e * nt;
        int code = -1;
        if (f < rows * (m + 1)) {
          int const rr = f / (m + 1), cc = f - rr * (m + 1);
          if (cc <= rr)
            code = (rr << 16) | cc;
          else if (m - 1 - rr != rr)  // the middle row of an odd m is counted once
            code = ((m - 1 - rr) << 16) | (cc - rr - 1);
        }
        idx[e] = code;
      }
      // Rows of L staged in scratch, two buffers: row r + 1 is loaded while row r is used.
      double* lbuf = Z + win;
      Kokkos::parallel_for(Kokkos::TeamThreadRange(team, w),
                           [&](int c) { lbuf[c] = L[std::size_t(s) * w + c]; });
      team.team_barrier();
      for (int r = s; r < n; ++r) {
        double const* lr = lbuf + ((r - s) & 1) * w;
        int const qmax = compat::imin(m - 1, (r - s) / stride);  // started columns: 0 .. qmax
        double* zrow = Z + (r % w) * m;
        Kokkos::parallel_for(Kokkos::TeamThreadRange(team, qmax + 1), [&](int q) {
          int const start = s + stride * q;
          int const j0 = compat::imax(r - b, start);  // z(j, q) = 0 above its start
          int js = j0 % w;
          double const* lj = lr + (j0 - r + b);
          double v0 = 0.0, v1 = 0.0;  // two chains: the FMAs of a column overlap
          int j = j0;
          for (; j + 1 < r; j += 2, lj += 2) {
            int const js1 = js + 1 == w ? 0 : js + 1;
            v0 += lj[0] * Z[js * m + q];
            v1 += lj[1] * Z[js1 * m + q];
            js = js1 + 1 == w ? 0 : js1 + 1;
          }
          if (j < r) v0 += lj[0] * Z[js * m + q];
          zrow[q] = ((r == start ? 1.0 : 0.0) - (v0 + v1)) / lr[b];
        });
        if (r + 1 < n) {
          double* next = lbuf + ((r + 1 - s) & 1) * w;
          Kokkos::parallel_for(Kokkos::TeamThreadRange(team, w),
                               [&](int c) { next[c] = L[std::size_t(r + 1) * w + c]; });
        }
        team.team_barrier();
        for (int e = 0; e < Tune::max_acc; ++e) {
          int const code = idx[e];
          if (code < 0) continue;
          int const q1 = code >> 16, q2 = code & 0xffff;
          if (q1 <= qmax) acc[e] += zrow[q1] * zrow[q2];
        }
      }
      for (int e = 0; e < Tune::max_acc; ++e) {
        int const code = idx[e];
        if (code < 0) continue;
        int const q1 = code >> 16, q2 = code & 0xffff;
        C[q1 * m + q2] = acc[e];
        C[q2 * m + q1] = acc[e];
      }
    } else {
      double* zr = Z + win;  // the row being made (portable path)
#if KSPECTER_SOLVE_HOST_SIMD
      if (row_fn && chunk_fn) {
        band_block_host(BandBlockHost{n, w, m, stride, ld, wrows, kGroup, tile}, L, s, Z, zr + m, C,
                        row_fn, chunk_fn);
        return;
      }
#endif
      Kokkos::single(Kokkos::PerTeam(team), [&]() {
        for (int e = 0; e < m * m; ++e) C[e] = 0.0;
        for (int r = s; r < n; ++r) {
          double const* lr = L + std::size_t(r) * w;
          int const qmax = compat::imin(m - 1, (r - s) / stride);
          int const nq = qmax + 1;
          for (int q = 0; q < nq; ++q) zr[q] = r == s + stride * q ? 1.0 : 0.0;
          // Rows above the first start hold zeros in the window: no need to skip them.
          for (int j = compat::imax(r - b, s); j < r; ++j) {
            double const lj = lr[j - r + b];
            if (lj == 0.0) continue;
            double const* zj = Z + (j % wrows) * ld;
            for (int q = 0; q < nq; ++q) zr[q] -= lj * zj[q];
          }
          double const inv = 1.0 / lr[b];
          double* zrow = Z + (r % wrows) * ld;
          for (int q = 0; q < nq; ++q) zrow[q] = zr[q] * inv;
          for (int q = nq; q < m; ++q) zrow[q] = 0.0;  // not started: the slot's old row
          for (int q1 = 0; q1 < nq; ++q1) {
            double const z1 = zrow[q1];
            double* c1 = C + q1 * m;
            for (int q2 = 0; q2 <= q1; ++q2) c1[q2] += z1 * zrow[q2];
          }
        }
        for (int q1 = 0; q1 < m; ++q1)
          for (int q2 = q1 + 1; q2 < m; ++q2) C[q1 * m + q2] = C[q2 * m + q1];
      });
    }
  };
  auto const scratch = [&](Policy pol) {
    return pol.set_scratch_size(level, Kokkos::PerTeam(bytes));
  };
  int const most =
      scratch(Policy(space, nmat * nblock, 1)).team_size_max(kernel, Kokkos::ParallelForTag());
  int const want = Tune::coalesce ? Tune::blocks_team_size : 1;
  if (Tune::coalesce && most < want)
    throw ParameterError("solve::band_strided_inverse_blocks: the device runs " +
                         std::to_string(most) + " threads per team, fewer than the " +
                         std::to_string(want) + " its accumulators are spread over");
  Policy const policy = scratch(Policy(space, nmat * nblock, want));
  Kokkos::parallel_for("kspecter::solve::band_strided_inverse_blocks", policy, kernel);
}

}  // namespace detail

template <class ExecSpace>
void band_strided_inverse_blocks(
    ExecSpace const& space, BandBatch<typename ExecSpace::memory_space> l,
    Kokkos::View<const int**, Kokkos::LayoutRight, typename ExecSpace::memory_space> slot,
    int stride, MatrixBatch<typename ExecSpace::memory_space> c) {
  detail::band_strided_inverse_blocks_impl<BandTuning<ExecSpace>>(space, l, slot, stride, c);
}

}  // namespace kspecter::solve
