// What desispec's desi_extract_spectra (scripts/extract.py, main_gpu_specter) takes from the
// headers and tables around an extraction and puts into the frame besides the spectra: the
// fibermap rows of the extracted fibers, the frame's header, and where and when the exposure
// was taken for the barycentric correction.
#pragma once

#include <kspecter/io/fits_header.hpp>
#include <kspecter/io/fits_table.hpp>

#include <optional>
#include <string>

namespace kspecter::io {

/// The FIBERMAP HDU of the file at `path` (desispec's io.read_fibermap, for -f FILE): a name
/// that does not exist is tried with ".gz" added or removed. InputError when the file or the
/// HDU cannot be read.
FitsTable read_fibermap(std::string const& path);

/// The FIBERMAP of a frame of spectra [specmin, specmin + nspec): those rows of `fibermap`
/// (desispec: fibermap[specmin:specmin+nspec]), whose FIBER column then gives the frame's
/// fibers. InputError naming the fibermap's file and HDU when it has fewer rows or no integer
/// FIBER column (desispec then fails building its Frame).
FitsTable frame_fibermap(FitsTable const& fibermap, int specmin, int nspec);

/// The FIBERMAP of a frame extracted without one: a FIBER column only, first_fiber onwards
/// (the PSF's FIBERMIN + specmin), which read_frame takes as the frame's fibers.
FitsTable fiber_numbers_fibermap(long long first_fiber, int nspec);

/// desispec's io.shorten_filename: a path under $DESI_SPECTRO_CALIB starts with SPCALIB, one
/// under $DESI_SPECTRO_REDUX/$SPECPROD (or $DESI_ROOT/spectro/redux/$SPECPROD, or its
/// $DESI_ROOT_READONLY twin) with SPECPROD; others are left as they are.
std::string shorten_filename(std::string const& path);

/// Where and when an exposure was taken, as desispec's barycentric correction reads it.
struct Pointing {
  double ra_deg = 0, dec_deg = 0;
  double mjd = 0;               // MJD-OBS (or MJD) + EXPTIME / 2 (days): mid-exposure, UTC
  std::string file, hdu;        // the header it came from
  std::string ra_key, dec_key;  // the keywords used
};

/// desispec's choice of header (the image's when it has RA or TARGTRA, else the fibermap's
/// when that has one, else an error) and of keywords (barycentric_correction_multiplicative_
/// factor): RA from TARGTRA, SKYRA, TELRA or RA; Dec from TARGTDEC, SKYDEC, TELDEC or DEC,
/// the first present; MJD-OBS or MJD; EXPTIME, 0 when absent. InputError naming the file,
/// HDU and keyword when one is missing or of the wrong type.
Pointing barycentric_pointing(FitsHeader const& image_header, std::string const& image_file,
                              FitsTable const* fibermap);

/// What the frame's header says of its extraction.
struct FrameProvenance {
  int nspec = 0;
  double wavemin = 0, wavemax = 0, wavestep = 0;  // the grid asked for (-w, or the PSF's)
  std::string psf, image;                         // input files, as given
  std::optional<std::string> orig_psf;            // the PSF's own IN_PSF
  double heliocor = 1;                            // barycentric factor (1: none applied)
  long long fibermin = 0;                         // the frame's first fiber
};

/// The FLUX header desispec gives a frame: the preproc IMAGE header, then HELIOCOR (when
/// not 1), NSPEC, WAVEMIN, WAVEMAX, WAVESTEP, IN_PSF and IN_IMG (shortened), DEPNAMnn /
/// DEPVERnn for kspecter (desiutil.depend), ORIG_PSF, FIBERMIN and BUNIT electron/Angstrom.
FitsHeader desi_frame_header(FitsHeader const& image_header, FrameProvenance const& p);

}  // namespace kspecter::io
