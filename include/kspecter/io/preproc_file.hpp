// Preprocessed CCD images (DESI preproc format): IMAGE (f4 or f8, electrons), IVAR, MASK
// (integer, 0 = good), optional FIBERMAP table (passed through to the frame untouched),
// and, for files kspecter simulate wrote, the truth spectra.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace kspecter::io {

struct PreprocImage {
  int nx = 0, ny = 0;         // columns, rows (NAXIS1, NAXIS2 of IMAGE)
  std::vector<float> image;   // [ny][nx], row-major, electrons
  std::vector<float> ivar;    // [ny][nx]; set to 0 wherever mask != 0 or image/ivar is not finite
  std::vector<int> mask;      // [ny][nx]
  bool has_fibermap = false;  // a FIBERMAP HDU exists (copy it with copy_fibermap)
  std::string path;           // the file it came from
};

/// Truth written by `kspecter simulate`: flux in electrons per Angstrom on its own grid.
struct TruthSpectra {
  int specmin = 0, nspec = 0;
  std::vector<double> wavelength;  // [nwave], Angstrom
  std::vector<double> flux;        // [nspec][nwave], electrons / Angstrom
};

/// Reads IMAGE, IVAR and MASK (HDU names; a plain primary image + IVAR + MASK also works).
/// Throws InputError naming the file, HDU and problem on anything malformed.
PreprocImage read_preproc(std::string const& path);

/// Reads the TRUTH_FLUX / TRUTH_WAVE HDUs if the file has them.
std::optional<TruthSpectra> read_truth(std::string const& path);

/// Writes a preproc file (temporary file, then renamed over `path`).
void write_preproc(std::string const& path, PreprocImage const& img,
                   TruthSpectra const* truth = nullptr,
                   std::vector<std::pair<std::string, std::string>> const& header = {});

}  // namespace kspecter::io
