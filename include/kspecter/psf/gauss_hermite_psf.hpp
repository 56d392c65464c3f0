// The GaussHermite PSF model (specex format, PSFVER 3) as plain host data: Legendre
// coefficients of the traces and of every PSF parameter, per fiber. io/ reads and writes it,
// psf/ moves it to the device, make-psf synthesizes it.
#pragma once

#include <string>
#include <vector>

namespace kspecter::psf {

/// Legendre expansions of one quantity for every fiber over [wavemin, wavemax]:
/// value(fiber, w) = sum_k coeff[fiber * ncoef + k] * P_k(2 (w - wavemin)/(wavemax - wavemin) - 1).
/// Every stored coefficient is used (as specter and gpu_specter do), whatever the LEGDEGW
/// column of the file says: specex leaves stale values in the unused slots of some rows.
struct LegendreSet {
  double wavemin = 0, wavemax = 0;
  int nfiber = 0, ncoef = 0;
  std::vector<double> coeff;  // [nfiber][ncoef], row-major

  /// Host evaluation (a reference for tests and for host-side planning).
  double value(int fiber, double wavelength) const;
};

/// A whole GaussHermite PSF of one camera.
///
/// Fibers are addressed by their row in the file (0 .. nfiber-1); `fibermin` is the
/// absolute fiber number of row 0 (500 for an r1 camera).
struct GaussHermitePsf {
  int nfiber = 0;              // fibers in the file (rows of XTRACE)
  int fibermin = 0;            // FIBERMIN: the absolute index of fiber 0
  int npix_x = 0, npix_y = 0;  // CCD size, columns x rows
  int hsizex = 0, hsizey = 0;  // spot half sizes: spots are (2 hsizey + 1) x (2 hsizex + 1)
  int ghdegx = 0, ghdegy = 0;  // Gauss-Hermite degrees
  double psferr = 0.01;        // PSFERR header (0.01 when absent)
  LegendreSet xtrace, ytrace;  // trace x(w), y(w) in pixels (x = 0: centre of column 0)
  std::vector<std::string> param_names;  // PARAM column: "GHSIGX", "GH-0-0", "TAILAMP", ...
  std::vector<LegendreSet> params;       // one per name, all over the PSF table's range

  /// Index of a parameter by name, or -1.
  int param_index(std::string const& name) const;
  /// Index of GH-i-j (i: x degree, j: y degree), or -1.
  int gh_index(int i, int j) const;
  /// Spot size.
  int spot_nx() const { return 2 * hsizex + 1; }
  int spot_ny() const { return 2 * hsizey + 1; }
  /// Wavelength range over which every expansion is valid (the intersection of the
  /// XTRACE, YTRACE and PSF table ranges).
  double wavemin() const;
  double wavemax() const;
  /// True when TAILAMP exists and is not identically zero (tails then matter).
  bool has_tails() const;
};

/// Largest Gauss-Hermite degree and spot half size kspecter accepts (far above DESI's 6 and
/// 8): they bound the team scratch of the spot kernel.
inline constexpr int max_gh_degree = 20;
inline constexpr int max_half_size = 64;

/// Checks that an in-memory PSF is self-consistent (shapes, degrees, GH-i-j present for all
/// i <= ghdegx, j <= ghdegy and none beyond, GHSIGX/GHSIGY present, TAIL* complete when
/// TAILAMP is, finite coefficients, valid ranges). Returns "" when it is, else the first
/// problem in words. io::read_psf reports file-level problems itself, with the HDU named.
std::string check_psf(GaussHermitePsf const& psf);

}  // namespace kspecter::psf
