// CCD defects for simulated images (`kspecter simulate --defects`): bad columns and cosmic
// rays, with the desispec ccdmask bits a preprocessed image would carry.
#pragma once

#include <cstdint>

namespace kspecter::sim {

/// desispec ccdmask bits used here (the same values as io::ccdmask).
namespace maskbit {
constexpr int bad = 1 << 0;
constexpr int cosmic = 1 << 4;
}  // namespace maskbit

struct DefectOptions {
  /// Bad columns per 4k x 4k CCD (scaled with the image width; at least 1 when > 0).
  int bad_columns = 4;
  /// Cosmic-ray tracks per million pixels (about 1700 on a DESI CCD in a 1000 s exposure).
  double cosmics_per_megapixel = 100.0;
  /// Cosmic-ray pixels get the COSMIC bit and ivar 0, as in a preproc image after desispec's
  /// cosmic-ray rejection. false leaves them unmasked (ivar untouched): raw hits that an
  /// extraction must survive on its own (chi2pix, BAD2DFIT).
  bool mask_cosmics = true;
};

struct DefectSummary {
  int bad_columns = 0;     // columns
  long bad_pixels = 0;     // pixels of bad columns
  int cosmic_rays = 0;     // tracks
  long cosmic_pixels = 0;  // pixels hit (counted once)
};

/// Adds defects to an image [ny][nx] (row-major host arrays), a seeded host function
/// (its draws come from stream::defects, so they depend on seed and image size only):
///  - bad columns: a column, from a random row to the top of the CCD (a charge trap) or over
///    the whole height, reads a random offset of 200 to 2000 electrons above the signal;
///    MASK |= BAD, ivar = 0.
///  - cosmic rays: straight tracks of 1 to 30 pixels at random angles, each pixel hit gaining
///    500 to 5000 electrons; MASK |= COSMIC and ivar = 0 when mask_cosmics.
DefectSummary add_defects(std::uint64_t seed, int nx, int ny, float* image, float* ivar, int* mask,
                          DefectOptions const& options = {});

}  // namespace kspecter::sim
