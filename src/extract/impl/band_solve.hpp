// The band path of stages "assembly", "factorisation" and "covariance" (docs/algorithm.md
// §4): with its unknowns in wavelength-major order (v = bin * nslots + slot) a patch's iCov
// is a band matrix of half-width ~60 (solve/band.hpp). The assembly writes the band directly
// (its half-width bounded from the spots beforehand), the Cholesky costs ~n b², and only the
// core fibers' covariance blocks are made, straight into the Q buffer of the decorrelation.
// The band lives in the dense path's covariance-block buffer, which this path leaves unused,
// and the dense n x n matrices are not allocated unless a batch needs them. Same numbers as
// the dense path to rounding (~1e-14 relative).
#pragma once

#include "context.hpp"
#include "solve_variant.hpp"
#include "workspace.hpp"

#include <kspecter/solve/band.hpp>

#include <algorithm>
#include <optional>

namespace kspecter::extract::detail {

// Half-bandwidth of a patch's iCov in wavelength-major order, from its spots: the largest
// v1 - v2 over pairs of spots whose boxes meet (rows and columns), v = bin * nslots + slot.
// Assembly writes an entry only where the boxes meet (inside the window and the CCD), so
// this bounds the band of every nonzero. A team per patch, a thread per spot (k1, w1): for
// each fiber k2 the bins whose rows can meet are found as in the assembly (a binary search
// when the trace's rows grow with the bin, else a scan), the first one whose columns meet
// too gives the spot's widest pair; the team takes the largest.
template <class ExecSpace>
struct BandFromSpots {
  using T = Types<ExecSpace>;
  using Member = typename Kokkos::TeamPolicy<ExecSpace>::member_type;
  typename T::Corners xc, yc;
  typename T::CTable ptab;
  Kokkos::View<int*, typename ExecSpace::memory_space> half_width;
  int nslots, m, sny, snx;

  /// The widest pair of spot (k1, w1) wider than hw, else hw.
  KOKKOS_INLINE_FUNCTION int widest(int p, int k1, int w1, int hw) const {
    int const fib0 = ptab(p).fib0, nfib = ptab(p).nfib, w0 = ptab(p).wave0;
    bool const mono = ptab(p).mono != 0;
    int const xa = xc(fib0 + k1, w0 + w1), ya = yc(fib0 + k1, w0 + w1);
    for (int k2 = 0; k2 < nfib; ++k2) {
      int const f2 = fib0 + k2;
      int lo = 0;
      if (mono) {  // first bin with yc > ya - sny
        int hi = m;
        while (lo < hi) {
          int const mid = (lo + hi) / 2;
          if (yc(f2, w0 + mid) > ya - sny)
            hi = mid;
          else
            lo = mid + 1;
        }
      }
      for (int w2 = lo; w2 < m && w2 * nslots + k2 < w1 * nslots + k1 - hw; ++w2) {
        int const dy = yc(f2, w0 + w2) - ya, dx = xc(f2, w0 + w2) - xa;
        if (mono && dy >= sny) break;
        if (dy < sny && -dy < sny && dx < snx && -dx < snx) {
          hw = (w1 - w2) * nslots + (k1 - k2);
          break;
        }
      }
    }
    return hw;
  }

