#include <kspecter/core/error.hpp>
#include <kspecter/extract/options.hpp>

#include <cmath>
#include <string>

namespace kspecter::extract {

std::vector<double> ExtractOptions::wavelengths() const {
  // numpy.arange(wmin, wmax + dw/2, dw): ceil((stop - start) / step) values start + i step.
  std::vector<double> w;
  if (!(dw > 0) || !(wmax >= wmin)) return w;
  double const stop = wmax + 0.5 * dw;
  long const n = static_cast<long>(std::ceil((stop - wmin) / dw));
  w.reserve(static_cast<std::size_t>(n));
  for (long i = 0; i < n; ++i) w.push_back(wmin + static_cast<double>(i) * dw);
  return w;
}

namespace {
void require(bool ok, std::string const& what) {
  if (!ok) throw ParameterError("extract: " + what);
}
}  // namespace

void ExtractOptions::validate(int nfiber) const {
  require(std::isfinite(wmin) && std::isfinite(wmax) && std::isfinite(dw),
          "wavelength grid wmin, wmax, dw must be finite");
  require(dw > 0, "wavelength step dw must be > 0, got " + std::to_string(dw));
  require(wmax >= wmin, "wmax (" + std::to_string(wmax) + ") must be >= wmin (" +
                            std::to_string(wmin) + ")");
  require(specmin >= 0 && specmin < nfiber,
          "specmin " + std::to_string(specmin) + " outside the PSF's fibers 0.." +
              std::to_string(nfiber - 1));
  int const ns = resolved_nspec(nfiber);
  require(ns >= 1 && specmin + ns <= nfiber,
          "nspec " + std::to_string(ns) + " from specmin " + std::to_string(specmin) +
              " exceeds the PSF's " + std::to_string(nfiber) + " fibers");
  require(bundlesize >= 1, "bundlesize must be >= 1");
  require(nsubbundles >= 1 && nsubbundles <= bundlesize,
          "nsubbundles must be in 1..bundlesize (" + std::to_string(bundlesize) + "), got " +
              std::to_string(nsubbundles));
  require(nwavestep >= 1, "nwavestep must be >= 1");
  require(wavepad >= 0, "wavepad must be >= 0");
  require(wavepad_frac >= 0 && std::isfinite(wavepad_frac), "wavepad_frac must be >= 0");
  require(pixpad_frac >= 0 && pixpad_frac <= 1, "pixpad_frac must be in [0, 1]");
  require(regularize >= 0 && std::isfinite(regularize), "regularize must be >= 0");
  require(std::isfinite(psferr), "psferr must be finite");
  require(eig_rel_clip >= 0 && eig_rel_clip < 1, "eig_rel_clip must be in [0, 1)");
}

}  // namespace kspecter::extract
