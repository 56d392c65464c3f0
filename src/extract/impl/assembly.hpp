// Stage "assembly" (docs/algorithm.md §4): iCov = A^T W A, y = A^T W p and
// fluxweight = A^T W 1 of every patch of the batch, then the weak prior on iCov's diagonal.
#pragma once

#include "context.hpp"
#include "workspace.hpp"

namespace kspecter::extract::detail {

/// Returns the pixel products summed (ExtractStats::assembly_macs).
template <class ExecSpace>
long long assemble(FrameContext<ExecSpace> const& fc, BatchViews<ExecSpace> const& b,
                   Workspace<ExecSpace> const& ws) {
  using T = Types<ExecSpace>;
  using Policy = typename T::Policy;
  StageTimer<ExecSpace> st(fc.space, "kspecter::extract::assembly", fc.times);
  FrameShape const& s = fc.shape;
  long long macs = 0;
  Kokkos::parallel_reduce(
      "kspecter::extract::assemble_icov", Policy(fc.space, b.P * s.nslots, T::team, T::vector),
      AssembleICov<ExecSpace>{b.spots, b.xc, b.yc, b.ptab, ws.weights, fc.image, b.icov, b.rhs,
                              b.fw, s.nslots, s.m, s.sny, s.snx, s.npy, s.npx},
      macs);
  Kokkos::parallel_for("kspecter::extract::prior", Policy(fc.space, b.P, T::team * T::vector, 1),
                       ApplyPrior<ExecSpace>{b.ptab, b.icov, b.fw, b.minw, s.m, fc.opt.regularize});
  fc.space.fence();
  return macs;
}

}  // namespace kspecter::extract::detail
