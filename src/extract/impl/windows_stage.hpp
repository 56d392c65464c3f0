// Stage "windows" (docs/algorithm.md §3): the batch's patch table on the device, the pixel
// window of each patch, the pixel weights of the columns those windows reach, and pixel
// buffers large enough for the windows.
#pragma once

#include "context.hpp"
#include "workspace.hpp"

#include <algorithm>

namespace kspecter::extract::detail {

// Pixel weights: W = ivar where ivar > 0 and both ivar and image are finite, else 0; and, on a
// host backend, the weighted image W p (0 where W = 0), which a host's y = A^T W p
// sums (assembly.hpp); over the CCD columns [x0, x0 + ncol) of every row (a batch's strip),
// stored from column 0.
template <class ExecSpace>
struct SanitizeWeights {
  typename Types<ExecSpace>::Image image, ivar;
  Kokkos::View<double**, Kokkos::LayoutRight, typename ExecSpace::memory_space> w, wp;
  int x0, ncol;
  KOKKOS_INLINE_FUNCTION void operator()(long idx) const {
    int const y = static_cast<int>(idx / ncol), c = static_cast<int>(idx % ncol);
    double const v = ivar(y, x0 + c), p = image(y, x0 + c);
    bool const ok = compat::isfinite(v) && compat::isfinite(p) && v > 0;
    w(y, c) = ok ? v : 0.0;
    if constexpr (Types<ExecSpace>::Tune::host_loops) wp(y, c) = ok ? v * p : 0.0;
  }
};

// Pixel window of each patch (gpu_specter _prepare_patch): columns span every spot of the
// padded patch; rows span the spots of the core bins (all padded fibers) plus pixpad_frac of
// the extra rows the wavelength padding adds on each side; then cut to the CCD, where alone
// pixels are (every stage reads only pixels on it, so the cut changes no number). A trace
// that leaves the CCD by any distance (a corner at 2^30, from a coefficient of 1e200) thus
// sizes no buffer: its spots find no pixel, and its bins get ivar = 0 and a mask bit.
template <class ExecSpace>
struct PixelWindows {
  using T = Types<ExecSpace>;
  typename T::Corners xc, yc;
  typename T::Table ptab;
  int m, wavepad, nwavestep, sny, snx, npy, npx;
  double pixpad_frac;
  KOKKOS_INLINE_FUNCTION void operator()(int p) const {
    int const fib0 = ptab(p).fib0, nfib = ptab(p).nfib, w0 = ptab(p).wave0;
    int xmin = 2147483647, xmax = -2147483647, ypmin = 2147483647, ypmax = -2147483647;
    int ymin = 2147483647, ymax = -2147483647;
    int mono = 1;
    for (int k = 0; k < nfib; ++k) {
      for (int w = 0; w < m; ++w) {
        int const x = xc(fib0 + k, w0 + w), y = yc(fib0 + k, w0 + w);
        if (w > 0 && y < yc(fib0 + k, w0 + w - 1)) mono = 0;
        xmin = imin(xmin, x);
        xmax = imax(xmax, x + snx);
        ypmin = imin(ypmin, y);
        ypmax = imax(ypmax, y + sny);
        if (w >= wavepad && w < wavepad + nwavestep) {
          ymin = imin(ymin, y);
          ymax = imax(ymax, y + sny);
        }
      }
    }
    // int() truncation as gpu_specter (the arguments are >= 0), in 64 bits: corners reach
    // +-2^30 (psf::spot_corner).
    long long const lo =
        static_cast<long long>(double(ymin - (long long)ypmin) * (1.0 - pixpad_frac));
    long long const hi = static_cast<long long>(double(ymax - (long long)ypmin) +
                                                double(ypmax - (long long)ymax) * pixpad_frac);
    auto cut = [](long long v, int n) { return static_cast<int>(v < 0 ? 0 : (v > n ? n : v)); };
    int const x0 = cut(xmin, npx), x1 = imax(x0, cut(xmax, npx));
    int const y0 = cut(ypmin + lo, npy), y1 = imax(y0, cut(ypmin + hi, npy));
    ptab(p).x0 = x0;
    ptab(p).x1 = x1;
    ptab(p).y0 = y0;
    ptab(p).y1 = y1;
    ptab(p).pixstride = x1 - x0;
    ptab(p).mono = mono;
  }
};

// The weight strip of columns [x0, x0 + ncol) from the frame's image and ivar.
template <class ExecSpace>
void sanitize_weights(FrameContext<ExecSpace> const& fc, Workspace<ExecSpace>& ws, int x0,
                      int ncol) {
  Kokkos::parallel_for(
      "kspecter::extract::sanitize_weights",
      Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<long>>(fc.space, 0,
                                                              long(fc.shape.npy) * ncol),
      SanitizeWeights<ExecSpace>{fc.image, fc.ivar, ws.weights, ws.weighted, x0, ncol});
}

/// The batch's windows and weight strip. `kept`: the windows are the last frame's (a repeat
/// of its solve, whose spots they follow from, reuse.hpp), and only the strip is made again.
template <class ExecSpace>
void pixel_windows(FrameContext<ExecSpace> const& fc, Batch const& batch, Workspace<ExecSpace>& ws,
                   bool kept = false) {
  using RangeI = Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<int>>;
  StageTimer<ExecSpace> st(fc.space, "kspecter::extract::windows", fc.times);
  if (kept) {
    sanitize_weights(fc, ws, ws.weights_x0, ws.weights_ncol);
    return;
  }
  FrameShape const& s = fc.shape;
  PatchPlan const& plan = fc.plan;
  int const P = batch.patch_end - batch.patch_begin;
  auto& ptab = ws.ptab_host;
  for (int i = 0; i < P; ++i) {
    Patch const& pa = plan.patches[static_cast<std::size_t>(batch.patch_begin + i)];
    PatchEntry e{};  // the window is filled on the device
    e.fib0 = pa.fiber_pad0 - batch.fiber_begin;
    e.nfib = pa.nfiber_pad;
    e.core = pa.core_slot;
    e.ncore = pa.ncore;
    e.wave0 = pa.wave0;
    e.nkeep = pa.nkeep;
    e.out0 = pa.fiber_pad0 + pa.core_slot - plan.specmin;
    ptab(i) = e;
  }
  Kokkos::deep_copy(fc.space, ws.ptab_all, ptab);
  Kokkos::parallel_for(
      "kspecter::extract::pixel_windows", RangeI(fc.space, 0, P),
      PixelWindows<ExecSpace>{ws.spots.xc, ws.spots.yc, ws.ptab_all, s.m, plan.wavepad,
                              plan.nwavestep, s.sny, s.snx, s.npy, s.npx, fc.opt.pixpad_frac});
  Kokkos::deep_copy(fc.space, ptab, ws.ptab_all);
  fc.space.fence();
  int nrow_max = 0, ncol_max = 0;
  for (int i = 0; i < P; ++i) {
    nrow_max = std::max(nrow_max, ptab(i).y1 - ptab(i).y0);
    ncol_max = std::max(ncol_max, ptab(i).pixstride);
  }
  // Weights of the strip of columns this batch's windows span.
  int bx0 = s.npx, bx1 = 0;
  for (int i = 0; i < P; ++i) {
    bx0 = std::min(bx0, std::max(ptab(i).x0, 0));
    bx1 = std::max(bx1, std::min(ptab(i).x1, s.npx));
  }
  bx1 = std::max(bx1, bx0);
  ws.reserve_windows(bx0, bx1 - bx0, std::size_t(nrow_max) * std::size_t(ncol_max), nrow_max);
  sanitize_weights(fc, ws, bx0, bx1 - bx0);
}

}  // namespace kspecter::extract::detail
