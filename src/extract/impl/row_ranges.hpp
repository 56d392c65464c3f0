// The model A f at a pixel, gathered from the spots that cover it, for the quality stage
// (each patch's window) and for the model image (the whole CCD): both first find, for each
// fiber and pixel row, the range of bins whose spot covers that row, then sum spot x flux
// over those bins only.
#pragma once

#include "types.hpp"

namespace kspecter::extract::detail {

/// One fiber's bins and the pixel rows they are sought in: bins [bin0, bin0 + nbin) of the
/// padded grid, rows [row0, row0 + nrow) of the CCD. nbin = 0: nothing (identity padding).
struct RowItem {
  int fiber, bin0, nbin, row0, nrow;
};

/// The (patch, fiber slot) pairs of a batch: a slot's padded bins over its patch's window.
template <class ExecSpace>
struct PatchSlots {
  typename Types<ExecSpace>::CTable ptab;
  int nslots, m, nrow_max;
  KOKKOS_INLINE_FUNCTION RowItem operator()(int i) const {
    PatchEntry const& e = ptab(i / nslots);
    int const k = i % nslots;
    return {e.fib0 + k, e.wave0, k < e.nfib ? m : 0, e.y0, imin(e.y1 - e.y0, nrow_max)};
  }
};

/// The requested fibers of a batch: their output bins over every CCD row.
struct FrameFibers {
  int fiber0, wavepad, nwave, npix_y;
  KOKKOS_INLINE_FUNCTION RowItem operator()(int i) const {
    return {fiber0 + i, wavepad, nwave, 0, npix_y};
  }
};

/// For item i and row r (relative to row0): rr(i, r) = [lo, hi], the bins whose spot covers
/// the row (lo > hi: none), and xr(i) = [xlo, xhi), the columns the item's spots span.
template <class ExecSpace, class Items>
struct RowRanges {
  using T = Types<ExecSpace>;
  typename T::Corners xc, yc;
  Items items;
  typename T::Ranges rr;
  typename T::XRanges xr;
  int sny, snx;
  KOKKOS_INLINE_FUNCTION void operator()(int i) const {
    RowItem const it = items(i);
    for (int r = 0; r < it.nrow; ++r) {
      rr(i, r, 0) = it.nbin;
      rr(i, r, 1) = -1;
    }
    int xlo = 2147483647, xhi = -2147483647;
    for (int b = 0; b < it.nbin; ++b) {
      int const y = yc(it.fiber, it.bin0 + b) - it.row0, x = xc(it.fiber, it.bin0 + b);
      xlo = imin(xlo, x);
      xhi = imax(xhi, x + snx);
      for (int r = imax(y, 0); r < imin(y + sny, it.nrow); ++r) {
        if (b < rr(i, r, 0)) rr(i, r, 0) = b;
        if (b > rr(i, r, 1)) rr(i, r, 1) = b;
      }
    }
    xr(i, 0) = it.nbin > 0 ? xlo : 0;
    xr(i, 1) = it.nbin > 0 ? xhi : 0;
  }
};

/// Sum of spot x coefficient at pixel (x, y), row r of the row ranges, over items
/// [item0, item0 + nitem) (fibers fiber0 + k, bins from bin0 of the padded grid). coef(k, b, c)
/// sets c to bin b of item k's coefficient and returns whether the bin counts; `count` gets
/// one per spot pixel that does.
template <class ExecSpace>
struct SpotGather {
  using T = Types<ExecSpace>;
  typename T::Spots spots;
  typename T::Corners xc, yc;
  Kokkos::View<const int***, Kokkos::LayoutRight, typename T::mem> rr;
  Kokkos::View<const int**, Kokkos::LayoutRight, typename T::mem> xr;
  int sny, snx;

  /// `sum` plus spot x coefficient over the items, added one at a time in item and bin order.
  /// The loads of kAhead bins are issued before their products are added: what the GPU's
  /// gathers (FrameModel, ModelChi2) wait on is their loads (perf/gpu_runs.md, session 31).
  static constexpr int kAhead = 4;
  template <class Coef>
  KOKKOS_INLINE_FUNCTION double operator()(int x, int y, int r, int item0, int nitem, int fiber0,
                                           int bin0, Coef const& coef, long long& count,
                                           double sum = 0.0) const {
    for (int k = 0; k < nitem; ++k) {
      int const i = item0 + k;
      if (x < xr(i, 0) || x >= xr(i, 1)) continue;
      int const f = fiber0 + k;
      int const hi = rr(i, r, 1);
      for (int b = rr(i, r, 0); b <= hi; b += kAhead) {
        double sv[kAhead], cv[kAhead];
        bool on[kAhead];
        for (int u = 0; u < kAhead; ++u) {
          int const bb = b + u;
          int const dx = bb <= hi ? x - xc(f, bin0 + bb) : -1;
          int const dy = bb <= hi ? y - yc(f, bin0 + bb) : -1;
          on[u] = dx >= 0 && dx < snx && dy >= 0 && dy < sny && coef(k, bb, cv[u]);
          sv[u] = on[u] ? spots(f, bin0 + bb, dy, dx) : 0.0;
        }
        for (int u = 0; u < kAhead; ++u)
          if (on[u]) {
            sum += sv[u] * cv[u];
            ++count;
          }
      }
    }
    return sum;
  }
};

}  // namespace kspecter::extract::detail
