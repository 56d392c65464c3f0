// Pixel-integrated Gauss-Hermite spots for a block of fibers x wavelengths, on the device
// (extraction.md §1-2).
#pragma once

#include <kspecter/psf/gauss_hermite_psf.hpp>

#include <Kokkos_Core.hpp>

namespace kspecter::psf {

/// The PSF's coefficients in device memory, ready for the spot kernel.
template <class MemorySpace>
struct DevicePsf {
  Kokkos::View<double**, Kokkos::LayoutRight, MemorySpace> xtrace, ytrace;  // [nfiber][ncoef]
  Kokkos::View<double***, Kokkos::LayoutRight, MemorySpace> params;  // [nparam][nfiber][ncoef]
  // (the implementation adds the ranges, degrees and parameter indices it needs)
};

/// Spots of fibers [fiber_begin, fiber_begin + nfiber) at the given wavelengths.
template <class MemorySpace>
struct Spots {
  Kokkos::View<double****, Kokkos::LayoutRight, MemorySpace> values;  // [nfiber][nwave][ny][nx], >= 0, each sums to 1
  Kokkos::View<int**, Kokkos::LayoutRight, MemorySpace> xc, yc;       // [nfiber][nwave] lower-left CCD pixel of the spot
  int fiber_begin = 0;
};

/// Copies a host PSF to the device.
template <class ExecSpace>
DevicePsf<typename ExecSpace::memory_space> to_device(ExecSpace const& space,
                                                     GaussHermitePsf const& psf);

/// Evaluates spots; throws ParameterError if a wavelength is outside the PSF's range
/// (unless allow_extrapolation) or a fiber is outside the PSF.
template <class ExecSpace>
void compute_spots(ExecSpace const& space, GaussHermitePsf const& host_psf,
                   DevicePsf<typename ExecSpace::memory_space> const& psf, int fiber_begin,
                   int nfiber,
                   Kokkos::View<double const*, typename ExecSpace::memory_space> wavelengths,
                   Spots<typename ExecSpace::memory_space>& out, bool allow_extrapolation = false);

}  // namespace kspecter::psf
