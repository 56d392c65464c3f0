// The CUDA specialisation of band_strided_inverse_blocks (declared in band.hpp; docs/algorithm.md
// §4) on the fp64 tensor cores of sm_80 and later (DMMA, mma.m8n8k4.f64), chosen by
// BandTuning::dmma: rows of Z = L⁻¹ E made eight at a time as a small GEMM, C = Zᵀ Z as 8 x 8
// tiles, both on the tensor cores.
#pragma once

#include <Kokkos_Core.hpp>
#include <cstddef>
#include <kspecter/core/kokkos_compat.hpp>
#include <kspecter/solve/band.hpp>

#include "../common/dmma.hpp"
#include "../common/unroll.hpp"
#include "band_blocks_grouped.hpp"

namespace kspecter::solve::detail {

// For block (p, k) with first index s and stride t, Z = L⁻¹ E (E = the columns s + t q of the
// identity) is made a panel of 8 rows R = [r0, r0 + 8) at a time:
//   1. X = E_R - L(R, [r0 - K, r0)) Z([r0 - K, r0), :), K = b rounded up to 4: warp w owns the
//      8-column tiles j = w, w + W, ... and runs K / 4 DMMAs a tile, with L's fragments read
//      from global memory (the band's zeros outside it) and Z's from the window;
//   2. Z_R = L_RR⁻¹ X by substitution in the registers of the fragments: a column's 8 rows are
//      8 lanes of one warp, so row i's values reach the rows below it by a shuffle;
//   3. after a barrier, the panel's rows replace the window's 8 oldest (circular, row r in slot
//      r mod max(b, 8)); after another, each warp adds Z_Rᵀ Z_R to its 8 x 8 tiles of C's
//      lower triangle, two DMMAs a tile, in registers until the end.
// Column q is zero above its start s + t q: tiles none of whose columns has started are left
// out of both products, and so are the window rows above a tile's first start. The window holds
// max(b, 8) rows of ld doubles (ld >= m, 12 mod 16 where it fits: a fragment's 4 rows x 8
// columns then read in two wavefronts); 39,520 bytes for m = 74 and b = 65. The kernel is
// bound by its instruction issue, not by the tensor cores: window slots advance by adding, as
// an integer remainder a step took half its time. It beats the grouped kernel on an H100
// (perf/bench_band; perf/gpu_runs.md, session 12).
template <class Tune, class ExecSpace>
struct BandBlocksDmma : BandBlocksArgs<typename ExecSpace::memory_space> {
  static constexpr int W = Tune::dmma_warps;            // warps a team
  static constexpr int kMaxTiles = 10;                  // 8-column tiles of a block: m <= 80
  static constexpr int kMaxSteps = 17;                  // K / 4: b <= 68
  static constexpr int kAhead = 8;                      // steps between a load of L and its product
  static constexpr int kOwn = (kMaxTiles + W - 1) / W;  // X tiles a warp
  static constexpr int kGram = (kMaxTiles * (kMaxTiles + 1) / 2 + W - 1) / W;  // C tiles a warp
  using mem = typename ExecSpace::memory_space;
  using Policy = Kokkos::TeamPolicy<ExecSpace, Kokkos::Schedule<Kokkos::Dynamic>,
                                    Kokkos::LaunchBounds<32 * W, Tune::dmma_teams_per_sm>>;
  using Member = typename Policy::member_type;
  using Scratch = Kokkos::View<double*, typename ExecSpace::scratch_memory_space,
                               Kokkos::MemoryTraits<Kokkos::Unmanaged>>;

  using Args = BandBlocksArgs<mem>;
  using Args::b, Args::c, Args::l, Args::m, Args::n, Args::nblock, Args::slot, Args::stride,
      Args::w;
  int K;      // window rows a panel's product reads: b rounded up to 4
  int wrows;  // window rows held: max(b, 8)
  int ld;     // window row stride
  int nt;     // 8-column tiles: ceil(m / 8)

  BandBlocksDmma(BandBatch<mem> l_, Kokkos::View<const int**, Kokkos::LayoutRight, mem> slot_,
                 int stride_, MatrixBatch<mem> c_, int ld_)
      : Args(l_, slot_, stride_, c_),
        K((b + 3) / 4 * 4),
        wrows(compat::imax(b, 8)),
        ld(ld_),
        nt((m + 7) / 8) {}

  /// Whether a block of m columns and half-bandwidth b fits the kernel's register tiles.
  static bool fits(int m, int b) { return m <= 8 * kMaxTiles && (b + 3) / 4 <= kMaxSteps; }
  KOKKOS_INLINE_FUNCTION static std::size_t scratch_doubles(int b, int ld) {
    return std::size_t(compat::imax(b, 8)) * std::size_t(ld);
  }

