// The CUDA specialisation of the staged inverse square root's finish (inverse_sqrt_staged.hpp)
// on the fp64 tensor cores of sm_80 and later, chosen by Tuning::eig_finish_dmma. The same
// numbers as eig_finish (eig_steps.hpp) go in: zt's rows scaled by w^-1/4, w clipped at
// clip x w_max, and Q = ztᵀ zt, zero where the iteration failed or a scaled entry is not
// finite. Only the sums' order differs: Q's lower triangle is 8 x 8 tiles, each a sum of
// m8n8k4 DMMAs in registers, over chunks of zt's rows staged in level-0 scratch; the upper
// triangle is copied from the lower one, so Q is exactly symmetric. The product is of zt's
// first n columns, n x n at stride m (n = m: Q whole).
#pragma once

#include <Kokkos_Core.hpp>
#include <kspecter/core/kokkos_compat.hpp>
#include <kspecter/solve/batched.hpp>

#include "../common/dmma.hpp"
#include "../common/unroll.hpp"
#include "eig_rounds.hpp"

namespace kspecter::solve::detail {

template <class ExecSpace, int W, int TeamsPerSm>
struct EigFinishDmma {
  using Mem = typename ExecSpace::memory_space;
  using Policy = Kokkos::TeamPolicy<ExecSpace, Kokkos::LaunchBounds<32 * W, TeamsPerSm>>;
  using Member = typename Policy::member_type;
  using Scratch = Kokkos::View<double*, typename ExecSpace::scratch_memory_space,
                               Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  static constexpr int kChunk = 40;  // rows of zt a stage, a multiple of 4
  static constexpr int kTiles = 10;  // tile rows: m <= 80
  static constexpr int kTileCount = kTiles * (kTiles + 1) / 2;
  static constexpr int kOwn = (kTileCount + W - 1) / W;  // tiles a warp

  EigRounds<Mem> r;
  MatrixBatch<Mem> c;  // Q, over the matrices' storage
  int n;               // columns of zt formed, <= m
  double clip;
  int ld;  // the stage's row stride: >= 8 tiles, 8 mod 16 (a fragment in two wavefronts)

  KOKKOS_INLINE_FUNCTION static bool fits(int m) { return m <= 8 * kTiles; }
  KOKKOS_INLINE_FUNCTION static int stride(int m) {
    return 8 * ((m + 7) / 8) + (16 - (8 * ((m + 7) / 8)) % 16 + 8) % 16;
  }
  KOKKOS_INLINE_FUNCTION static int scratch_doubles(int m) { return kChunk * stride(m) + m; }

  KOKKOS_INLINE_FUNCTION void operator()(Member const& team) const {
    int const b = team.league_rank(), m = r.m, tiles = (n + 7) / 8;
    double* const A = &c(b, 0, 0);
    double const* const d = &r.vec(b, 0);
    // w_max as eig_finish finds it (a NaN after d[0] is passed over), by every thread.
    double wmax = d[0];
    for (int i = 1; i < m; ++i) wmax = d[i] > wmax ? d[i] : wmax;
    bool const ok =
        r.state(b, EigRounds<Mem>::status_field) == 1 && wmax > 0.0 && compat::isfinite(wmax);
    if (!ok) return zero(team, A, m);
    Scratch s(team.team_scratch(0), scratch_doubles(m));
    double* const z = s.data();
    double* const sc = z + kChunk * ld;
    double const floor = clip * wmax;
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, m), [&](int k) {
      double const w = d[k] > floor ? d[k] : floor;
      sc[k] = 1.0 / compat::sqrt(compat::sqrt(w));
    });
    int const lane = team.team_rank() % 32, warp = team.team_rank() / 32;
    int const gid = lane / 4, tig = lane % 4;
    double g[kOwn][2] = {};
    int col_a[kOwn], col_c[kOwn];  // the lane's columns of its tiles' two operands
    each_warp_tile<W, kOwn>(warp, [&](int e, int a, int cc) {
      col_a[e] = 8 * a + gid;
      col_c[e] = 8 * cc + gid;
    });
    int const ntile = tiles * (tiles + 1) / 2, width = 8 * tiles;
    double const* const zt = &r.zt(b, 0, 0);
    int bad = 0;
    for (int k0 = 0; k0 < m; k0 += kChunk) {
      team.team_barrier();  // sc is set; the chunk before is used
      int nbad = 0;
      Kokkos::parallel_reduce(
          Kokkos::TeamThreadRange(team, kChunk * width),
          [&](int t, int& nonfinite) {
            int const kk = t / width, j = t % width, k = k0 + kk;
            double const v = k < m && j < n ? zt[k * m + j] * sc[k] : 0.0;
            z[kk * ld + j] = v;
            nonfinite += compat::isfinite(v) ? 0 : 1;
          },
          nbad);
      bad += nbad;
      team.team_barrier();
      int const rows = m - k0 < kChunk ? m - k0 : kChunk;
      for (int kk = 0; kk < rows; kk += 4) {
        double const* const zr = z + (kk + tig) * ld;
        KSPECTER_UNROLL
        for (int e = 0; e < kOwn; ++e)
          if (warp + W * e < ntile) dmma_8x8x4(g[e][0], g[e][1], zr[col_a[e]], zr[col_c[e]]);
      }
    }
    if (bad != 0) return zero(team, A, m);
    // Lane (gid, tig) holds D(gid, 2 tig + h) of each tile: Q(8 a + gid, 8 cc + 2 tig + h).
    each_warp_tile<W, kOwn>(warp, [&](int e, int a, int cc) {
      if (warp + W * e >= ntile) return;
      int const i = 8 * a + gid;
      KSPECTER_UNROLL
      for (int h = 0; h < 2; ++h) {
        int const j = 8 * cc + 2 * tig + h;
        if (i < n && j < n && (a > cc || i >= j)) A[i * m + j] = A[j * m + i] = g[e][h];
      }
    });
  }

  KOKKOS_INLINE_FUNCTION static void zero(Member const& team, double* A, int m) {
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, m * m), [&](int e) { A[e] = 0.0; });
  }
};

/// Runs the DMMA finish of zt's first n columns when blocks of m fit it (teams of W warps, at
/// least TeamsPerSm of them an SM: the launch bound) and returns whether it ran.
template <int W, int TeamsPerSm, class ExecSpace>
bool eig_finish_dmma(ExecSpace const& space, EigRounds<typename ExecSpace::memory_space> const& r,
                     MatrixBatch<typename ExecSpace::memory_space> c, int n, double clip) {
  using F = EigFinishDmma<ExecSpace, W, TeamsPerSm>;
  int const m = r.m, nmat = int(c.extent(0));
  if (!F::fits(m)) return false;
  int const bytes = int(F::Scratch::shmem_size(F::scratch_doubles(m)));
  if (bytes > F::Policy::scratch_size_max(0)) return false;
  typename F::Policy const policy =
      typename F::Policy(space, nmat, 32 * W).set_scratch_size(0, Kokkos::PerTeam(bytes));
  Kokkos::parallel_for("kspecter::solve::inverse_sqrt::finish", policy,
                       F{r, c, n, clip, F::stride(m)});
  return true;
}

}  // namespace kspecter::solve::detail
