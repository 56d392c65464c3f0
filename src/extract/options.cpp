#include <kspecter/core/error.hpp>
#include <kspecter/extract/options.hpp>

#include <cmath>
#include <cstdio>
#include <string>

namespace kspecter::extract {

namespace {
void require(bool ok, std::string const& what) {
  if (!ok) throw ParameterError("extract: " + what);
}
}  // namespace

std::vector<double> ExtractOptions::wavelengths() const {
  if (!wavelength_grid_problem(wmin, wmax, dw).empty()) return {};
  return wavelength_grid(wmin, wmax, dw);
}

void ExtractOptions::validate(int nfiber) const {
  std::string const grid = wavelength_grid_problem(wmin, wmax, dw);
  require(grid.empty(), grid);
  require(range_margin >= 0 && range_margin <= dw * max_bins,
          "range_margin must be >= 0 and finite, got " + std::to_string(range_margin));
  require(specmin >= 0 && specmin < nfiber, "specmin " + std::to_string(specmin) +
                                                " outside the PSF's fibers 0.." +
                                                std::to_string(nfiber - 1));
  // -1 is the one value that means "every fiber" (the CLI's and Python's None): another
  // negative count is a mistake, never silently "all".
  require(
      nspec == -1 || nspec >= 1,
      "nspec must be 1 or more (-1: every fiber from specmin on), got " + std::to_string(nspec));
  int const ns = resolved_nspec(nfiber);
  require(ns >= 1 && specmin + ns <= nfiber, "nspec " + std::to_string(ns) + " from specmin " +
                                                 std::to_string(specmin) + " exceeds the PSF's " +
                                                 std::to_string(nfiber) + " fibers");
  require(bundlesize >= 1, "bundlesize must be >= 1");
  require(nsubbundles >= 1 && nsubbundles <= bundlesize,
          "nsubbundles must be in 1..bundlesize (" + std::to_string(bundlesize) + "), got " +
              std::to_string(nsubbundles));
  require(
      nwavestep >= 1 && nwavestep <= max_bins,
      "nwavestep must be in 1.." + std::to_string(max_bins) + ", got " + std::to_string(nwavestep));
  require(wavepad >= 0 && wavepad <= max_bins,
          "wavepad must be in 0.." + std::to_string(max_bins) + ", got " + std::to_string(wavepad));
  // effective_wavepad() converts wavepad * wavepad_frac to int: bound it first.
  require(wavepad_frac >= 0 && double(wavepad) * wavepad_frac <= max_bins,
          "wavepad_frac must be >= 0 and wavepad x wavepad_frac at most " +
              std::to_string(max_bins) + ", got " + std::to_string(wavepad_frac) + " (wavepad " +
              std::to_string(wavepad) + ")");
  require(bundles_per_batch >= -1, "bundles_per_batch must be -1 (the backend's), 0 or more");
  require(pixpad_frac >= 0 && pixpad_frac <= 1, "pixpad_frac must be in [0, 1]");
  require(regularize >= 0 && std::isfinite(regularize), "regularize must be >= 0");
  require(std::isfinite(psferr) && (psferr >= 0 || psferr == -1),
          "psferr must be 0 or more (-1: the PSF's PSFERR), got " + std::to_string(psferr));
  require(eig_rel_clip >= 0 && eig_rel_clip < 1, "eig_rel_clip must be in [0, 1)");
  require(std::isfinite(reject_sigma), "reject_sigma must be finite (<= 0: no rejection)");
  require(reject_iter >= 1 && reject_iter <= 100,
          "reject_iter must be in 1..100, got " + std::to_string(reject_iter));
}

void ExtractOptions::validate_range(double wavemin, double wavemax) const {
  std::vector<double> const w = wavelengths();
  double const tol = range_margin + 1e-6 * dw;
  if (w.empty() || w.front() < wavemin - tol || w.back() > wavemax + tol) {
    char m[200];
    std::snprintf(m, sizeof m,
                  "wavelengths %.10g .. %.10g A are outside the PSF's range %.10g .. %.10g A",
                  w.empty() ? wmin : w.front(), w.empty() ? wmax : w.back(), wavemin, wavemax);
    require(false, m);
  }
}

}  // namespace kspecter::extract
