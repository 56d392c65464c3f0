// Extracted frames, as desispec's io/frame.py writes them (docs/algorithm.md §6): FITS with
// HDUs FLUX (primary), IVAR, MASK (uint32), WAVELENGTH, RESOLUTION, FIBERMAP, CHI2PIX, SCORES,
// optional MODEL, a CHECKSUM and DATASUM in each, gzip-compressed when the name ends in .gz;
// or HDF5 with datasets of the same names and the header as root attributes.
#pragma once

#include <kspecter/io/fits_header.hpp>
#include <kspecter/io/fits_table.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace kspecter::io {

/// One column of the SCORES table (desispec.specscore): a float64 per spectrum.
struct ScoreColumn {
  std::string name, comment;
  std::vector<double> values;  // [nspec]
};

struct FrameData {
  int specmin = 0, nspec = 0, nwave = 0;
  int ndiag = 0;                    // RESOLUTION has 2 ndiag + 1 diagonals
  std::vector<double> wavelength;   // [nwave], Angstrom
  std::vector<float> flux;          // [nspec][nwave], electron/Angstrom
  std::vector<float> ivar;          // [nspec][nwave]
  std::vector<std::uint32_t> mask;  // [nspec][nwave], desispec specmask bits
  std::vector<float> resolution;    // [nspec][2 ndiag + 1][nwave]
  std::vector<float> chi2pix;       // [nspec][nwave]
  int model_nx = 0, model_ny = 0;   // optional model image
  std::vector<float> model;         // [ny][nx]
  /// The FLUX header's records (desispec's: the preproc IMAGE header, NSPEC, WAVEMIN, ...).
  /// The writer adds BUNIT, NSPEC, SPECMIN, SPECMAX, WAVEMIN, WAVEMAX and WAVESTEP where it
  /// does not set them.
  FitsHeader header;
  /// The FIBERMAP HDU, one row per spectrum (none when empty).
  std::optional<FitsTable> fibermap;
  /// The SCORES HDU (none when empty).
  std::vector<ScoreColumn> scores;
};

/// Writes `frame` to `path`: HDF5 when the name ends in ".h5" or ".hdf5", FITS otherwise.
/// The file is written under a temporary name in the same folder and renamed at the end, so
/// `path` holds either its previous content or the complete new frame, never a partial one.
void write_frame(std::string const& path, FrameData const& frame);

/// Reads a frame written by write_frame (FITS, gzip-compressed or not, or HDF5), for tests
/// and tools.
FrameData read_frame(std::string const& path);

/// Writes a model image (FITS, HDU MODEL, electrons) with the given header records,
/// atomically; gzip-compressed when the name ends in .gz.
void write_model_image(std::string const& path, int nx, int ny, std::vector<float> const& model,
                       FitsHeader const& header = {});

/// True when the name selects the HDF5 format.
bool is_hdf5_name(std::string const& path);

}  // namespace kspecter::io
