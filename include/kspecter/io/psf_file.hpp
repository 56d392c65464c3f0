// GaussHermite PSF files (specex format, PSFTYPE 'GAUSS-HERMITE', PSFVER 3): the XTRACE and
// YTRACE images [nfiber][ncoef] with their own WAVEMIN/WAVEMAX, and the PSF binary table
// (PARAM 8A, COEFF [nfiber][LEGDEG+1], LEGDEGX, LEGDEGW; header WAVEMIN, WAVEMAX, LEGDEG,
// GHDEGX, GHDEGY, HSIZEX, HSIZEY, NPIX_X, NPIX_Y, FIBERMIN, FIBERMAX, PSFERR).
#pragma once

#include <kspecter/psf/gauss_hermite_psf.hpp>

#include <optional>
#include <string>

namespace kspecter::io {

/// Keywords of a PSF file that desispec's extraction looks at besides the PSF itself.
struct PsfKeywords {
  std::optional<std::string> camera;  // CAMERA of the primary HDU, else of the PSF HDU
  std::optional<std::string> in_psf;  // IN_PSF of the PSF HDU: the PSF this one was made from
};

/// Reads a GaussHermite PSF. Anything else (missing HDU, key or column, wrong shapes or
/// types, inconsistent degrees, GH-i-j rows missing or beyond GHDEGX/GHDEGY, non-finite
/// coefficients, non-positive spot widths, wrong PSFTYPE, older PSFVER, truncated file) is
/// refused with an InputError naming the file, the HDU and the problem.
/// psferr comes from the PSF HDU's PSFERR key, 0.01 when absent (specter's rule; the
/// PSFERROR key that specex also writes is the fit's assumption, not used here).
/// With `keywords`, also fills them (a CAMERA or IN_PSF that is not a string is refused).
psf::GaussHermitePsf read_psf(std::string const& path, PsfKeywords* keywords = nullptr);

/// Writes `psf` in the same format (the primary HDU is XTRACE, as specex writes it), to a
/// temporary file in the same folder that is then renamed over `path`. Throws
/// ParameterError if the PSF is inconsistent (psf::check_psf) or a parameter name is
/// longer than 8 characters, Error if the file cannot be written.
void write_psf(std::string const& path, psf::GaussHermitePsf const& psf);

}  // namespace kspecter::io
