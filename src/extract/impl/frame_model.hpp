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
  // Per column of the box, the first and last fiber (0..nf) whose spots reach it (first >
  // last: none): a pixel visits those fibers, not all nf of the batch.
  typename T::XRanges columns;
  int fiber0, spec0, wavepad, xbox0, nxbox;

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
    int const y = static_cast<int>(idx / nxbox), c = static_cast<int>(idx % nxbox);
    int const k0 = columns(c, 0), k1 = columns(c, 1);
    if (k1 < k0) return;
    long long count = 0;
    // The batch's terms continue the pixel's sum (not a sum of their own added to it), so
    // that the model's bits do not depend on where batches split the fibers. The fibers
    // left out reach no spot to this column: the same terms in the same order.
    model(y, xbox0 + c) = gather(xbox0 + c, y, y, k0, k1 - k0 + 1, fiber0 + k0, wavepad,
                                 KeptFlux{deconv, ivar, spec0 + k0}, count, model(y, xbox0 + c));
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
  typename T::XRanges columns;
  if (bx1 > bx0) {
    columns = allocate<typename T::XRanges>(fc.space, "kspecter::extract::frame_model_columns",
                                            bx1 - bx0, 2);
    auto columns_h = Kokkos::create_mirror_view(columns);
    for (int c = 0; c < bx1 - bx0; ++c) columns_h(c, 0) = nf, columns_h(c, 1) = -1;
    for (int k = 0; k < nf; ++k)
      for (int x = std::max(fxr_h(k, 0), bx0); x < std::min(fxr_h(k, 1), bx1); ++x) {
        columns_h(x - bx0, 0) = std::min(columns_h(x - bx0, 0), k);
        columns_h(x - bx0, 1) = std::max(columns_h(x - bx0, 1), k);
      }
    Kokkos::deep_copy(fc.space, columns, columns_h);
    ws.meter.hold(bytes_of(columns));
    long const nbox = long(s.npy) * (bx1 - bx0);
    Kokkos::parallel_for("kspecter::extract::frame_model", RangeL(fc.space, 0, nbox),
                         FrameModel<ExecSpace>{{b.spots, b.xc, b.yc, frr, fxr, s.sny, s.snx},
                                               ws.deconv,
                                               ws.ivar,
                                               ws.model,
                                               columns,
                                               fiber0,
                                               fa - plan.specmin,
                                               plan.wavepad,
                                               bx0,
                                               bx1 - bx0});
  }
  fc.space.fence();  // before columns_h goes: its copy may still be in flight
  ws.meter.release(bytes_of(frr) + bytes_of(fxr) + bytes_of(columns));
}

}  // namespace kspecter::extract::detail
