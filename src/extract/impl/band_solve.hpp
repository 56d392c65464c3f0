// Stages "factorisation" and "covariance" on the band path (docs/algorithm.md §4): with its
// unknowns in wavelength-major order (v = bin * nslots + slot) a patch's iCov is a band
// matrix of half-width ~60 (solve/band.hpp), so the Cholesky costs ~n b² and only the core
// fibers' covariance blocks are made, straight into the Q buffer of the decorrelation. The
// band borrows the dense path's covariance-block buffer, which this path leaves unused.
// Same numbers as the dense path to rounding (~1e-14 relative).
#pragma once

#include "context.hpp"
#include "workspace.hpp"

#include <kspecter/solve/band.hpp>

#include <algorithm>

namespace kspecter::extract::detail {

/// The half-bandwidth of the batch's matrices in wavelength-major order, or -1 when the band
/// does not fit the storage it borrows (then the batch takes the dense path).
template <class ExecSpace>
int band_half_width(FrameContext<ExecSpace> const& fc, BatchViews<ExecSpace> const& b) {
  StageTimer<ExecSpace> st(fc.space, "kspecter::extract::factorisation", fc.times);
  solve::band_half_width_wavelength_major(fc.space, b.icov, fc.shape.nslots, b.half_width);
  auto const hw = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), b.half_width);
  int most = 0;
  for (int p = 0; p < b.P; ++p) most = std::max(most, hw(p));
  return most + 1 <= fc.shape.m ? most : -1;
}

/// The band view of the batch: [P][n][hw + 1] in the covariance-block buffer.
template <class ExecSpace>
solve::BandBatch<typename ExecSpace::memory_space> band_of(FrameContext<ExecSpace> const& fc,
                                                           BatchViews<ExecSpace> const& b, int hw) {
  return solve::BandBatch<typename ExecSpace::memory_space>(b.cblk.data(), b.P, fc.shape.n, hw + 1);
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

/// Factorises the batch's patches as band matrices and solves for f (in b.rhs, fiber-major);
/// returns the patches whose factorisation failed (they go on with L = I and f = 0).
template <class ExecSpace>
int factorise_band(FrameContext<ExecSpace> const& fc, BatchViews<ExecSpace> const& b, int hw) {
  using Range = Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<int>>;
  StageTimer<ExecSpace> st(fc.space, "kspecter::extract::factorisation", fc.times);
  FrameShape const& s = fc.shape;
  auto const band = band_of(fc, b, hw);
  solve::pack_band_wavelength_major(fc.space, b.icov, s.nslots, band);
  solve::band_cholesky(fc.space, band, b.info);
  Kokkos::parallel_for("kspecter::extract::rhs_to_band", Range(fc.space, 0, b.P * s.n),
                       ReorderRhs<ExecSpace>{b.rhs, b.rhs_band, b.info, s.n, s.nslots, s.m, true});
  solve::band_cholesky_solve(fc.space, band, b.rhs_band);
  Kokkos::parallel_for("kspecter::extract::rhs_from_band", Range(fc.space, 0, b.P * s.n),
                       ReorderRhs<ExecSpace>{b.rhs_band, b.rhs, b.info, s.n, s.nslots, s.m, false});
  auto const info = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), b.info);
  int nfailed = 0;
  for (int i = 0; i < b.P; ++i) nfailed += info(i) != 0 ? 1 : 0;
  return nfailed;
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
void covariance_blocks_band(FrameContext<ExecSpace> const& fc, BatchViews<ExecSpace> const& b,
                            int hw) {
  using Range = Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<int>>;
  StageTimer<ExecSpace> st(fc.space, "kspecter::extract::covariance", fc.times);
  FrameShape const& s = fc.shape;
  Kokkos::parallel_for("kspecter::extract::core_slots", Range(fc.space, 0, b.P * s.ncs),
                       CoreSlots<ExecSpace>{b.ptab, b.core_slots, s.ncs});
  solve::band_strided_inverse_blocks(fc.space, band_of(fc, b, hw), b.core_slots, s.nslots, b.qb);
}

}  // namespace kspecter::extract::detail
