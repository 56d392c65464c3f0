// Stage "quality" (docs/algorithm.md §5): the model of each patch's window and its chi^2 per
// pixel, chi2pix and pixmask_fraction of the core bins, and, when asked for, the model image
// of the bundles the batch completes.
#pragma once

#include "context.hpp"
#include "workspace.hpp"

#include <algorithm>

namespace kspecter::extract::detail {

/// Adds the spots x solution of the batch's requested fibers to the model image. A bundle cut
/// into slices waits for its last slice, when every patch of its fibers has its solution.
template <class ExecSpace>
void add_to_frame_model(FrameContext<ExecSpace> const& fc, Batch const& batch,
                        BatchViews<ExecSpace> const& b, Workspace<ExecSpace>& ws) {
  using RangeI = Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<int>>;
  using RangeL = Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<long>>;
  using mem = typename ExecSpace::memory_space;
  FrameShape const& s = fc.shape;
  PatchPlan const& plan = fc.plan;
  // Requested spectra of this batch: fibers [fa, fb) of the PSF.
  int const fa = std::max(batch.fiber_begin, plan.specmin);
  int const fb = std::min(batch.fiber_end, plan.specmin + s.nspec);
  int const nf = fb - fa;
  if (nf <= 0) return;
  auto noinit = [&](char const* name) {
    return Kokkos::view_alloc(fc.space, Kokkos::WithoutInitializing, std::string(name));
  };
  Kokkos::View<int***, Kokkos::LayoutRight, mem> frr(noinit("kspecter::extract::frame_row_ranges"),
                                                     nf, s.npy, 2);
  Kokkos::View<int**, Kokkos::LayoutRight, mem> fxr(noinit("kspecter::extract::frame_x_ranges"), nf,
                                                    2);
  ws.meter.hold(bytes_of(frr) + bytes_of(fxr));
  Kokkos::parallel_for("kspecter::extract::frame_row_ranges", RangeI(fc.space, 0, nf),
                       FrameRowRanges<ExecSpace>{b.yc, frr, fxr, b.xc, fa - batch.fiber_begin,
                                                 plan.wavepad, s.nwave, s.sny, s.snx, s.npy});
  auto fxr_h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), fxr);
  int bx0 = s.npx, bx1 = 0;
  for (int k = 0; k < nf; ++k) {
    bx0 = std::min(bx0, std::max(fxr_h(k, 0), 0));
    bx1 = std::max(bx1, std::min(fxr_h(k, 1), s.npx));
  }
  if (bx1 > bx0) {
    long const nbox = long(s.npy) * (bx1 - bx0);
    Kokkos::parallel_for(
        "kspecter::extract::frame_model", RangeL(fc.space, 0, nbox),
        FrameModel<ExecSpace>{b.spots, b.xc, b.yc, frr, fxr, ws.deconv, ws.ivar, ws.model,
                              fa - batch.fiber_begin, nf, fa - plan.specmin, plan.wavepad, s.sny,
                              s.snx, bx0, bx1 - bx0});
  }
  fc.space.fence();
  ws.meter.release(bytes_of(frr) + bytes_of(fxr));
}

/// Returns the pixel products summed (ExtractStats::quality_macs).
template <class ExecSpace>
long long assess_quality(FrameContext<ExecSpace> const& fc, Batch const& batch,
                         BatchViews<ExecSpace> const& b, Workspace<ExecSpace>& ws) {
  using T = Types<ExecSpace>;
  using Policy = typename T::Policy;
  using RangeI = Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<int>>;
  StageTimer<ExecSpace> st(fc.space, "kspecter::extract::quality", fc.times);
  FrameShape const& s = fc.shape;
  Kokkos::parallel_for("kspecter::extract::row_ranges", RangeI(fc.space, 0, b.P * s.nslots),
                       RowRanges<ExecSpace>{b.xc, b.yc, b.ptab, ws.rr_all, ws.xr_all, s.nslots, s.m,
                                            s.sny, s.snx, b.nrow_max});
  long long qm = 0, qm2 = 0;
  Kokkos::parallel_reduce(
      "kspecter::extract::model_chi2", Policy(fc.space, b.P, T::team, T::vector),
      ModelChi2<ExecSpace>{b.spots, b.xc, b.yc, b.ptab, ws.rr_all, ws.xr_all, ws.weights, fc.image,
                           b.rhs, ws.pix_all, s.nslots, s.m, s.sny, s.snx, s.npy, s.npx, b.nrow_max,
                           fc.psferr},
      qm);
  Kokkos::parallel_reduce("kspecter::extract::chi2pix",
                          Policy(fc.space, b.P * s.ncs, T::team, T::vector),
                          Chi2PixMask<ExecSpace>{b.spots, b.xc, b.yc, b.ptab, ws.pix_all, b.info,
                                                 ws.chi2, ws.pixmask, s.ncs, s.m, fc.plan.wavepad,
                                                 s.sny, s.snx, s.npy, s.npx, s.nspec, b.nrow_max},
                          qm2);
  if (fc.opt.model && batch.completes_bundles) add_to_frame_model(fc, batch, b, ws);
  return qm + qm2;
}

}  // namespace kspecter::extract::detail
