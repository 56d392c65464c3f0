// desispec's rule for a bad fit of the 2-D model to the pixels (scripts/extract.py,
// get_chi2pix_mask), applied to a whole extracted frame once every rank's spectra are
// gathered: a bin is BAD2DFIT where its chi2pix exceeds `scale` times the median chi2pix of
// its wavelength bin over the frame's fibers AND `scale` times the median of its fiber over
// the frame's wavelengths. The medians adapt the threshold to the worse fits expected on
// bright sky lines (per wavelength) and bright stars (per fiber).
#pragma once

#include <cstdint>
#include <vector>

namespace kspecter::extract {

struct FrameResult;

/// desispec's default scale.
inline constexpr double bad2dfit_scale = 5.0;

/// `chi2pix` is [nspec][nwave]; returns [nspec][nwave], 1 where the bin is BAD2DFIT. Medians
/// are numpy.median's: the middle value, or the mean of the two middle values of an even
/// count; NaN when a NaN is among the values, and no bin compares greater than NaN.
std::vector<std::uint8_t> chi2pix_bad2dfit(std::vector<double> const& chi2pix, int nspec, int nwave,
                                           double scale = bad2dfit_scale);

/// Sets specmask::BAD2DFIT in `frame.mask` on the bins chi2pix_bad2dfit flags (other bits are
/// kept); returns how many bins it flagged.
long long apply_bad2dfit(FrameResult& frame, double scale = bad2dfit_scale);

}  // namespace kspecter::extract
