// Pixel-integrated Gauss-Hermite spots for a block of fibers x wavelengths, on the device
// (docs/algorithm.md §1-2).
#pragma once

#include <kspecter/psf/device_psf.hpp>
#include <kspecter/psf/gauss_hermite_psf.hpp>

#include <Kokkos_Core.hpp>

namespace kspecter::psf {

/// Spots of fibers [fiber_begin, fiber_begin + nfiber) at the given wavelengths.
template <class MemorySpace>
struct Spots {
  Kokkos::View<double****, Kokkos::LayoutRight, MemorySpace>
      values;  // [nfiber][nwave][ny][nx], >= 0, each sums to 1
  Kokkos::View<int**, Kokkos::LayoutRight, MemorySpace> xc,
      yc;  // [nfiber][nwave] lower-left CCD pixel of the spot
  int fiber_begin = 0;
};

/// How compute_spots runs. The defaults are what extraction needs.
struct SpotOptions {
  /// Accept wavelengths outside the PSF's range (the Legendre series are then extrapolated).
  bool allow_extrapolation = false;
  /// Add the TAIL* power-law wings when the PSF has them (TAILAMP not identically 0), as
  /// specter does; false ignores them always, as gpu_specter does.
  bool tails = true;
  /// Launch shape; 0 picks the backend's default (host: 32 wavelengths per team of one
  /// thread; GPU: 8 wavelengths per team, a thread of 32 vector lanes each). Wavelengths per team
  /// are capped by TeamPolicy::scratch_size_max(0) on the team driver; team_size and
  /// vector_length apply to the team driver only.
  int waves_per_team = 0;
  int team_size = 0;
  int vector_length = 0;
  /// Run the GPU's team driver on a host backend too (tests of that driver; slower).
  bool team_driver = false;
};

/// Evaluates spots; throws ParameterError if a wavelength is outside the PSF's range
/// (unless allow_extrapolation) or not finite, or a fiber is outside the PSF.
/// `fiber_begin` counts rows of the PSF (0 .. psf.nfiber-1), not absolute fiber numbers.
/// `out` is (re)allocated when its extents differ from [nfiber][nwave][ny][nx].
/// A spot whose values are all <= 0 or not finite (a broken PSF) comes out as all zeros.
/// Asynchronous on `space` apart from the wavelength check (a small copy to the host).
/// Compiled in the library for every backend of the build (src/psf/spots_backend.cpp.in); the
/// CUDA one without fused multiply-adds: nvcc's contraction of a*b+c moved spots up to 5.8e-14
/// from the host's (H100 and H200), without it they agree within 1e-14. The spots are ~2 % of
/// a frame's time on the GPU.
template <class ExecSpace>
void compute_spots(ExecSpace const& space, GaussHermitePsf const& host_psf,
                   DevicePsf<typename ExecSpace::memory_space> const& psf, int fiber_begin,
                   int nfiber,
                   Kokkos::View<double const*, typename ExecSpace::memory_space> wavelengths,
                   Spots<typename ExecSpace::memory_space>& out, SpotOptions const& options);

/// compute_spots with default options but for allow_extrapolation.
template <class ExecSpace>
void compute_spots(ExecSpace const& space, GaussHermitePsf const& host_psf,
                   DevicePsf<typename ExecSpace::memory_space> const& psf, int fiber_begin,
                   int nfiber,
                   Kokkos::View<double const*, typename ExecSpace::memory_space> wavelengths,
                   Spots<typename ExecSpace::memory_space>& out, bool allow_extrapolation = false) {
  SpotOptions o;
  o.allow_extrapolation = allow_extrapolation;
  compute_spots(space, host_psf, psf, fiber_begin, nfiber, wavelengths, out, o);
}

}  // namespace kspecter::psf
