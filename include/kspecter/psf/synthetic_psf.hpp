// A synthetic GaussHermite PSF with the geometry of a DESI r camera: the embedded default of
// `kspecter make-psf`, of the README demo and of tests on machines without ../shared.
#pragma once

#include <kspecter/psf/gauss_hermite_psf.hpp>

#include <cstdint>

namespace kspecter::psf {

struct SyntheticPsfOptions {
  int nfiber = 500;          // fibers, centred on the CCD
  int fibermin = 0;          // absolute number of the first fiber (500 for an r1 camera)
  int bundlesize = 25;       // fibers per bundle
  double pitch = 7.28;       // px between neighbouring fibers of a bundle
  double bundle_gap = 19.4;  // px between the last fiber of a bundle and the first of the next
  double wavemin = 5560.0, wavemax = 7800.0;  // Legendre range of every HDU, Angstrom
  int npix_x = 4114, npix_y = 4128;           // CCD columns, rows
  int hsizex = 8, hsizey = 5;                 // spots of 11 x 17 px
  int ghdegx = 6, ghdegy = 6;                 // Gauss-Hermite degrees
  int legdeg = 3;          // Legendre degree (in wavelength) of the PSF parameters
  int trace_ncoef = 6;     // Legendre coefficients of XTRACE, YTRACE
  double tailamp = 0.0;    // TAILAMP (0: no tails, as in DESI r PSFs)
  double psferr = 0.01;    // PSFERR
  std::uint64_t seed = 0;  // fiber-to-fiber scatter of positions, widths and GH terms
};

/// A synthetic PSF. Deterministic: host code with its own random stream (no <random>
/// distributions, whose output differs between standard libraries), so the same options give
/// the same PSF wherever kspecter runs. Traces are curved (pincushion
/// in x, a smile of ~117 px in y across the CCD, ~0.53 A/px), the widths (~1.0-1.2 px) and
/// the GH terms vary with wavelength and across the CCD. Throws ParameterError when the
/// options make no sense (fibers off the CCD, degrees out of range, empty range).
GaussHermitePsf make_synthetic_psf(SyntheticPsfOptions const& options = {});

}  // namespace kspecter::psf
