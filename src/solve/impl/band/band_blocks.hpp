// Strided diagonal blocks of the inverse of a band matrix from its Cholesky factor (declared
// in band.hpp).
#pragma once

#include <Kokkos_Core.hpp>
#include <kspecter/core/error.hpp>
#include <kspecter/core/kokkos_compat.hpp>
#include <kspecter/core/profiling.hpp>
#include <kspecter/solve/band.hpp>
#include <string>

#include "../tuning.hpp"
#include "band_blocks_dmma.hpp"
#include "band_blocks_grouped.hpp"
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
// row s + t q (its "start"), so rows only touch the columns started so far.
// GPU (Tune::coalesce): band_blocks_grouped.hpp, rows in groups, C in register tiles.
// Host: row r is an axpy over the started columns per band entry, then a rank-1 update of
// C's lower triangle, in the output block itself (both vectorised, L1-resident); the last b
// rows of Z live in a circular window in team scratch (row r in slot r mod wrows).
template <class ExecSpace>
void band_blocks_by_row(
    ExecSpace const& space, BandBatch<typename ExecSpace::memory_space> l,
    Kokkos::View<const int**, Kokkos::LayoutRight, typename ExecSpace::memory_space> slot,
    int stride, MatrixBatch<typename ExecSpace::memory_space> c) {
  using Policy = Kokkos::TeamPolicy<ExecSpace, Kokkos::Schedule<Kokkos::Dynamic>>;
  using Member = typename Policy::member_type;
  using Scratch = Kokkos::View<double*, typename ExecSpace::scratch_memory_space,
                               Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  int const nmat = int(l.extent(0));
  int const n = int(l.extent(1));
  int const w = int(l.extent(2));
  int const nblock = int(slot.extent(1));
  int const m = int(c.extent(1));
  int const b = w - 1;
  // Scratch: the window [wrows][ld] (rows grouped by kGroup for the Gram chunks, columns
  // padded to the GEMM tile), the tile's accumulators and the row being made.
  constexpr int kGroup = 8;
  int const tile = (m + 15) / 16 * 16, ld = tile;
  int const wrows = (w + kGroup - 1) / kGroup * kGroup;
  std::size_t const win = std::size_t(wrows) * ld;
  std::size_t const bytes = Scratch::shmem_size(win + std::size_t(tile) * tile + m);
  int const level = int(bytes) <= Policy::scratch_size_max(0) ? 0 : 1;
#if KSPECTER_SOLVE_HOST_SIMD
  BandRowFn const row_fn = host_band_row_kernel();
  ChunkFn const chunk_fn = host_chunk_kernel();
#endif

  auto kernel = KOKKOS_LAMBDA(Member const& team) {
    int const p = team.league_rank() / nblock, k = team.league_rank() % nblock;
    int const s = slot(p, k);
    double* C = &c(std::size_t(p) * nblock + k, 0, 0);
    if (s < 0 || s >= n) {  // not a block: the identity
      for (int e = 0; e < m * m; ++e) C[e] = (e / m == e % m) ? 1.0 : 0.0;
      return;
    }
    double const* L = &l(p, 0, 0);
    Scratch sz(team.team_scratch(level), win + std::size_t(tile) * tile + m);
    double* Z = sz.data();  // the window: rows of Z by slot
    for (std::size_t e = 0; e < win; ++e) Z[e] = 0.0;
    double* zr = Z + win;  // the row being made (portable path)
#if KSPECTER_SOLVE_HOST_SIMD
    if (row_fn && chunk_fn) {
      band_block_host(BandBlockHost{n, w, m, stride, ld, wrows, kGroup, tile}, L, s, Z, zr + m, C,
                      row_fn, chunk_fn);
      return;
    }
#endif
    for (int e = 0; e < m * m; ++e) C[e] = 0.0;
    for (int r = s; r < n; ++r) {
      double const* lr = L + std::size_t(r) * w;
      int const nq = compat::imin(m - 1, (r - s) / stride) + 1;
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
  };
  Policy const policy =
      Policy(space, nmat * nblock, 1).set_scratch_size(level, Kokkos::PerTeam(bytes));
  Kokkos::parallel_for("kspecter::solve::band_strided_inverse_blocks", policy, kernel);
}

template <class Tune, class ExecSpace>
void band_strided_inverse_blocks_impl(
    ExecSpace const& space, BandBatch<typename ExecSpace::memory_space> l,
    Kokkos::View<const int**, Kokkos::LayoutRight, typename ExecSpace::memory_space> slot,
    int stride, MatrixBatch<typename ExecSpace::memory_space> c) {
  ScopedRegion region("kspecter::solve::band_strided_inverse_blocks");
  int const nmat = int(l.extent(0)), n = int(l.extent(1));
  int const nblock = int(slot.extent(1)), m = int(c.extent(1));
  if (int(c.extent(2)) != m || int(c.extent(0)) < nmat * nblock || int(slot.extent(0)) < nmat)
    throw ParameterError("solve::band_strided_inverse_blocks: c must be [" +
                         std::to_string(nmat * nblock) + "][m][m] and slot [" +
                         std::to_string(nmat) + "][nblock]");
  if (stride < 1 || (m > 0 && (m - 1) * stride >= n))
    throw ParameterError("solve::band_strided_inverse_blocks: " + std::to_string(m) +
                         " indices of stride " + std::to_string(stride) +
                         " do not fit a matrix of size " + std::to_string(n));
  if (nmat == 0 || nblock == 0 || m == 0) return;
  if constexpr (Tune::dmma)
    if (band_blocks_dmma<Tune>(space, l, slot, stride, c, nmat * nblock)) return;
  if constexpr (Tune::coalesce)
    band_blocks_grouped<Tune>(space, BandBlocksGrouped<Tune, ExecSpace>(l, slot, stride, c),
                              nmat * nblock);
  else
    band_blocks_by_row(space, l, slot, stride, c);
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
