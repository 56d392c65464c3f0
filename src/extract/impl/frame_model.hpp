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
#include <optional>
#include <string>
#include <vector>

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

/// A host backend's frame model: the terms scattered spot by spot, each thread owning a band
/// of CCD rows. A pixel receives its terms in the gather's order (fiber, then bin, from the
/// value the batches before left), so the sums are FrameModel's; a host thread spent more on
/// the gather's search for the spots that reach a pixel than on its products.
template <class ExecSpace>
struct FrameModelBands {
  using T = Types<ExecSpace>;
  typename T::Spots spots;
  typename T::Corners xc, yc;
  Kokkos::View<const double**, Kokkos::LayoutRight, typename T::mem> deconv, ivar;
  Kokkos::View<double**, Kokkos::LayoutRight, typename T::mem> model;
  int const* reach;  // [nband][nf][2]: the first and last bin of fiber k whose spot reaches
                     //   the band (first > last: none)
  int fiber0, spec0, wavepad, nf, sny, snx, npy, npx, band_rows;

  void operator()(int band) const {
    int const ya = band * band_rows, yb = imin(ya + band_rows, npy);
    for (int k = 0; k < nf; ++k) {
      int const f = fiber0 + k, b1 = reach[(std::size_t(band) * nf + k) * 2 + 1];
      for (int b = reach[(std::size_t(band) * nf + k) * 2]; b <= b1; ++b) {
        if (!(ivar(spec0 + k, b) > 0)) continue;
        int const xs = xc(f, wavepad + b), ys = yc(f, wavepad + b);
        int const r0 = imax(ys, ya), r1 = imin(ys + sny, yb);
        int const c0 = imax(xs, 0), c1 = imin(xs + snx, npx);
        if (r1 <= r0 || c1 <= c0) continue;
        double const c = deconv(spec0 + k, b);
        for (int r = r0; r < r1; ++r) {
          double const* sr = &spots(f, wavepad + b, r - ys, 0);
          double* mr = &model(r, 0);
          for (int x = c0; x < c1; ++x) mr[x] += sr[x - xs] * c;
        }
      }
    }
  }
};

/// FrameModelBands over the requested fibers [fa, fa + nf) of the batch.
template <class ExecSpace>
void frame_model_by_bands(FrameContext<ExecSpace> const& fc, Batch const& batch,
                          BatchViews<ExecSpace> const& b, Workspace<ExecSpace>& ws, int fa,
                          int nf) {
  FrameShape const& s = fc.shape;
  int const band_rows = 32, nband = (s.npy + band_rows - 1) / band_rows;
  int const fiber0 = fa - batch.fiber_begin, wavepad = fc.plan.wavepad;
  std::vector<int> reach(std::size_t(nband) * std::size_t(nf) * 2);
  for (std::size_t i = 0; i < reach.size(); i += 2) reach[i] = s.nwave, reach[i + 1] = -1;
  for (int k = 0; k < nf; ++k)
    for (int w = 0; w < s.nwave; ++w) {
      int const ys = b.yc(fiber0 + k, wavepad + w), xs = b.xc(fiber0 + k, wavepad + w);
      int const r0 = std::max(ys, 0), r1 = std::min(ys + s.sny, s.npy);  // its rows
      int const c0 = std::max(xs, 0), c1 = std::min(xs + s.snx, s.npx);  // its columns
      if (r1 > r0 && c1 > c0) {
        ws.model_x0 = std::min(ws.model_x0, c0);
        ws.model_x1 = std::max(ws.model_x1, c1);
      }
      for (int band = r0 / band_rows; r1 > r0 && band <= (r1 - 1) / band_rows; ++band) {
        int* const at = &reach[(std::size_t(band) * nf + k) * 2];
        at[0] = std::min(at[0], w);
        at[1] = std::max(at[1], w);
      }
    }
  Kokkos::parallel_for(
      "kspecter::extract::frame_model",
      Kokkos::RangePolicy<ExecSpace, Kokkos::Schedule<Kokkos::Dynamic>, Kokkos::IndexType<int>>(
          fc.space, 0, nband),
      FrameModelBands<ExecSpace>{b.spots, b.xc, b.yc, ws.deconv, ws.ivar, ws.model, reach.data(),
                                 fiber0, fa - fc.plan.specmin, wavepad, nf, s.sny, s.snx, s.npy,
                                 s.npx, band_rows});
  fc.space.fence();  // before `reach` goes
}

