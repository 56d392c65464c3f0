// The GPU shape of band_strided_inverse_blocks (declared in band.hpp; docs/algorithm.md §4):
// a team per (matrix, block), the rows of Z = L⁻¹ E made a group of BandTuning::rows at a
// time, and C = Zᵀ Z accumulated in 2 x 2 register tiles.
#pragma once

#include <Kokkos_Core.hpp>
#include <cstdint>
#include <kspecter/core/kokkos_compat.hpp>
#include <kspecter/solve/band.hpp>

#include "../common/team_gemm.hpp"
#include "../common/unroll.hpp"

namespace kspecter::solve::detail {

/// What every GPU shape of band_strided_inverse_blocks reads: the factors L, the blocks' first
/// indices (slot, -1: none), their stride and the output C, with their sizes; b = w - 1 is the
/// half-bandwidth.
template <class MemorySpace>
struct BandBlocksArgs {
  BandBatch<MemorySpace> l;
  Kokkos::View<const int**, Kokkos::LayoutRight, MemorySpace> slot;
  MatrixBatch<MemorySpace> c;
  int n, w, m, stride, nblock, b;

  BandBlocksArgs(BandBatch<MemorySpace> l_,
                 Kokkos::View<const int**, Kokkos::LayoutRight, MemorySpace> slot_, int stride_,
                 MatrixBatch<MemorySpace> c_)
      : l(l_),
        slot(slot_),
        c(c_),
        n(int(l_.extent(1))),
        w(int(l_.extent(2))),
        m(int(c_.extent(1))),
        stride(stride_),
        nblock(int(slot_.extent(1))),
        b(w - 1) {}

  /// The first index of block blk, or -1 when it is none (the team then writes its C = I).
  template <class Member>
  KOKKOS_INLINE_FUNCTION int start(Member const& team, int blk) const {
    int const s = slot(blk / nblock, blk % nblock);
    if (s >= 0 && s < n) return s;
    double* C = &c(std::size_t(blk), 0, 0);
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, m * m),
                         [&](int e) { C[e] = (e / m == e % m) ? 1.0 : 0.0; });
    return -1;
  }
};

/// Two doubles loaded or stored as one 16-byte access (LDS.128 on a GPU).
struct alignas(16) DoublePair {
  double x, y;
};

// For block (p, k) with first index s and stride t, Z = L⁻¹ E (E = the columns s + t q of the
// identity) is made by band forward substitution, a group of G rows [r0, r0 + G) at a time:
//   1. the team stages the group's rows of L, transposed, Lt[j - r0 + b][i] = L(r0 + i, j),
//      zero outside the band, so that a thread reads the G factors of a window row at once;
//   2. thread q (column q, which is zero above its start s + t q) sums the window rows of its
//      own column into G partial sums, solves the group's small triangle in registers and
//      writes the G rows back into the window (circular, row r in slot r mod wrows): the
//      substitution reads only the thread's own column and needs no barrier;
//   3. after a barrier, each thread adds the group's rows to its 2 x 2 tiles of C's lower
//      triangle, held in registers (tile (a, c), a >= c, covers rows 2a, 2a + 1 and columns
//      2c, 2c + 1; consecutive threads hold consecutive tiles of a tile row).
// Two barriers a group instead of one a row, a quarter of the loads of the row-by-row kernel
// per product, and no accumulator indexed at run time. The window holds b rows of the m
// columns (padded to an even count, 16-byte pairs), the staged rows (b + G) x G doubles:
// 40,704 bytes for m = 74, b = 65 and G = 4, within the 40 KiB of level-0 scratch that Kokkos
// 3.4 gives a CUDA team (a wider band goes to level 1).
template <class Tune, class ExecSpace>
struct BandBlocksGrouped : BandBlocksArgs<typename ExecSpace::memory_space> {
  static constexpr int G = Tune::rows;  // rows of Z a group (even: 16-byte pairs of L)
  static_assert(G % 2 == 0, "BandTuning::rows must be even");
  static constexpr int kTiles = Tune::tiles;  // 2 x 2 tiles of C a thread at most
  using mem = typename ExecSpace::memory_space;
  using Policy = Kokkos::TeamPolicy<
      ExecSpace, Kokkos::Schedule<Kokkos::Dynamic>,
      Kokkos::LaunchBounds<Tune::blocks_teams_per_sm == 0 ? 0 : Tune::blocks_team_size,
                           Tune::blocks_teams_per_sm>>;
  using Member = typename Policy::member_type;
  using Scratch = Kokkos::View<double*, typename ExecSpace::scratch_memory_space,
                               Kokkos::MemoryTraits<Kokkos::Unmanaged>>;

