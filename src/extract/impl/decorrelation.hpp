// Stage "decorrelation" (docs/algorithm.md §4, §6): Q = C_kk^-1/2 of every core fiber
// block, then flux, ivar, deconvolved flux and resolution diagonals of the core bins, written
// straight into the frame arrays.
#pragma once

#include "context.hpp"
#include "workspace.hpp"

#include <kspecter/solve/batched.hpp>

namespace kspecter::extract::detail {

template <class ExecSpace>
void decorrelate(FrameContext<ExecSpace> const& fc, BatchViews<ExecSpace> const& b,
                 Workspace<ExecSpace> const& ws) {
  using T = Types<ExecSpace>;
  using Policy = typename T::Policy;
  StageTimer<ExecSpace> st(fc.space, "kspecter::extract::decorrelation", fc.times);
  FrameShape const& s = fc.shape;
  Kokkos::parallel_for("kspecter::extract::gather_core_blocks",
                       Policy(fc.space, b.P * s.ncs, T::team, T::vector),
                       GatherCoreBlocks<ExecSpace>{b.ptab, b.cblk, b.qb, s.ncs, s.m});
  solve::inverse_sqrt(fc.space, b.qb, fc.opt.eig_rel_clip);
  int const sbytes = Decorrelate<ExecSpace>::scratch_bytes(s.m);
  Kokkos::parallel_for(
      "kspecter::extract::decorrelate",
      Policy(fc.space, b.P * s.ncs, T::team, T::vector)
          .set_scratch_size(0, Kokkos::PerTeam(sbytes)),
      Decorrelate<ExecSpace>{b.ptab, b.qb, b.rhs, b.fw, b.minw, b.info, ws.flux, ws.ivar, ws.deconv,
                             ws.rdiag, ws.failed, s.ncs, s.m, fc.plan.wavepad, s.ndiag, s.nspec});
}

}  // namespace kspecter::extract::detail
