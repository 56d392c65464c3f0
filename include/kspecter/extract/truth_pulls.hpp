// Pulls of an extracted frame against the truth it was simulated from: the extracted flux
// should equal R·truth within its errors, pull = (flux - R truth) sqrt(ivar).
#pragma once

#include <kspecter/extract/frame.hpp>

#include <vector>

namespace kspecter::extract {

struct PullStats {
  long long n = 0;  // bins compared (ivar > 0, R row complete inside the frame)
  double mean = 0, std = 0;
  double median = 0;
  double robust_std = 0;  // 1.4826 x median absolute deviation
  double max_abs = 0;
};

/// R·truth of spectrum `i` of `frame` (dia_matrix diagonals), with the truth interpolated
/// linearly onto the frame's wavelengths; bins whose R row reaches past the grid get NaN.
std::vector<double> convolve_truth(FrameResult const& frame, int i,
                                   std::vector<double> const& truth_wave,
                                   std::vector<double> const& truth_flux_of_spectrum);

/// Pull statistics over every spectrum of `frame`; truth_flux is [ntruth_spec][nwave_truth]
/// for spectra starting at truth_specmin (spectra of the frame without truth are skipped).
PullStats truth_pulls(FrameResult const& frame, std::vector<double> const& truth_wave,
                      std::vector<double> const& truth_flux, int truth_specmin, int truth_nspec);

}  // namespace kspecter::extract
