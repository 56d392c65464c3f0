#include <kspecter/core/error.hpp>
#include <kspecter/core/wavelength_grid.hpp>

#include <cmath>
#include <cstdio>

namespace kspecter {

double wavelength_grid_bins(double wmin, double wmax, double dw) {
  // numpy.arange(start, stop, step) has ceil((stop - start) / step) values.
  return std::ceil((wmax + 0.5 * dw - wmin) / dw);
}

double wavelength_grid_step(double wmin, double dw) {
  // numpy.arange stores start and start + step, then fills start + i * (second - start): its
  // step is dw as rounded at wmin (0.8 at 5760 A is 0.79999999999972715). Frames whose grids
  // are compared with == (desispec's) need this step, not dw (docs/algorithm.md, inputs).
  double const second = wmin + dw;  // rounded to a double, as numpy stores it
  return second - wmin;
}

std::string wavelength_grid_problem(double wmin, double wmax, double dw) {
  if (!std::isfinite(wmin) || !std::isfinite(wmax) || !std::isfinite(dw))
    return "wavelength grid wmin, wmax, dw must be finite";
  if (!(dw > 0)) return "wavelength step dw must be > 0, got " + std::to_string(dw);
  if (!(wmax >= wmin))
    return "wmax (" + std::to_string(wmax) + ") must be >= wmin (" + std::to_string(wmin) + ")";
  double const nbins = wavelength_grid_bins(wmin, wmax, dw);
  if (!(nbins <= max_wavelength_bins)) {
    char m[200];
    std::snprintf(m, sizeof m,
                  "the wavelength grid %g .. %g in steps of %g would have %.3g bins; at most %d "
                  "are supported",
                  wmin, wmax, dw, nbins, max_wavelength_bins);
    return m;
  }
  return "";
}

std::vector<double> wavelength_grid(double wmin, double wmax, double dw) {
  std::string const problem = wavelength_grid_problem(wmin, wmax, dw);
  if (!problem.empty()) throw ParameterError("wavelength grid: " + problem);
  long const n = static_cast<long>(wavelength_grid_bins(wmin, wmax, dw));
  std::vector<double> w;
  w.reserve(static_cast<std::size_t>(n));
  double const step = wavelength_grid_step(wmin, dw);
  for (long i = 0; i < n; ++i) w.push_back(wmin + static_cast<double>(i) * step);
  return w;
}

}  // namespace kspecter
