// Preprocessed CCD images as desispec's io/image.py writes them: IMAGE (the primary HDU, or
// an extension, found by EXTNAME; electrons), IVAR, MASK (an integer image, plain or
// tile-compressed), optional READNOISE, optional FIBERMAP table; the whole file plain or
// gzip-compressed (preproc-r0-00067784.fits.gz). Files `kspecter simulate` wrote also hold
// the truth spectra (TRUTH_FLUX, TRUTH_WAVE).
//
// This header does not include fitsio.h: everything here takes and returns paths and plain
// host structs.
#pragma once

#include <kspecter/io/fits_header.hpp>
#include <kspecter/io/fits_table.hpp>

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace kspecter::io {

/// desispec's CCD pixel mask bits (desispec.maskbits.ccdmask).
namespace ccdmask {
constexpr int bad = 1 << 0;           // pre-determined bad pixel
constexpr int hot = 1 << 1;           // hot pixel
constexpr int dead = 1 << 2;          // dead pixel
constexpr int saturated = 1 << 3;     // saturated pixel from object
constexpr int cosmic = 1 << 4;        // cosmic ray
constexpr int pixflatzero = 1 << 5;   // pixflat is 0
constexpr int pixflatlow = 1 << 6;    // pixflat < 0.1
constexpr int highvar = 1 << 7;       // high variability in pixel value
constexpr int badreadnoise = 1 << 8;  // very high amplifier read noise
constexpr int badamp = 1 << 9;        // bad amplifier
/// desispec.maskbits.extractmaskval: the bits that take a pixel out of the extraction
/// (every bit above but BADREADNOISE).
constexpr int extractmaskval =
    bad | hot | dead | saturated | cosmic | pixflatzero | pixflatlow | highvar | badamp;
}  // namespace ccdmask

/// Truth written by `kspecter simulate`: flux in electrons per Angstrom on its own grid.
struct TruthSpectra {
  int specmin = 0, nspec = 0;
  std::vector<double> wavelength;  // [nwave], Angstrom
  std::vector<double> flux;        // [nspec][nwave], electrons / Angstrom
  /// Optional, [nspec]: "SKY" or "TGT" per fiber, from (or, with write_preproc, into) the
  /// FIBERMAP's OBJTYPE column.
  std::vector<std::string> objtype;
  /// Absolute fiber number of PSF row 0 (the PSF's FIBERMIN), for FIBERMAP's FIBER column.
  int fibermin = 0;
};

struct PreprocImage {
  int nx = 0, ny = 0;        // columns, rows (NAXIS1, NAXIS2 of IMAGE)
  std::vector<float> image;  // [ny][nx], row-major, electrons
  std::vector<float> ivar;   // [ny][nx], electrons^-2
  std::vector<int> mask;     // [ny][nx], ccdmask bits, 0 = good
  /// IMAGE's header records (CAMERA, FLAVOR, EXPTIME, MJD-OBS, ...): desispec makes it the
  /// frame's header. write_preproc writes them into IMAGE.
  FitsHeader header;
  /// The FIBERMAP HDU, when the file has one (read_preproc), or to write (write_preproc).
  std::optional<FitsTable> fibermap;
  /// The simulated truth, read with the pixels when asked for and the file has TRUTH_FLUX.
  std::optional<TruthSpectra> truth;
  std::string path;  // the file it came from
};

/// Reads IMAGE, IVAR, MASK and FIBERMAP (READNOISE is not read: the extraction does not use
/// it). A name that does not exist is tried with ".gz" added or removed, as desispec's
/// checkgzip does; a gzip file is decompressed in memory. IMAGE (EXTNAME IMAGE; an IMAGE
/// without EXTNAME in the primary HDU is accepted too) and IVAR may have any BITPIX
/// (floating or integer, BSCALE/BZERO applied); MASK must be an integer image of any BITPIX,
/// plain or tile-compressed (RICE, GZIP, PLIO, HCOMPRESS: whatever CFITSIO decompresses).
/// All three must have the same 2-D shape.
///
/// Pixels are excluded as desispec's extraction excludes them, and bad numbers are made
/// harmless, so that an extraction never sees a non-finite number:
///   ivar = 0      where mask & ccdmask::extractmaskval, ivar < 0, or image or ivar is not
///                 finite (a pixel flagged BADREADNOISE only keeps its ivar);
///   image = 0     where image is not finite (the mask and ivar say the pixel is unusable).
/// The mask is returned unchanged (values wider than 32 bits are folded into 32 bits, keeping
/// nonzero values nonzero).
///
/// Throws InputError naming the file, the HDU and the problem: file missing, corrupt gzip or
/// not FITS, HDU missing, not an image, not 2-D, shape mismatch, non-integer MASK, truncated
/// data, tiles that do not decompress.
/// With `with_truth`, TRUTH_FLUX / TRUTH_WAVE too (PreprocImage::truth, as read_truth reads
/// them): a gzip file is inflated once for both.
PreprocImage read_preproc(std::string const& path, bool with_truth = false);

/// Reads TRUTH_FLUX / TRUTH_WAVE (and OBJTYPE from FIBERMAP when there is one); nullopt when
/// the file has no TRUTH_FLUX. Throws InputError when they are present but malformed.
std::optional<TruthSpectra> read_truth(std::string const& path);

/// Writes a preproc file as desispec's write_image does: the primary HDU IMAGE (f4,
/// EXTNAME 'IMAGE', BUNIT electron, img.header's records), IVAR (f4), MASK (int16,
/// RICE tile-compressed), READNOISE (f4) when `readnoise` is not empty, FIBERMAP (img.fibermap,
/// else one made from `truth` when truth->objtype is filled: FIBER, TARGETID, OBJTYPE,
/// FIBERSTATUS), then, with `truth`, TRUTH_FLUX (f8 [nspec][nwave], electron/Angstrom, keys
/// SPECMIN, NSPEC) and TRUTH_WAVE (f8 [nwave], Angstrom). Every HDU carries CHECKSUM and
/// DATASUM; a name ending in ".gz" gives a gzip-compressed file.
/// The file is written under a temporary name in the same folder and renamed over `path` at
/// the end: `path` never holds a half-written file. Throws ParameterError when the arrays do
/// not match their declared sizes or a mask value does not fit 16 bits, InputError when the
/// file cannot be written.
void write_preproc(std::string const& path, PreprocImage const& img,
                   TruthSpectra const* truth = nullptr, std::vector<float> const& readnoise = {});

/// True when the FITS file has an HDU with this EXTNAME (false for a file that is not FITS).
bool has_hdu(std::string const& path, std::string const& hdu);

}  // namespace kspecter::io