  KOKKOS_INLINE_FUNCTION void operator()(Member const& team) const {
    int const p = team.league_rank();
    int hw = 0;
    Kokkos::parallel_reduce(
        Kokkos::TeamThreadRange(team, ptab(p).nfib * m),
        [&](int e, int& most) {  // most starts as Max's identity, the lowest int
          most = widest(p, e / m, e % m, most > 0 ? most : 0);
        },
        Kokkos::Max<int>(hw));
    Kokkos::single(Kokkos::PerTeam(team), [&]() { half_width(p) = hw; });
  }
};

/// The band variant with the half-bandwidth of the batch's iCov in wavelength-major order
/// (BandFromSpots), or none when the band does not fit the storage it borrows (then the batch
/// takes the dense path).
template <class ExecSpace>
std::optional<BandSolve> band_variant(FrameContext<ExecSpace> const& fc,
                                      Workspace<ExecSpace> const& ws, int P) {
  StageTimer<ExecSpace> st(fc.space, "kspecter::extract::windows", fc.times);
  FrameShape const& s = fc.shape;
  BandFromSpots<ExecSpace> const f{ws.spots.xc, ws.spots.yc, ws.ptab_all, ws.half_width_all,
                                   s.nslots,    s.m,         s.sny,       s.snx};
  Kokkos::parallel_for(
      "kspecter::extract::band_from_spots",
      Kokkos::TeamPolicy<ExecSpace>(fc.space, P, Types<ExecSpace>::Tune::band_team), f);
  auto const hw = Kokkos::create_mirror_view_and_copy(
      Kokkos::HostSpace(), Kokkos::subview(ws.half_width_all, std::make_pair(0, P)));
  int most = 0;
  for (int p = 0; p < P; ++p) most = std::max(most, hw(p));
  if (most + 1 > s.m) return std::nullopt;
  return BandSolve{most};
}

// y between the two orders; a failed patch gets y = 0 (as the dense path's RepairFailed).
template <class ExecSpace>
struct ReorderRhs {
  typename Types<ExecSpace>::Vec from, to;
  typename Types<ExecSpace>::Info info;
  int n, nslots, m;
  bool to_band;  // fiber-major -> wavelength-major, else back
  KOKKOS_INLINE_FUNCTION void operator()(int e) const {
    int const p = e / n, v = e % n;
    int const u = (v % nslots) * m + v / nslots;
    if (to_band)
      to(p, v) = info(p) == 0 ? from(p, u) : 0.0;
    else
      to(p, u) = from(p, v);
  }
};

/// f (in b.rhs, fiber-major) with the band factor in b.band and the status in b.info;
/// returns the patches whose factorisation failed (they go on with f = 0). Also what a frame
/// that keeps the last frame's factor runs (reuse.hpp).
template <class ExecSpace>
int solve_with_factor(FrameContext<ExecSpace> const& fc, BatchViews<ExecSpace> const& b,
                      BandSolve) {
  using Range = Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<int>>;
  FrameShape const& s = fc.shape;
  Kokkos::parallel_for("kspecter::extract::rhs_to_band", Range(fc.space, 0, b.P * s.n),
                       ReorderRhs<ExecSpace>{b.rhs, b.rhs_band, b.info, s.n, s.nslots, s.m, true});
  solve::band_cholesky_solve(fc.space, b.band, b.rhs_band);
  Kokkos::parallel_for("kspecter::extract::rhs_from_band", Range(fc.space, 0, b.P * s.n),
                       ReorderRhs<ExecSpace>{b.rhs_band, b.rhs, b.info, s.n, s.nslots, s.m, false});
  auto const info = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), b.info);
  int nfailed = 0;
  for (int i = 0; i < b.P; ++i) nfailed += info(i) != 0 ? 1 : 0;
  return nfailed;
}

/// Factorises the batch's patches, assembled as band matrices (b.band), and solves for f (in
/// b.rhs, fiber-major); returns the patches whose factorisation failed (they go on with L = I
/// and f = 0).
template <class ExecSpace>
int factorise(FrameContext<ExecSpace> const& fc, BatchViews<ExecSpace> const& b, BandSolve v) {
  StageTimer<ExecSpace> st(fc.space, "kspecter::extract::factorisation", fc.times);
  solve::band_cholesky(fc.space, b.band, b.info);
  return solve_with_factor(fc, b, v);
}

// Which slot each of a patch's core blocks is (-1: no such core fiber, an identity block).
template <class ExecSpace>
struct CoreSlots {
  typename Types<ExecSpace>::CTable ptab;
  Kokkos::View<int**, Kokkos::LayoutRight, typename ExecSpace::memory_space> slot;
  int ncs;
  KOKKOS_INLINE_FUNCTION void operator()(int e) const {
    int const p = e / ncs, c = e % ncs;
    slot(p, c) = c < ptab(p).ncore ? ptab(p).core + c : -1;
  }
};

/// The covariance blocks of the core fibers, C_ff, into b.qb ([P * ncs][m][m]).
template <class ExecSpace>
void covariance_blocks(FrameContext<ExecSpace> const& fc, BatchViews<ExecSpace> const& b,
                       BandSolve) {
  using Range = Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<int>>;
  StageTimer<ExecSpace> st(fc.space, "kspecter::extract::covariance", fc.times);
  FrameShape const& s = fc.shape;
  Kokkos::parallel_for("kspecter::extract::core_slots", Range(fc.space, 0, b.P * s.ncs),
                       CoreSlots<ExecSpace>{b.ptab, b.core_slots, s.ncs});
  solve::band_strided_inverse_blocks(fc.space, b.band, b.core_slots, s.nslots, b.qb);
}

}  // namespace kspecter::extract::detail