  KOKKOS_INLINE_FUNCTION void operator()(Member const& team) const {
    int const blk = team.league_rank(), p = blk / nblock, s = this->start(team, blk);
    if (s < 0) return;
    double* C = &c(std::size_t(blk), 0, 0);
    Scratch const sz(team.team_scratch(0), scratch_doubles(b, ld));
    double* const Z = sz.data();
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, wrows * ld), [&](int e) { Z[e] = 0.0; });
    int const warp = team.team_rank() / 32, lane = team.team_rank() % 32;
    int const gid = lane / 4, tig = lane % 4;
    double g[kGram][2];  // the warp's tiles of C (each_warp_tile)
    KSPECTER_UNROLL
    for (int e = 0; e < kGram; ++e) g[e][0] = g[e][1] = 0.0;
    double const* L = &l(p, 0, 0);
    team.team_barrier();
    for (int r0 = s; r0 < n; r0 += 8) {
      // 8-column tiles with a started column by the panel's last row.
      int const started = compat::imin(nt, compat::imin(m - 1, (r0 + 7 - s) / stride) / 8 + 1);
      double x[kOwn][2];
      panel_product(L, Z, s, r0, started, warp, gid, tig, x);
      panel_solve(L, s, r0, started, warp, gid, tig, x);
      team.team_barrier();  // every warp is done reading the rows the panel replaces
      double* const zw = Z + std::size_t(slot_of(r0 + gid)) * ld;
      each_owned(started, warp, tig, [&](int o, int h, int q) {
        if (q < m) zw[q] = x[o][h];
      });
      team.team_barrier();
      panel_gram(Z, r0, started, warp, gid, tig, g);
    }
    each_warp_tile<W, kGram>(warp, [&](int e, int a, int cc) {
      if (a >= nt) return;  // past the triangle
      KSPECTER_UNROLL
      for (int h = 0; h < 2; ++h) {
        int const q1 = 8 * a + gid, q2 = 8 * cc + 2 * tig + h;
        if (q1 >= m || q2 >= m || q2 > q1) continue;  // padding, or above the diagonal
        C[q1 * m + q2] = g[e][h];
        C[q2 * m + q1] = g[e][h];
      }
    });
  }

  // f(o, h, q) for the lane's entries of the warp's started tiles: x[o][h] is column q.
  template <class F>
  KOKKOS_INLINE_FUNCTION void each_owned(int started, int warp, int tig, F const& f) const {
    KSPECTER_UNROLL
    for (int o = 0; o < kOwn; ++o) {
      int const j = warp + W * o;
      if (j >= started) continue;
      KSPECTER_UNROLL
      for (int h = 0; h < 2; ++h) f(o, h, 8 * j + 2 * tig + h);
    }
  }

  // The window slot of row r (r mod wrows; a row above 0 gets a slot too, never read).
  KOKKOS_INLINE_FUNCTION int slot_of(int r) const { return ((r % wrows) + wrows) % wrows; }

  // Step 1: x = L(R, [r0 - K, r0)) Z([r0 - K, r0), tile) for the warp's started tiles (step 2
  // takes it from E).
  KOKKOS_INLINE_FUNCTION void panel_product(double const* L, double const* Z, int s, int r0,
                                            int started, int warp, int gid, int tig,
                                            double (&x)[kOwn][2]) const {
    int const r = r0 + gid;
    double const* lrow = L + std::size_t(r < n ? r : n - 1) * w;  // clamped: r >= n reads 0
    // A(gid, tig) of step k is L(r, r0 - K + 4 k + tig), 0 off the band. Each is loaded
    // kAhead steps before its product, so that a panel waits on global memory about once.
    auto const load_a = [&](int k) {
      int const cl = b - K + 4 * k + tig - gid;
      return (k < K / 4 && r < n && cl >= 0) ? lrow[cl] : 0.0;
    };
    double a[kMaxSteps];
    KSPECTER_UNROLL
    for (int k = 0; k < kAhead; ++k) a[k] = load_a(k);
    // The warp's first tile has the earliest start: window rows above it are zero in all.
    int const first = compat::imax(r0 - b, s + stride * 8 * warp);
    int const k0 = compat::imax(0, (first - (r0 - K)) / 4);
    KSPECTER_UNROLL
    for (int o = 0; o < kOwn; ++o) x[o][0] = x[o][1] = 0.0;
    // Window slot of the lane's row r0 - K + 4 k + tig, advanced by 4 a step (no division in
    // the loop); rows above 0 read 0.
    int sl = slot_of(r0 - K + tig);
    KSPECTER_UNROLL
    for (int k = 0; k < kMaxSteps; ++k) {
      if (k + kAhead < kMaxSteps) a[k + kAhead] = load_a(k + kAhead);
      int const row = r0 - K + 4 * k + tig;
      double const* zr = Z + std::size_t(sl) * ld;
      sl = sl + 4 < wrows ? sl + 4 : sl + 4 - wrows;
      if (k < k0 || k >= K / 4) continue;
      KSPECTER_UNROLL
      for (int o = 0; o < kOwn; ++o) {
        int const j = warp + W * o, col = 8 * j + gid;
        if (j >= started) continue;
        dmma_8x8x4(x[o][0], x[o][1], a[k], (row >= 0 && col < m) ? zr[col] : 0.0);
      }
    }
  }

  // Step 2: x = L_RR⁻¹ (E_R - x), row gid of the panel in each lane, row by row down the panel.
  KOKKOS_INLINE_FUNCTION void panel_solve(double const* L, int s, int r0, int started, int warp,
                                          int gid, int tig, double (&x)[kOwn][2]) const {
    int const r = r0 + gid;
    double lr[8];  // L(r, r0 + i) for i < gid, 0 off the band
    KSPECTER_UNROLL
    for (int i = 0; i < 8; ++i) {
      int const cl = b - gid + i;
      lr[i] = (i < gid && r < n && cl >= 0) ? L[std::size_t(r) * w + cl] : 0.0;
    }
    double const inv = r < n ? 1.0 / L[std::size_t(r) * w + b] : 0.0;
    each_owned(started, warp, tig, [&](int o, int h, int q) {
      x[o][h] = ((q < m && r == s + stride * q) ? 1.0 : 0.0) - x[o][h];
    });
    KSPECTER_UNROLL
    for (int o = 0; o < kOwn; ++o) {
      if (warp + W * o >= started) continue;
      KSPECTER_UNROLL
      for (int i = 0; i < 8; ++i) {
        KSPECTER_UNROLL
        for (int h = 0; h < 2; ++h) {
          if (gid == i) x[o][h] *= inv;
          double const zi = warp_value(x[o][h], 4 * i + tig);
          if (gid > i) x[o][h] -= lr[i] * zi;
        }
      }
    }
  }

  // Step 3: C += Z_Rᵀ Z_R on the warp's tiles (each_warp_tile) whose rows have started.
  KOKKOS_INLINE_FUNCTION void panel_gram(double const* Z, int r0, int started, int warp, int gid,
                                         int tig, double (&g)[kGram][2]) const {
    double const* z0 = Z + std::size_t(slot_of(r0 + tig)) * ld;
    double const* z1 = Z + std::size_t(slot_of(r0 + 4 + tig)) * ld;
    each_warp_tile<W, kGram>(warp, [&](int e, int a, int cc) {
      if (a >= started) return;
      int const qa = 8 * a + gid, qc = 8 * cc + gid;
      dmma_8x8x4(g[e][0], g[e][1], qa < m ? z0[qa] : 0.0, qc < m ? z0[qc] : 0.0);
      dmma_8x8x4(g[e][0], g[e][1], qa < m ? z1[qa] : 0.0, qc < m ? z1[qc] : 0.0);
    });
  }
};

