// Stage "plan" (docs/algorithm.md §3): the batch's patch table on the device, the pixel
// window of each patch, the pixel weights of the columns those windows reach, and pixel
// buffers large enough for the windows.
#pragma once

#include "context.hpp"
#include "workspace.hpp"

#include <algorithm>

namespace kspecter::extract::detail {

template <class ExecSpace>
void plan_windows(FrameContext<ExecSpace> const& fc, Batch const& batch, Workspace<ExecSpace>& ws) {
  using RangeI = Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<int>>;
  using RangeL = Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<long>>;
  StageTimer<ExecSpace> st(fc.space, "kspecter::extract::plan", fc.times);
  FrameShape const& s = fc.shape;
  PatchPlan const& plan = fc.plan;
  int const P = batch.patch_end - batch.patch_begin;
  auto& ptab = ws.ptab_host;
  for (int i = 0; i < P; ++i) {
    Patch const& pa = plan.patches[static_cast<std::size_t>(batch.patch_begin + i)];
    ptab(i, PF_FIB0) = pa.fiber_pad0 - batch.fiber_begin;
    ptab(i, PF_NFIB) = pa.nfiber_pad;
    ptab(i, PF_CORE) = pa.core_slot;
    ptab(i, PF_NCORE) = pa.ncore;
    ptab(i, PF_WAVE0) = pa.wave0;
    ptab(i, PF_NKEEP) = pa.nkeep;
    ptab(i, PF_OUT0) = pa.fiber_pad0 + pa.core_slot - plan.specmin;
    for (int f = PF_X0; f < NPT; ++f) ptab(i, f) = 0;
  }
  Kokkos::deep_copy(fc.space, ws.ptab_all, ptab);
  Kokkos::parallel_for(
      "kspecter::extract::plan_windows", RangeI(fc.space, 0, P),
      PlanWindows<ExecSpace>{ws.spots.xc, ws.spots.yc, ws.ptab_all, s.m, plan.wavepad,
                             plan.nwavestep, s.sny, s.snx, fc.opt.pixpad_frac});
  Kokkos::deep_copy(fc.space, ptab, ws.ptab_all);
  fc.space.fence();
  int nrow_max = 0, ncol_max = 0;
  for (int i = 0; i < P; ++i) {
    nrow_max = std::max(nrow_max, ptab(i, PF_Y1) - ptab(i, PF_Y0));
    ncol_max = std::max(ncol_max, ptab(i, PF_PIXSTRIDE));
  }
  // Weights of the columns this batch's windows span (each column sanitized once).
  int bx0 = s.npx, bx1 = 0;
  for (int i = 0; i < P; ++i) {
    bx0 = std::min(bx0, std::max(ptab(i, PF_X0), 0));
    bx1 = std::max(bx1, std::min(ptab(i, PF_X1), s.npx));
  }
  for (int c = bx0; c < bx1;) {  // runs of columns not sanitized yet
    if (ws.ready[std::size_t(c)]) {
      ++c;
      continue;
    }
    int e = c;
    while (e < bx1 && !ws.ready[std::size_t(e)]) ws.ready[std::size_t(e++)] = 1;
    Kokkos::parallel_for("kspecter::extract::sanitize_weights",
                         RangeL(fc.space, 0, long(s.npy) * (e - c)),
                         SanitizeWeights<ExecSpace>{fc.image, fc.ivar, ws.weights, c, e - c});
    c = e;
  }
  ws.reserve_pixels(std::size_t(nrow_max) * std::size_t(ncol_max), nrow_max);
}

}  // namespace kspecter::extract::detail
