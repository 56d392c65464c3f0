// Preprocessed CCD images (DESI preproc format): IMAGE (f4 or f8, electrons), IVAR, MASK
// (integer, 0 = good), optional FIBERMAP table (passed through to the frame untouched),
// and, for files `kspecter simulate` wrote, the truth spectra (TRUTH_FLUX, TRUTH_WAVE).
//
// This header does not include fitsio.h: everything here takes and returns paths and plain
// host structs.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace kspecter::io {

/// desispec ccdmask bits that kspecter sets itself (simulated defects).
namespace ccdmask {
constexpr int bad = 1 << 0;     // bad column / pixel
constexpr int cosmic = 1 << 4;  // cosmic-ray hit
}  // namespace ccdmask

struct PreprocImage {
  int nx = 0, ny = 0;         // columns, rows (NAXIS1, NAXIS2 of IMAGE)
  std::vector<float> image;   // [ny][nx], row-major, electrons
  std::vector<float> ivar;    // [ny][nx], electrons^-2
  std::vector<int> mask;      // [ny][nx], 0 = good
  bool has_fibermap = false;  // the file has a FIBERMAP HDU (copy it with copy_hdu)
  std::string path;           // the file it came from
};

/// Truth written by `kspecter simulate`: flux in electrons per Angstrom on its own grid.
struct TruthSpectra {
  int specmin = 0, nspec = 0;
  std::vector<double> wavelength;  // [nwave], Angstrom
  std::vector<double> flux;        // [nspec][nwave], electrons / Angstrom
  /// Optional, [nspec]: "SKY" or "TGT" per fiber. When present, write_preproc also writes a
  /// FIBERMAP table (FIBER int32 = fibermin + specmin + i, OBJTYPE 3A), so that FIBERMAP
  /// pass-through can be exercised.
  std::vector<std::string> objtype;
  /// Absolute fiber number of PSF row 0 (the PSF's FIBERMIN), for FIBERMAP's FIBER column.
  int fibermin = 0;
};

/// Reads IMAGE, IVAR and MASK, found by EXTNAME (an IMAGE without EXTNAME in the primary HDU
/// is accepted too). IMAGE and IVAR may have any BITPIX (floating or integer, BSCALE/BZERO
/// applied); MASK must be an integer image. All three must have the same 2-D shape.
///
/// Bad pixels are made harmless, so that an extraction never sees a non-finite number:
///   ivar = 0      where mask != 0, ivar < 0, or image or ivar is not finite;
///   image = 0     where image is not finite (the mask and ivar say the pixel is unusable).
/// The mask is returned unchanged (values wider than 32 bits are folded into 32 bits, keeping
/// nonzero values nonzero).
///
/// Throws InputError naming the file, the HDU and the problem: file missing or not FITS,
/// HDU missing, not an image, not 2-D, shape mismatch, non-integer MASK, truncated data.
PreprocImage read_preproc(std::string const& path);

/// Reads TRUTH_FLUX / TRUTH_WAVE (and OBJTYPE from FIBERMAP when there is one); nullopt when
/// the file has no TRUTH_FLUX. Throws InputError when they are present but malformed.
std::optional<TruthSpectra> read_truth(std::string const& path);

/// Writes a preproc file: primary HDU IMAGE (f4, EXTNAME 'IMAGE', BUNIT electron), IVAR (f4),
/// MASK (i4) and, with `truth`, TRUTH_FLUX (f8 [nspec][nwave], electron/Angstrom, keys SPECMIN,
/// NSPEC), TRUTH_WAVE (f8 [nwave], Angstrom) and, when truth->objtype is filled, FIBERMAP.
/// `header` cards go into the primary HDU; a value that parses fully as an integer or a number
/// is written as one, "T"/"F" as a logical, anything else as a string.
/// The file is written under a temporary name in the same folder and renamed over `path` at
/// the end: `path` never holds a half-written file. Throws ParameterError when the arrays do
/// not match their declared sizes, InputError when the file cannot be written.
void write_preproc(std::string const& path, PreprocImage const& img,
                   TruthSpectra const* truth = nullptr,
                   std::vector<std::pair<std::string, std::string>> const& header = {});

/// Appends a copy of HDU `hdu` (by EXTNAME) of the FITS file `from_path` to the end of the
/// existing FITS file `to_path` (for example the FIBERMAP of a preproc image into a frame).
/// Throws InputError naming the file and HDU when either file or the HDU is missing.
void copy_hdu(std::string const& from_path, std::string const& hdu, std::string const& to_path);

/// True when the FITS file has an HDU with this EXTNAME (false for a file that is not FITS).
bool has_hdu(std::string const& path, std::string const& hdu);

}  // namespace kspecter::io
