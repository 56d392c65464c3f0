#include "fits_file.hpp"
#include "frame_formats.hpp"

#include <kspecter/core/error.hpp>

namespace kspecter::io {

bool is_hdf5_name(std::string const& path) {
  auto ends = [&](std::string const& s) {
    return path.size() >= s.size() && path.compare(path.size() - s.size(), s.size(), s) == 0;
  };
  return ends(".h5") || ends(".hdf5");
}

static void validate(std::string const& path, FrameData const& fr) {
  std::size_t const n = std::size_t(fr.nspec) * fr.nwave;
  auto need = [&](std::size_t have, std::size_t want, char const* what) {
    if (have != want)
      throw ParameterError(path + ": frame " + what + " has " + std::to_string(have) +
                           " values, expected " + std::to_string(want));
  };
  need(fr.wavelength.size(), fr.nwave, "WAVELENGTH");
  need(fr.flux.size(), n, "FLUX");
  need(fr.ivar.size(), n, "IVAR");
  need(fr.mask.size(), n, "MASK");
  need(fr.chi2pix.size(), n, "CHI2PIX");
  need(fr.resolution.size(), n * (2 * fr.ndiag + 1), "RESOLUTION");
  if (!fr.model.empty()) need(fr.model.size(), std::size_t(fr.model_nx) * fr.model_ny, "MODEL");
}

void write_frame(std::string const& path, FrameData const& frame) {
  validate(path, frame);
  if (is_hdf5_name(path))
    write_frame_hdf5(path, frame);
  else
    write_frame_fits(path, frame);
}

FrameData read_frame(std::string const& path) {
  return reading_file(
      path, [&] { return is_hdf5_name(path) ? read_frame_hdf5(path) : read_frame_fits(path); });
}

}  // namespace kspecter::io
