// Projection of spectra through spots onto the CCD: the expected electrons of every pixel,
// image[y][x] += sum over fibers f and wavelength bins w of electrons[f][w] * spot[f][w][y - yc][x
// - xc] (electrons = flux in e/A times the bin width in A).
#pragma once

#include <kspecter/core/error.hpp>
#include <kspecter/core/profiling.hpp>
#include <kspecter/psf/spots.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <string>

namespace kspecter::sim {

/// Adds the light of one block of spots to `image` [ny][nx] (accumulates; zero it first).
/// `electrons` [nfiber][nwave] holds electrons per bin for the same fibers and bins as
/// `spots`. Spot pixels outside the image are dropped.
///
/// Reproducible by construction: every image row is owned by exactly one thread, which adds
/// the contributions to each of its pixels in one fixed order - fibers ascending, then spots
/// by (corner row yc, wavelength index) - so the sum is the same bits on any thread count.
/// Calling this for consecutive blocks of fibers in ascending order gives the same order,
/// hence the same bits, whatever the block size. (Across backends the arithmetic itself may
/// still differ: the simulator runs this on the host; see simulate.hpp.)
template <class ExecSpace>
void project_spots(
    ExecSpace const& space, psf::Spots<typename ExecSpace::memory_space> const& spots,
    Kokkos::View<double const**, Kokkos::LayoutRight, typename ExecSpace::memory_space> electrons,
    Kokkos::View<double**, Kokkos::LayoutRight, typename ExecSpace::memory_space> image) {
  using mem = typename ExecSpace::memory_space;
  ScopedRegion region("kspecter::sim::project_spots");
  int const nfiber = static_cast<int>(spots.values.extent(0));
  int const nwave = static_cast<int>(spots.values.extent(1));
  int const sny = static_cast<int>(spots.values.extent(2));
  int const snx = static_cast<int>(spots.values.extent(3));
  if (int(electrons.extent(0)) != nfiber || int(electrons.extent(1)) != nwave)
    throw ParameterError("project_spots: electrons are [" + std::to_string(electrons.extent(0)) +
                         "][" + std::to_string(electrons.extent(1)) + "], spots [" +
                         std::to_string(nfiber) + "][" + std::to_string(nwave) + "]");
  int const ny = static_cast<int>(image.extent(0));
  int const nx = static_cast<int>(image.extent(1));
  if (nfiber == 0 || nwave == 0 || ny == 0 || nx == 0) return;

  // Host-side index: per fiber, wavelength indices sorted by corner row (stable, so ties keep
  // wavelength order), and where each corner row starts. A row y then reads, per fiber, the
  // contiguous run of spots whose corner row lies in [y - sny + 1, y].
  auto const yc_h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), spots.yc);
  int ycmin = yc_h(0, 0), ycmax = yc_h(0, 0);
  for (int f = 0; f < nfiber; ++f)
    for (int w = 0; w < nwave; ++w) {
      ycmin = std::min(ycmin, yc_h(f, w));
      ycmax = std::max(ycmax, yc_h(f, w));
    }
  // Only corner rows in [1 - sny, ny - 1] reach the image: a trace off the CCD by any distance
  // (corners at +-2^30, psf::spot_corner) sizes nothing, and its spots add nothing.
  ycmin = std::max(ycmin, 1 - sny);
  ycmax = std::min(ycmax, ny - 1);
  if (ycmin > ycmax) {
    space.fence();
    return;
  }
  int const nkey = ycmax - ycmin + 1;
  auto const in_range = [&](int yc) { return yc >= ycmin && yc <= ycmax; };
  using V2i = Kokkos::View<int**, Kokkos::LayoutRight, mem>;
  V2i order(
      Kokkos::view_alloc(std::string("kspecter::sim::project_order"), Kokkos::WithoutInitializing),
      nfiber, nwave);
  V2i start(
      Kokkos::view_alloc(std::string("kspecter::sim::project_start"), Kokkos::WithoutInitializing),
      nfiber, nkey + 1);
  auto order_h = Kokkos::create_mirror_view(order);
  auto start_h = Kokkos::create_mirror_view(start);
  for (int f = 0; f < nfiber; ++f) {  // counting sort by yc
    for (int k = 0; k <= nkey; ++k) start_h(f, k) = 0;
    for (int w = 0; w < nwave; ++w)
      if (in_range(yc_h(f, w))) ++start_h(f, yc_h(f, w) - ycmin + 1);
    for (int k = 0; k < nkey; ++k) start_h(f, k + 1) += start_h(f, k);
    std::vector<int> next(nkey);
    for (int k = 0; k < nkey; ++k) next[k] = start_h(f, k);
    for (int w = 0; w < nwave; ++w)
      if (in_range(yc_h(f, w))) order_h(f, next[yc_h(f, w) - ycmin]++) = w;
  }
  Kokkos::deep_copy(space, order, order_h);
  Kokkos::deep_copy(space, start, start_h);

  // Rows that any spot touches.
  int const y0 = std::max(0, ycmin), y1 = std::min(ny, ycmax + sny);
  if (y0 >= y1) {
    space.fence();
    return;
  }
  auto const values = spots.values;
  auto const xc = spots.xc, yc = spots.yc;
  Kokkos::parallel_for(
      "kspecter::sim::project", Kokkos::RangePolicy<ExecSpace>(space, y0, y1),
      KOKKOS_LAMBDA(int const y) {
        int klo = y - sny + 1 - ycmin, khi = y - ycmin;  // corner rows, as keys
        if (klo < 0) klo = 0;
        if (khi > nkey - 1) khi = nkey - 1;
        if (klo > khi) return;
        for (int f = 0; f < nfiber; ++f) {
          int const end = start(f, khi + 1);
          for (int k = start(f, klo); k < end; ++k) {
            int const w = order(f, k);
            double const e = electrons(f, w);
            if (e == 0.0) continue;
            int const iy = y - yc(f, w);
            int const x0 = xc(f, w);
            int const ix0 = x0 < 0 ? -x0 : 0;
            int const ix1 = x0 + snx > nx ? nx - x0 : snx;
            for (int ix = ix0; ix < ix1; ++ix) image(y, x0 + ix) += e * values(f, w, iy, ix);
          }
        }
      });
  // `order` and `start` must outlive the kernel.
  space.fence();
}

}  // namespace kspecter::sim
