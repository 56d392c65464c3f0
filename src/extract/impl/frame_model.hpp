// The model image (ExtractOptions::model, docs/algorithm.md §5), part of the quality stage:
// for each fiber of the batch and CCD row, the range of output bins whose spot covers the row
// (row_ranges.hpp); then every pixel of the batch's box gathers spot x f over the kept bins
// with ivar > 0 and adds it to the model (batches run one after the other, and one thread
// owns each pixel, so the sum is deterministic, and one chain of additions whatever the
// batching).
#pragma once

#include "context.hpp"
#include "row_ranges.hpp"
#include "workspace.hpp"

#include <algorithm>
#include <string>

namespace kspecter::extract::detail {

template <class ExecSpace>
struct FrameModel {
  using T = Types<ExecSpace>;
  SpotGather<ExecSpace> gather;  // over the batch's requested fibers, every CCD row
  Kokkos::View<const double**, Kokkos::LayoutRight, typename T::mem> deconv, ivar;
  Kokkos::View<double**, Kokkos::LayoutRight, typename T::mem> model;
  int fiber0, spec0, nf, wavepad, xbox0, nxbox;

  // Coefficients of fiber k: its deconvolved flux, on the bins with ivar > 0.
  struct KeptFlux {
    Kokkos::View<const double**, Kokkos::LayoutRight, typename T::mem> deconv, ivar;
    int spec0;
    KOKKOS_INLINE_FUNCTION bool operator()(int k, int b, double& c) const {
      if (!(ivar(spec0 + k, b) > 0)) return false;
      c = deconv(spec0 + k, b);
      return true;
    }
  };

  KOKKOS_INLINE_FUNCTION void operator()(long idx) const {
    int const y = static_cast<int>(idx / nxbox), x = xbox0 + static_cast<int>(idx % nxbox);
    long long count = 0;
    // The batch's terms continue the pixel's sum (not a sum of their own added to it), so
    // that the model's bits do not depend on where batches split the fibers.
    model(y, x) =
        gather(x, y, y, 0, nf, fiber0, wavepad, KeptFlux{deconv, ivar, spec0}, count, model(y, x));
  }
};

/// Adds the spots x solution of the batch's requested fibers to the model image. A bundle cut
/// into slices waits for its last slice, when every patch of its fibers has its solution.
template <class ExecSpace>
void add_to_frame_model(FrameContext<ExecSpace> const& fc, Batch const& batch,
                        BatchViews<ExecSpace> const& b, Workspace<ExecSpace>& ws) {
  using T = Types<ExecSpace>;
  using RangeI = Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<int>>;
  using RangeL = Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<long>>;
  FrameShape const& s = fc.shape;
  PatchPlan const& plan = fc.plan;
  // Requested spectra of this batch: fibers [fa, fb) of the PSF.
  int const fa = std::max(batch.fiber_begin, plan.specmin);
  int const fb = std::min(batch.fiber_end, plan.specmin + s.nspec);
  int const nf = fb - fa;
  if (nf <= 0) return;
  auto frr =
      allocate<typename T::Ranges>(fc.space, "kspecter::extract::frame_row_ranges", nf, s.npy, 2);
  auto fxr = allocate<typename T::XRanges>(fc.space, "kspecter::extract::frame_x_ranges", nf, 2);
  ws.meter.hold(bytes_of(frr) + bytes_of(fxr));
  int const fiber0 = fa - batch.fiber_begin;
  Kokkos::parallel_for(
      "kspecter::extract::frame_row_ranges", RangeI(fc.space, 0, nf),
      RowRanges<ExecSpace, FrameFibers>{
          b.xc, b.yc, FrameFibers{fiber0, plan.wavepad, s.nwave, s.npy}, frr, fxr, s.sny, s.snx});
  auto fxr_h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), fxr);
  int bx0 = s.npx, bx1 = 0;
  for (int k = 0; k < nf; ++k) {
    bx0 = std::min(bx0, std::max(fxr_h(k, 0), 0));
    bx1 = std::max(bx1, std::min(fxr_h(k, 1), s.npx));
  }
  if (bx1 > bx0) {
    long const nbox = long(s.npy) * (bx1 - bx0);
    Kokkos::parallel_for("kspecter::extract::frame_model", RangeL(fc.space, 0, nbox),
                         FrameModel<ExecSpace>{{b.spots, b.xc, b.yc, frr, fxr, s.sny, s.snx},
                                               ws.deconv,
                                               ws.ivar,
                                               ws.model,
                                               fiber0,
                                               fa - plan.specmin,
                                               nf,
                                               plan.wavepad,
                                               bx0,
                                               bx1 - bx0});
  }
  fc.space.fence();
  ws.meter.release(bytes_of(frr) + bytes_of(fxr));
}

}  // namespace kspecter::extract::detail