/// The window's row stride for m columns: the smallest ld >= m with ld = 12 mod 16 whose
/// window fits `bytes`, else m.
inline int band_dmma_stride(int m, int b, std::size_t bytes) {
  int ld = m + ((12 - m % 16) + 16) % 16;
  return std::size_t(compat::imax(b, 8)) * std::size_t(ld) * sizeof(double) <= bytes ? ld : m;
}

/// Runs the DMMA kernel over `league` blocks when it fits (the block in its register tiles,
/// the window in level-0 scratch, a team of Tune::dmma_warps warps) and returns whether it ran.
template <class Tune, class ExecSpace>
bool band_blocks_dmma(
    ExecSpace const& space, BandBatch<typename ExecSpace::memory_space> l,
    Kokkos::View<const int**, Kokkos::LayoutRight, typename ExecSpace::memory_space> const& slot,
    int stride, MatrixBatch<typename ExecSpace::memory_space> c, int league) {
  using F = BandBlocksDmma<Tune, ExecSpace>;
  using Policy = typename F::Policy;
  int const b = int(l.extent(2)) - 1, m = int(c.extent(1));
  std::size_t const most = std::size_t(Policy::scratch_size_max(0));
  if (!F::fits(m, b)) return false;
  int const ld = band_dmma_stride(m, b, most);
  int const bytes = int(F::Scratch::shmem_size(F::scratch_doubles(b, ld)));
  if (std::size_t(bytes) > most) return false;
  Policy const policy =
      Policy(space, league, 32 * F::W).set_scratch_size(0, Kokkos::PerTeam(bytes));
  Kokkos::parallel_for("kspecter::solve::band_strided_inverse_blocks", policy,
                       F(l, slot, stride, c, ld));
  return true;
}

}  // namespace kspecter::solve::detail
