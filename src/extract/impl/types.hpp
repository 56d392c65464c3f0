// The Views and the patch table that the extraction kernels share.
//
// Layout of a batch:
//   spots     [nfb][nfull][sny][snx]   fibers of the batch (from fiber_begin), padded grid
//   xc, yc    [nfb][nfull]             lower-left CCD pixel of each spot
//   ptab      [P]                      patch table (PatchEntry; windows filled on device)
//   icov      [P][n][n]                n = nslots * m, unknown u = slot * m + bin
//   rhs, fw   [P][n]                   A^T W p (then the solution f), A^T W 1
//   pix       [P][npix_max]            per-patch chi^2 image of the window (-1: no weight)
//   rr, xr    [P * nslots][rows][2]    row ranges of each (patch, fiber slot) (row_ranges.hpp)
//
// Every output element is written by exactly one thread and every sum is taken in a fixed
// order, so results are bitwise reproducible run to run (no floating-point atomics).
#pragma once

#include "tuning.hpp"

#include <kspecter/core/kokkos_compat.hpp>

#include <Kokkos_Core.hpp>

namespace kspecter::extract::detail {

using compat::imax;
using compat::imin;

/// One patch of a batch, as the kernels see it.
struct PatchEntry {
  // From the plan (extract/patch_plan.hpp).
  int fib0;   // first padded fiber, relative to the batch's first fiber
  int nfib;   // padded fibers (real ones; slots nfib .. nslots-1 are identity padding)
  int core;   // slot of the first core fiber
  int ncore;  // core fibers
  int wave0;  // first padded bin in the padded grid = first core bin of the output grid
  int nkeep;  // core bins written out
  int out0;   // output spectrum of the first core fiber (may be outside [0, nspec))
  // Filled on the device (windows_stage.hpp).
  int x0, x1, y0, y1;  // pixel window: columns [x0, x1), rows [y0, y1) (CCD, unclipped)
  int pixstride;       // columns of the window (row stride of the pixel buffer)
  int mono;            // 1 when every padded fiber's yc is non-decreasing over the padded bins
};

template <class ExecSpace>
struct Types {
  using exec = ExecSpace;
  using mem = typename ExecSpace::memory_space;
  using Tune = Tuning<ExecSpace>;
  using Policy = Kokkos::TeamPolicy<ExecSpace, Kokkos::Schedule<Kokkos::Dynamic>>;
  using Member = typename Policy::member_type;
  using Spots = Kokkos::View<const double****, Kokkos::LayoutRight, mem>;
  using Corners = Kokkos::View<const int**, Kokkos::LayoutRight, mem>;
  using Table = Kokkos::View<PatchEntry*, mem>;
  using CTable = Kokkos::View<const PatchEntry*, mem>;
  using Image = Kokkos::View<const double**, Kokkos::LayoutRight, mem>;
  using Mat = Kokkos::View<double***, Kokkos::LayoutRight, mem>;
  using Vec = Kokkos::View<double**, Kokkos::LayoutRight, mem>;
  using Vec1 = Kokkos::View<double*, mem>;
  using Blocks = Kokkos::View<double****, Kokkos::LayoutRight, mem>;
  using Out2 = Kokkos::View<double**, Kokkos::LayoutRight, mem>;
  using Out3 = Kokkos::View<double***, Kokkos::LayoutRight, mem>;
  using Ranges = Kokkos::View<int***, Kokkos::LayoutRight, mem>;  // [item][row][2]
  using XRanges = Kokkos::View<int**, Kokkos::LayoutRight, mem>;  // [item][2]
  using Info = Kokkos::View<const int*, mem>;
};

/// Pixel weights of the CCD columns [x0, x0 + w.extent(1)), every row, indexed by CCD row and
/// column: a batch sanitizes only the strip its windows reach (windows_stage.hpp), so a bundle
/// touches a few MB instead of the whole CCD's.
template <class Mem>
struct WeightStrip {
  Kokkos::View<const double**, Kokkos::LayoutRight, Mem> w;
  int x0 = 0;
  KOKKOS_INLINE_FUNCTION double operator()(int y, int x) const { return w(y, x - x0); }
};

}  // namespace kspecter::extract::detail