  using Args = BandBlocksArgs<mem>;
  using Args::b, Args::c, Args::l, Args::m, Args::n, Args::nblock, Args::slot, Args::stride,
      Args::w;
  int ld;         // window row stride: m rounded up to even
  int wrows;      // window rows: max(b, G)
  int level;      // scratch level
  int tile0 = 0;  // the launch's first tile (a launch holds team size x kTiles of them)

  BandBlocksGrouped(BandBatch<mem> l_, Kokkos::View<const int**, Kokkos::LayoutRight, mem> slot_,
                    int stride_, MatrixBatch<mem> c_)
      : Args(l_, slot_, stride_, c_), ld((m + 1) / 2 * 2), wrows(compat::imax(b, G)), level(0) {}

  /// Tiles of C's lower triangle (of the pairs of columns).
  KOKKOS_INLINE_FUNCTION int tile_count() const {
    int const h = ld / 2;
    return h * (h + 1) / 2;
  }
  /// Scratch a team needs, in doubles: the window, the staged rows, and 16-byte alignment.
  KOKKOS_INLINE_FUNCTION std::size_t scratch_doubles() const {
    return std::size_t(wrows) * ld + std::size_t(b + G) * G + 2;
  }

  KOKKOS_INLINE_FUNCTION void operator()(Member const& team) const {
    int const blk = team.league_rank(), p = blk / nblock, s = this->start(team, blk);
    if (s < 0) return;
    double* C = &c(std::size_t(blk), 0, 0);
    Scratch const sz(team.team_scratch(level), scratch_doubles());
    double* const Z = sz.data() + (reinterpret_cast<std::uintptr_t>(sz.data()) % 16 == 0 ? 0 : 1);
    double* const Lt = Z + std::size_t(wrows) * ld;
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, wrows * ld), [&](int e) { Z[e] = 0.0; });

    int tile[kTiles];  // this thread's tiles, a << 16 | c (-1: none)
    double acc[kTiles][4];
    KSPECTER_UNROLL
    for (int e = 0; e < kTiles; ++e) {
      tile[e] = tile_code(tile0 + team.team_rank() + e * team.team_size());
      acc[e][0] = acc[e][1] = acc[e][2] = acc[e][3] = 0.0;
    }
    double const* L = &l(p, 0, 0);
    for (int r0 = s; r0 < n; r0 += G) {
      int const g = compat::imin(G, n - r0);
      // Started columns by the group's last row: 0 .. qmax.
      int const qmax = compat::imin(m - 1, (r0 + g - 1 - s) / stride);
      stage_rows(team, Lt, L, r0);
      team.team_barrier();
      Kokkos::parallel_for(Kokkos::TeamThreadRange(team, qmax + 1),
                           [&](int q) { substitute(Z, Lt, r0, s + stride * q, q); });
      team.team_barrier();
      for (int i = 0; i < g; ++i) {
        double const* zr = Z + std::size_t((r0 + i) % wrows) * ld;
        KSPECTER_UNROLL
        for (int e = 0; e < kTiles; ++e) {
          int const a = tile[e] >> 16, cc = tile[e] & 0xffff;
          if (tile[e] < 0 || 2 * a > qmax) continue;  // row pair not started: zeros
          DoublePair const x = *reinterpret_cast<DoublePair const*>(zr + 2 * a);
          DoublePair const y = *reinterpret_cast<DoublePair const*>(zr + 2 * cc);
          acc[e][0] += x.x * y.x;
          acc[e][1] += x.x * y.y;
          acc[e][2] += x.y * y.x;
          acc[e][3] += x.y * y.y;
        }
      }
    }
    KSPECTER_UNROLL
    for (int e = 0; e < kTiles; ++e) {
      if (tile[e] < 0) continue;
      int const a = tile[e] >> 16, cc = tile[e] & 0xffff;
      for (int h = 0; h < 4; ++h) {
        int const q1 = 2 * a + h / 2, q2 = 2 * cc + h % 2;
        if (q1 >= m || q2 > q1) continue;  // padding, or the upper half of a diagonal tile
        C[q1 * m + q2] = acc[e][h];
        C[q2 * m + q1] = acc[e][h];
      }
    }
  }

  // Tile t of the lower triangle of tile pairs, row by row: a << 16 | c, or -1 past the end.
  KOKKOS_INLINE_FUNCTION int tile_code(int t) const {
    if (t >= tile_count()) return -1;
    int a = 0;
    while ((a + 1) * (a + 2) / 2 <= t) ++a;
    return (a << 16) | (t - a * (a + 1) / 2);
  }

  // Lt[jj][i] = L(r0 + i, r0 - b + jj) for jj < b + G, zero outside the band and the matrix.
  // Consecutive threads read consecutive entries of a row of L.
  KOKKOS_INLINE_FUNCTION void stage_rows(Member const& team, double* Lt, double const* L,
                                         int r0) const {
    int const span = b + G;
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, G * span), [&](int e) {
      int const i = e / span, jj = e % span, r = r0 + i, cl = jj - i;  // band column of L(r, j)
      Lt[jj * G + i] = (r < n && cl >= 0 && cl <= b) ? L[std::size_t(r) * w + cl] : 0.0;
    });
  }

  // Column q of the group's rows: z(r, q) = (δ(r, start) - Σ_j L(r, j) z(j, q)) / L(r, r).
  KOKKOS_INLINE_FUNCTION void substitute(double* Z, double const* Lt, int r0, int start,
                                         int q) const {
    if (start >= r0 + G) return;  // zeros in this group, already in the window
    double part[G];
    KSPECTER_UNROLL
    for (int i = 0; i < G; ++i) part[i] = 0.0;
    // Window rows [max(r0 - b, start), r0), in at most two contiguous runs of slots.
    int j = compat::imax(r0 - b, start);
    while (j < r0) {
      int const slot0 = j % wrows, run = compat::imin(r0 - j, wrows - slot0);
      double const* z = Z + std::size_t(slot0) * ld + q;
      DoublePair const* lt = reinterpret_cast<DoublePair const*>(Lt + (j - r0 + b) * G);
      for (int k = 0; k < run; ++k, z += ld, lt += G / 2) {
        double const zj = *z;
        KSPECTER_UNROLL
        for (int i = 0; i < G / 2; ++i) {
          DoublePair const f = lt[i];
          part[2 * i] += f.x * zj;
          part[2 * i + 1] += f.y * zj;
        }
      }
      j += run;
    }
    double zr[G];
    KSPECTER_UNROLL
    for (int i = 0; i < G; ++i) {
      int const r = r0 + i;
      double v = (r == start ? 1.0 : 0.0) - part[i];
      KSPECTER_UNROLL
      for (int i2 = 0; i2 < i; ++i2) v -= Lt[(b + i2) * G + i] * zr[i2];
      zr[i] = r < n ? v / Lt[(b + i) * G + i] : 0.0;
    }
    KSPECTER_UNROLL
    for (int i = 0; i < G; ++i)
      if (r0 + i < n) Z[std::size_t((r0 + i) % wrows) * ld + q] = zr[i];
  }
};

/// Launches f over `league` blocks: level-0 scratch when the team's fits, else level 1; the
/// tuning's team size unless fewer threads fit (team_policy_for). A block wider than the
/// team's tiles hold (m above 76 with 128 threads of 6 tiles) takes several launches,
/// each making Z again for its share of C's tiles.
template <class Tune, class ExecSpace>
void band_blocks_grouped(ExecSpace const& space, BandBlocksGrouped<Tune, ExecSpace> f, int league) {
  using F = BandBlocksGrouped<Tune, ExecSpace>;
  using Policy = typename F::Policy;
  int const bytes = int(F::Scratch::shmem_size(f.scratch_doubles()));
  f.level = bytes <= Policy::scratch_size_max(0) ? 0 : 1;
  Policy const policy = team_policy_for<Policy>(
      space, league, f.level == 0 ? bytes : 0, f.level == 1 ? bytes : 0, f, Tune::blocks_team_size);
  int const per_launch = policy.team_size() * Tune::tiles;
  for (f.tile0 = 0; f.tile0 < f.tile_count(); f.tile0 += per_launch)
    Kokkos::parallel_for("kspecter::solve::band_strided_inverse_blocks", policy, f);
}

}  // namespace kspecter::solve::detail
