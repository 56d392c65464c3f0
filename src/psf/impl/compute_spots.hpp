// compute_spots (declared in spots.hpp): the spot kernel's parameters, its launch shape and
// the checks around it. Instantiated in the library for every backend of the build
// (src/psf/spots_backend.cpp.in).
#pragma once

#include "spot_kernel.hpp"
#include "tuning.hpp"

#include <kspecter/core/allocate.hpp>
#include <kspecter/core/error.hpp>
#include <kspecter/core/profiling.hpp>
#include <kspecter/psf/spots.hpp>

#include <Kokkos_Core.hpp>

#include <cmath>
#include <sstream>
#include <string>

namespace kspecter::psf {

namespace detail {

/// Fills the kernel's parameters and launches it ("kspecter::psf::spots").
template <class ExecSpace, bool HostLoops>
void launch_spots(ExecSpace const& space, DevicePsf<typename ExecSpace::memory_space> const& psf,
                  int fiber_begin, int nfiber,
                  Kokkos::View<double const*, typename ExecSpace::memory_space> wavelengths,
                  Spots<typename ExecSpace::memory_space>& out, SpotOptions const& options) {
  using Kernel = SpotKernel<ExecSpace, HostLoops>;
  using Policy = Kokkos::TeamPolicy<ExecSpace>;
  int const nwave = static_cast<int>(wavelengths.extent(0));
  Kernel k;
  k.xtrace = psf.xtrace;
  k.ytrace = psf.ytrace;
  k.sp = psf.spot_params;
  k.wave = wavelengths;
  k.values = out.values;
  k.xc = out.xc;
  k.yc = out.yc;
  k.fiber_begin = fiber_begin;
  k.nwave = nwave;
  k.hsizex = psf.hsizex;
  k.hsizey = psf.hsizey;
  k.nx = psf.spot_nx();
  k.ny = psf.spot_ny();
  k.ngx = psf.ghdegx + 1;
  k.ngy = psf.ghdegy + 1;
  k.tails = psf.tails && options.tails;
  k.nterm = 2 + 2 + k.ngx * k.ngy + (k.tails ? 5 : 0);
  k.ncx = int(psf.xtrace.extent(1));
  k.ncy = int(psf.ytrace.extent(1));
  k.ncp = int(psf.spot_params.extent(2));
  k.xw0 = psf.xwavemin;
  k.xw1 = psf.xwavemax;
  k.yw0 = psf.ywavemin;
  k.yw1 = psf.ywavemax;
  k.pw0 = psf.wavemin;
  k.pw1 = psf.wavemax;
  k.layout();

  using Tune = detail::SpotTuning<HostLoops>;
  int vector_length =
      HostLoops ? 1 : (options.vector_length > 0 ? options.vector_length : Tune::vector_length);
  if (vector_length > Policy::vector_length_max()) vector_length = Policy::vector_length_max();
  int const bytes_per_wave = int(sizeof(double)) * k.per_wave;
  int const scratch_max = Policy::scratch_size_max(0);
  if (bytes_per_wave > scratch_max)
    throw ParameterError("compute_spots: one wavelength's scratch (" +
                         std::to_string(bytes_per_wave) + " B) exceeds the team scratch limit (" +
                         std::to_string(scratch_max) +
                         " B): spot or Gauss-Hermite degree too large");
  // Host-driver teams hold one wavelength's scratch whatever their block; team-driver
  // teams the whole block's.
  int wpt = options.waves_per_team > 0 ? options.waves_per_team : Tune::waves_per_team;
  if (!HostLoops && wpt * bytes_per_wave > scratch_max) wpt = scratch_max / bytes_per_wave;
  if (wpt > nwave) wpt = nwave;
  k.waves_per_team = wpt;
  // The host driver runs teams of one thread; the team driver a thread (a warp) per
  // wavelength of the block.
  int team_size = HostLoops ? 1 : (options.team_size > 0 ? options.team_size : wpt);
  k.nblocks = (nwave + wpt - 1) / wpt;
  std::size_t const scratch_doubles = std::size_t(k.scratch_waves()) * k.per_wave;
  // Never more threads than the backend allows (a host backend running the team driver
  // has as many as its pool).
  int const tmax =
      Policy(space, nfiber * k.nblocks, 1, vector_length)
          .set_scratch_size(0, Kokkos::PerTeam(Kernel::scratch_view::shmem_size(scratch_doubles)))
          .team_size_max(k, Kokkos::ParallelForTag());
  if (team_size > tmax) team_size = tmax;
  Policy policy(space, nfiber * k.nblocks, team_size, vector_length);
  Kokkos::parallel_for("kspecter::psf::spots",
                       policy.set_scratch_size(
                           0, Kokkos::PerTeam(Kernel::scratch_view::shmem_size(scratch_doubles))),
                       k);
}

}  // namespace detail

template <class ExecSpace>
void compute_spots(ExecSpace const& space, GaussHermitePsf const& host_psf,
                   DevicePsf<typename ExecSpace::memory_space> const& psf, int fiber_begin,
                   int nfiber,
                   Kokkos::View<double const*, typename ExecSpace::memory_space> wavelengths,
                   Spots<typename ExecSpace::memory_space>& out, SpotOptions const& options) {
  using mem = typename ExecSpace::memory_space;
  ScopedRegion region("kspecter::psf::compute_spots");
  if (host_psf.nfiber != psf.nfiber || host_psf.hsizex != psf.hsizex ||
      host_psf.hsizey != psf.hsizey)
    throw ParameterError("compute_spots: the host PSF and the device PSF differ");
  detail::check_fiber_range(psf.nfiber, fiber_begin, nfiber);
  int const nwave = static_cast<int>(wavelengths.extent(0));

  // Wavelength check on the host: a few kB, and it keeps the kernel free of error paths.
  {
    auto const h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), wavelengths);
    double const lo = psf.valid_wavemin(), hi = psf.valid_wavemax();
    for (int i = 0; i < nwave; ++i) {
      double const w = h(i);
      if (!std::isfinite(w))
        throw ParameterError("compute_spots: wavelength #" + std::to_string(i) + " is not finite");
      if (!options.allow_extrapolation && (w < lo || w > hi)) {
        std::ostringstream o;
        o.precision(10);
        o << "compute_spots: wavelength " << w << " A (#" << i << ") is outside the PSF's range ["
          << lo << ", " << hi << "] A; extrapolation was not allowed";
        throw ParameterError(o.str());
      }
    }
  }

  int const nx = psf.spot_nx(), ny = psf.spot_ny();
  using V4 = Kokkos::View<double****, Kokkos::LayoutRight, mem>;
  using V2i = Kokkos::View<int**, Kokkos::LayoutRight, mem>;
  if (int(out.values.extent(0)) != nfiber || int(out.values.extent(1)) != nwave ||
      int(out.values.extent(2)) != ny || int(out.values.extent(3)) != nx)
    out.values = allocate<V4>(space, "kspecter::psf::spots", nfiber, nwave, ny, nx);
  advise_huge_pages(out.values);  // written whole by the kernel (perf/cpu_profile.md)
  if (int(out.xc.extent(0)) != nfiber || int(out.xc.extent(1)) != nwave)
    out.xc = allocate<V2i>(space, "kspecter::psf::spots_xc", nfiber, nwave);
  if (int(out.yc.extent(0)) != nfiber || int(out.yc.extent(1)) != nwave)
    out.yc = allocate<V2i>(space, "kspecter::psf::spots_yc", nfiber, nwave);
  out.fiber_begin = fiber_begin;
  if (nfiber == 0 || nwave == 0) return;

  // A host execution space (one that runs on the CPU: Serial, OpenMP, ...), whatever the
  // memory space (CUDA UVM memory is host-accessible, yet CUDA wants the team driver).
  constexpr bool host = Kokkos::SpaceAccessibility<ExecSpace, Kokkos::HostSpace>::accessible;
  if constexpr (host) {
    if (!options.team_driver) {
      detail::launch_spots<ExecSpace, true>(space, psf, fiber_begin, nfiber, wavelengths, out,
                                            options);
      return;
    }
  }
  detail::launch_spots<ExecSpace, false>(space, psf, fiber_begin, nfiber, wavelengths, out,
                                         options);
}

}  // namespace kspecter::psf