/// The model ranges of the batch's requested fibers [fa, fa + nf): per fiber and CCD row the
/// bins whose spot covers the row, the columns each fiber's spots span, and per column of
/// their box the first and last fiber that reaches it. Metered in `ws`.
template <class ExecSpace>
ModelRanges<typename ExecSpace::memory_space> model_ranges(FrameContext<ExecSpace> const& fc,
                                                           Batch const& batch,
                                                           BatchViews<ExecSpace> const& b,
                                                           Workspace<ExecSpace>& ws, int fa,
                                                           int nf) {
  using T = Types<ExecSpace>;
  using RangeI = Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<int>>;
  FrameShape const& s = fc.shape;
  ModelRanges<typename ExecSpace::memory_space> r;
  r.rows =
      allocate<typename T::Ranges>(fc.space, "kspecter::extract::frame_row_ranges", nf, s.npy, 2);
  r.spans = allocate<typename T::XRanges>(fc.space, "kspecter::extract::frame_x_ranges", nf, 2);
  Kokkos::parallel_for(
      "kspecter::extract::frame_row_ranges", RangeI(fc.space, 0, nf),
      RowRanges<ExecSpace, FrameFibers>{
          b.xc, b.yc, FrameFibers{fa - batch.fiber_begin, fc.plan.wavepad, s.nwave, s.npy}, r.rows,
          r.spans, s.sny, s.snx});
  auto const spans = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), r.spans);
  r.bx0 = s.npx, r.bx1 = 0;
  for (int k = 0; k < nf; ++k) {
    r.bx0 = std::min(r.bx0, std::max(spans(k, 0), 0));
    r.bx1 = std::max(r.bx1, std::min(spans(k, 1), s.npx));
  }
  if (r.bx1 > r.bx0) {
    int const nc = r.bx1 - r.bx0;
    r.columns =
        allocate<typename T::XRanges>(fc.space, "kspecter::extract::frame_model_columns", nc, 2);
    // A vector's memory: a host mirror View would be filled by the host's threads first, at
    // a cost of milliseconds (perf/gpu_runs.md, session 30).
    std::vector<int> host(std::size_t(nc) * 2);
    for (int c = 0; c < nc; ++c) host[2 * c] = nf, host[2 * c + 1] = -1;
    for (int k = 0; k < nf; ++k)
      for (int x = std::max(spans(k, 0), r.bx0); x < std::min(spans(k, 1), r.bx1); ++x) {
        int* const col = &host[2 * std::size_t(x - r.bx0)];
        col[0] = std::min(col[0], k);
        col[1] = std::max(col[1], k);
      }
    Kokkos::deep_copy(fc.space, r.columns,
                      Kokkos::View<int const**, Kokkos::LayoutRight, Kokkos::HostSpace,
                                   Kokkos::MemoryTraits<Kokkos::Unmanaged>>(host.data(), nc, 2));
    fc.space.fence();  // before `host` goes
  }
  ws.meter.hold(r.bytes());
  return r;
}

/// Adds the spots x solution of the batch's requested fibers to the model image. A bundle cut
/// into slices waits for its last slice, when every patch of its fibers has its solution. A
/// frame that allows reuse keeps the ranges in `ws`, and a repeat of its solve (`repeat`)
/// takes them from there.
template <class ExecSpace>
void add_to_frame_model(FrameContext<ExecSpace> const& fc, Batch const& batch,
                        BatchViews<ExecSpace> const& b, Workspace<ExecSpace>& ws, bool repeat) {
  using RangeL = Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<long>>;
  FrameShape const& s = fc.shape;
  PatchPlan const& plan = fc.plan;
  // Requested spectra of this batch: fibers [fa, fb) of the PSF.
  int const fa = std::max(batch.fiber_begin, plan.specmin);
  int const fb = std::min(batch.fiber_end, plan.specmin + s.nspec);
  int const nf = fb - fa;
  if (nf <= 0) return;
  if constexpr (Types<ExecSpace>::Tune::host_loops) {
    frame_model_by_bands(fc, batch, b, ws, fa, nf);
    return;
  }
  bool const keep = reuse_allowed(fc);
  std::optional<ModelRanges<typename ExecSpace::memory_space>> own;
  if (!(repeat && keep && ws.model_ranges)) {
    if (keep) {
      if (ws.model_ranges) ws.meter.release(ws.model_ranges->bytes());
      ws.model_ranges = model_ranges(fc, batch, b, ws, fa, nf);
    } else {
      own = model_ranges(fc, batch, b, ws, fa, nf);
    }
  }
  auto const& r = own ? *own : *ws.model_ranges;
  if (r.bx1 > r.bx0) {
    long const nbox = long(s.npy) * (r.bx1 - r.bx0);
    Kokkos::parallel_for("kspecter::extract::frame_model", RangeL(fc.space, 0, nbox),
                         FrameModel<ExecSpace>{{b.spots, b.xc, b.yc, r.rows, r.spans, s.sny, s.snx},
                                               ws.deconv,
                                               ws.ivar,
                                               ws.model,
                                               r.columns,
                                               fa - batch.fiber_begin,
                                               fa - plan.specmin,
                                               plan.wavepad,
                                               r.bx0,
                                               r.bx1 - r.bx0});
  }
  if (own) {
    fc.space.fence();  // before its Views go
    ws.meter.release(own->bytes());
  }
}

}  // namespace kspecter::extract::detail
