// Input spectra for the simulator: the wavelength grid, bin widths, and realistic default
// spectra (night sky shared by all fibers, objects of varied brightness), in electrons per
// Angstrom as the spectrograph records them (throughput and exposure time folded in).
#pragma once

#include <kspecter/core/wavelength_grid.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace kspecter::sim {

/// Spectra of fibers [specmin, specmin + nspec) (rows of the PSF) on one wavelength grid.
struct Spectra {
  int specmin = 0, nspec = 0;
  std::vector<double> wavelength;    // [nwave], Angstrom, strictly increasing
  std::vector<double> flux;          // [nspec][nwave], electrons / Angstrom, >= 0
  std::vector<std::string> objtype;  // [nspec] "SKY" or "TGT" (may be empty for user input)

  int nwave() const { return static_cast<int>(wavelength.size()); }
};

/// The simulator's grids are extraction's: numpy.arange(wmin, wmax + dw/2, dw)
/// (core/wavelength_grid.hpp).
using kspecter::wavelength_grid;

/// Width of each bin in Angstrom: central differences (w[i+1] - w[i-1]) / 2, one-sided at
/// the ends (numpy.gradient, what desispec uses to turn per-bin counts into per-Angstrom
/// flux). A single bin gets width 1. The projection puts flux * width electrons in each bin.
std::vector<double> bin_widths(std::vector<double> const& wavelength);

/// What the default spectra look like. All levels are in electrons per Angstrom of a DESI-like
/// 1000 s dark-time exposure (r camera: a 21-22 mag/arcsec^2 sky through a 1.5" fiber, 8.6 m^2
/// and 40 % throughput gives 60-150 e/A).
struct SpectraOptions {
  double sky_fraction = 0.10;        // probability that a fiber is a sky fiber
  double sky_continuum = 60.0;       // sky continuum at 6500 A
  double sky_line_scale = 1.0;       // multiplies every sky line
  double object_scale = 1.0;         // multiplies every object
  double throughput_scatter = 0.03;  // fiber-to-fiber throughput, uniform in 1 +- this
};

/// Default simulated spectra, a seeded host function. Every fiber sees the same night sky:
/// a smooth continuum plus about 400 narrow (unresolved, sigma 0.3 A) emission lines between
/// 3500 and 10000 A (a few fixed atomic lines - Na D, [O I] 5577/6300/6364 - and a seeded
/// forest of OH lines of 30 to 7500 electrons each, densest in the red), scaled by a fiber
/// throughput within 1 +- 3 %.
/// About 10 % of fibers are sky fibers ("SKY"); the others ("TGT") add an object: a power-law
/// continuum whose level is drawn so that most objects are faint (0.1 to 200 e/A at 6500 A,
/// median ~0.7, against a sky of 60), and for about half of them, at redshifts 0.05 to 1.6,
/// emission lines: [O II] of 50 to 2000 electrons and H-beta, [O III], H-alpha, [N II], [S II]
/// in fixed ratios to it, with 50 km/s to 150 km/s widths. Lines are integrated
/// over each bin, so flux * width of a bin is the electrons that fall in it.
/// A fiber's spectrum depends only on (seed, fiber, wavelength grid): simulating fibers
/// 25..49 alone gives the same spectra as the same fibers in a full frame.
Spectra make_spectra(std::uint64_t seed, int specmin, int nspec,
                     std::vector<double> const& wavelength, SpectraOptions const& options = {});

}  // namespace kspecter::sim
