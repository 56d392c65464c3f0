// Legendre series as the PSF file defines them (docs/algorithm.md §1), callable on host and device.
#pragma once

// Only the function-space macros: host-only code (the PSF checks, the fuzz targets) then
// compiles without a Kokkos backend.
#include <Kokkos_Macros.hpp>

namespace kspecter::psf {

/// The reduced coordinate of a wavelength in a Legendre range [wavemin, wavemax]:
/// -1 at wavemin, +1 at wavemax (written as gpu_specter writes it, for the same rounding).
KOKKOS_INLINE_FUNCTION double legendre_u(double wavelength, double wavemin, double wavemax) {
  return (wavelength - wavemin) * (2.0 / (wavemax - wavemin)) - 1.0;
}

/// sum_k c[k * stride] P_k(u) for k < ncoef, by the three-term recurrence
/// (k+1) P_{k+1} = (2k+1) u P_k - k P_{k-1}.
KOKKOS_INLINE_FUNCTION double legendre_sum(double const* c, int ncoef, double u, int stride = 1) {
  if (ncoef <= 0) return 0.0;
  double sum = c[0];
  double pkm1 = 1.0, pk = u;
  for (int k = 1; k < ncoef; ++k) {
    sum += c[k * stride] * pk;
    double const pkp1 = ((2 * k + 1) * u * pk - k * pkm1) / (k + 1);
    pkm1 = pk;
    pk = pkp1;
  }
  return sum;
}

}  // namespace kspecter::psf
