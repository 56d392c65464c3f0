// Extracted frames, desispec-compatible (docs/algorithm.md §6): FITS with HDUs FLUX (primary),
// IVAR, MASK, WAVELENGTH, RESOLUTION, CHI2PIX, FIBERMAP (copied from the image when present),
// optional MODEL; or HDF5 with datasets of the same names and the header as root attributes.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace kspecter::io {

struct FrameData {
  int specmin = 0, nspec = 0, nwave = 0;
  int ndiag = 0;                    // RESOLUTION has 2 ndiag + 1 diagonals
  std::vector<double> wavelength;   // [nwave], Angstrom
  std::vector<float> flux;          // [nspec][nwave], electron/Angstrom
  std::vector<float> ivar;          // [nspec][nwave]
  std::vector<std::uint32_t> mask;  // [nspec][nwave], desispec bits
  std::vector<float> resolution;    // [nspec][2 ndiag + 1][nwave]
  std::vector<float> chi2pix;       // [nspec][nwave]
  int model_nx = 0, model_ny = 0;   // optional model image
  std::vector<float> model;         // [ny][nx]
  /// Extra header cards (keyword, value) for the primary HDU: IN_PSF, IN_IMG, ...
  std::vector<std::pair<std::string, std::string>> header;
  /// A FITS file whose FIBERMAP HDU is copied into the frame (empty: none).
  std::string fibermap_from;
};

/// Writes `frame` to `path`: HDF5 when the name ends in ".h5" or ".hdf5", FITS otherwise.
/// The file is written under a temporary name in the same folder and renamed at the end, so
/// `path` holds either its previous content or the complete new frame, never a partial one.
void write_frame(std::string const& path, FrameData const& frame);

/// Reads a frame written by write_frame (FITS or HDF5), for tests and tools.
FrameData read_frame(std::string const& path);

/// Writes a model image (FITS, HDU MODEL, electrons) with the given header cards, atomically.
void write_model_image(std::string const& path, int nx, int ny, std::vector<float> const& model,
                       std::vector<std::pair<std::string, std::string>> const& header = {});

/// True when the name selects the HDF5 format.
bool is_hdf5_name(std::string const& path);

}  // namespace kspecter::io
