// The wavelength grid of spectra: wmin, wmax, dw -> numpy.arange(wmin, wmax + dw/2, dw)
// (docs/algorithm.md, inputs), the one rule that extraction and simulation share.
#pragma once

#include <string>
#include <vector>

namespace kspecter {

/// Largest grid accepted, in bins (a DESI camera has ~2600): beyond it a grid is a typo, and
/// the sizes derived from it would overflow.
inline constexpr int max_wavelength_bins = 1000000;

/// Bins of numpy.arange(wmin, wmax + dw/2, dw), ceil((wmax + dw/2 - wmin) / dw), as a double:
/// it may be huge or NaN for absurd grids, which wavelength_grid_problem reports.
double wavelength_grid_bins(double wmin, double wmax, double dw);

/// Why (wmin, wmax, dw) is no grid, as a phrase ("wavelength step dw must be > 0, got 0"), or
/// "" when it is one: finite numbers, dw > 0, wmax >= wmin, at most max_wavelength_bins bins.
std::string wavelength_grid_problem(double wmin, double wmax, double dw);

/// The step numpy.arange(wmin, ..., dw) really takes: (wmin + dw) - wmin in doubles, which
/// differs from dw in its last bits.
double wavelength_grid_step(double wmin, double dw);

/// numpy.arange(wmin, wmax + dw/2, dw) value for value: wmin + i wavelength_grid_step(wmin, dw)
/// for i = 0 .. wavelength_grid_bins - 1.
/// Throws ParameterError("wavelength grid: <problem>") for a grid with a problem.
std::vector<double> wavelength_grid(double wmin, double wmax, double dw);

}  // namespace kspecter
