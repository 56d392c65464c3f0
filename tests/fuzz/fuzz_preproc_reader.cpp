// libFuzzer target: io::read_preproc (plain or gzipped FITS, MASK plain or tile-compressed)
// and io::read_truth on arbitrary bytes, with the header keywords and FIBERMAP column
// desi_extract_spectra reads. Refusals are
// InputErrors naming the file; an accepted file must keep the promises of preproc_file.hpp
// (sizes, no non-finite number reaching an extraction, truth on an increasing grid).
#include "fuzz_support.hpp"

#include <kspecter/io/fits_table.hpp>
#include <kspecter/io/preproc_file.hpp>

#include <cmath>
#include <cstddef>
#include <cstdint>

namespace {

using namespace kspecter;

void check(io::PreprocImage const& img) {
  std::size_t const n = std::size_t(img.nx) * std::size_t(img.ny);
  if (img.nx <= 0 || img.ny <= 0 || img.image.size() != n || img.ivar.size() != n ||
      img.mask.size() != n)
    fuzz::broken("read_preproc: sizes do not match nx * ny");
  for (std::size_t i = 0; i < n; ++i) {
    if (!std::isfinite(img.image[i]) || !std::isfinite(img.ivar[i]) || img.ivar[i] < 0)
      fuzz::broken("read_preproc: a non-finite image or a bad ivar got through");
    // desispec's rule: bits of extractmaskval exclude a pixel; BADREADNOISE alone does not.
    if ((img.mask[i] & io::ccdmask::extractmaskval) != 0 && img.ivar[i] != 0)
      fuzz::broken("read_preproc: a pixel masked by extractmaskval has ivar");
  }
}

void check(io::TruthSpectra const& t) {
  std::size_t const nwave = t.wavelength.size();
  if (t.nspec <= 0 || nwave == 0 || t.specmin < 0 || t.flux.size() != nwave * t.nspec ||
      !(t.objtype.empty() || t.objtype.size() == std::size_t(t.nspec)))
    fuzz::broken("read_truth: sizes do not match");
  for (std::size_t i = 0; i < nwave; ++i)
    if (!(t.wavelength[i] > 0) || (i > 0 && !(t.wavelength[i] > t.wavelength[i - 1])))
      fuzz::broken("read_truth: wavelengths not positive and increasing");
  for (double f : t.flux)
    if (!std::isfinite(f)) fuzz::broken("read_truth: non-finite flux");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(std::uint8_t const* data, std::size_t size) {
  std::string const& path = fuzz::write_input("preproc", data, size);
  fuzz::read_or_refuse(path, [&] {
    io::PreprocImage const img = io::read_preproc(path);
    check(img);
    // What desi_extract_spectra reads of it besides pixels: the barycentric correction's
    // keywords (of any type the header holds) and the FIBERMAP's fiber numbers.
    for (char const* key : {"TARGTRA", "TARGTDEC", "MJD-OBS", "EXPTIME"})
      img.header.get_number(key, path, "IMAGE");
    img.header.get_string("CAMERA", path, "IMAGE");
    if (img.fibermap) io::integer_column(*img.fibermap, "FIBER");
  });
  fuzz::read_or_refuse(path, [&] {
    if (auto t = io::read_truth(path)) check(*t);
  });
  return 0;
}
