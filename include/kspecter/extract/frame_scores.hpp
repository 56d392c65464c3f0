// The SCORES of a raw frame, as desi_extract_spectra appends them
// (desispec.specscore.compute_and_append_frame_scores(frame, suffix='RAW'), whose default
// flux_per_angstrom=False treats the flux as counts): per spectrum, over the camera's tophat
// [lo, hi) (b 4000-5800, r 5800-7600, z 7600-9800 A; the camera from the mean wavelength),
//   SUM_RAW_COUNT_X     sum of flux (numpy.sum's pairwise order, so the bits are desispec's);
//   MEDIAN_RAW_COUNT_X  median of flux / dwave;
//   MEDIAN_RAW_SNR_X    median of sqrt(ivar) flux / sqrt(dwave) (negative ivar as 0);
// dwave = numpy.gradient(wave), X the camera in capitals.
#pragma once

#include <string>
#include <vector>

namespace kspecter::extract {

/// One column of the SCORES table.
struct ScoreColumn {
  std::string name, comment;
  std::vector<double> values;  // [nspec]
};

/// desispec's _auto_detect_camera: 'b' when the mean wavelength is <= 5800 A, 'z' when it is
/// >= 7600 A, 'r' otherwise.
char score_band(std::vector<double> const& wave);

/// True when some wavelength lies in the tophat of score_band(wave): otherwise desispec
/// raises, and so does frame_scores.
bool scores_defined(std::vector<double> const& wave);

/// The three columns, in desispec's order. `flux` and `ivar` are [nspec][nwave]. Throws
/// ParameterError when no wavelength lies in the tophat.
std::vector<ScoreColumn> frame_scores(std::vector<double> const& wave,
                                      std::vector<double> const& flux,
                                      std::vector<double> const& ivar, int nspec,
                                      std::string const& suffix = "RAW");

}  // namespace kspecter::extract
