#include "fits_file.hpp"

#include <kspecter/core/error.hpp>
#include <kspecter/core/version.hpp>
#include <kspecter/io/desi_frame.hpp>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

namespace kspecter::io {

namespace {

std::optional<std::string> env(char const* name) {
  char const* v = std::getenv(name);
  if (!v) return std::nullopt;
  return std::string(v);
}

// desispec.io.meta.specprod_root(), "" where it raises KeyError.
std::string specprod_root() {
  auto const sp = env("SPECPROD");
  if (!sp) return {};
  if (sp->find('/') != std::string::npos) return *sp;
  if (auto const redux = env("DESI_SPECTRO_REDUX"))
    return (std::filesystem::path(*redux) / *sp).string();
  if (auto const root = env("DESI_ROOT"))
    return (std::filesystem::path(*root) / "spectro" / "redux" / *sp).string();
  return {};
}

// desispec.io.meta.get_readonly_filepath().
std::string readonly_path(std::string const& path) {
  auto const root = env("DESI_ROOT");
  if (!root) return path;
  std::string ro = *root;
  if (auto const r = env("DESI_ROOT_READONLY"); r && std::filesystem::exists(*r)) ro = *r;
  if (path.rfind(*root, 0) == 0 && *root != ro) return ro + path.substr(root->size());
  return path;
}

bool starts_with(std::string const& s, std::string const& prefix) {
  return !prefix.empty() && s.rfind(prefix, 0) == 0;
}

// The first of `keys` present in `h`, "" when none is.
std::string first_key(FitsHeader const& h, std::vector<char const*> const& keys) {
  for (char const* k : keys)
    if (h.has(k)) return k;
  return {};
}

}  // namespace

FitsTable read_fibermap(std::string const& path) {
  return reading_file(path, [&] {
    FitsReader in(path, GzipAlternative::yes);
    in.move_to("FIBERMAP", BINARY_TBL);
    return in.table();
  });
}

FitsTable frame_fibermap(FitsTable const& fibermap, int specmin, int nspec) {
  auto const fiber = integer_column(fibermap, "FIBER");
  if (!fiber)
    throw InputError(fibermap.file, fibermap.extname,
                     "has no FIBER column, which gives the frame its fibers");
  if (fibermap.nrows < static_cast<long long>(specmin) + nspec)
    throw InputError(fibermap.file, fibermap.extname,
                     "has " + std::to_string(fibermap.nrows) + " rows, fewer than the " +
                         std::to_string(specmin + nspec) + " the spectra " +
                         std::to_string(specmin) + " .. " + std::to_string(specmin + nspec - 1) +
                         " need (one row per PSF fiber)");
  return table_rows(fibermap, specmin, nspec);
}

FitsTable fiber_numbers_fibermap(long long first_fiber, int nspec) {
  std::vector<long long> fibers(static_cast<std::size_t>(std::max(nspec, 0)));
  for (std::size_t i = 0; i < fibers.size(); ++i) fibers[i] = first_fiber + (long long)(i);
  return integer_table("FIBERMAP", "FIBER", fibers);
}

std::string shorten_filename(std::string const& path) {
  if (auto const calib = env("DESI_SPECTRO_CALIB"); calib && starts_with(path, *calib))
    return "SPCALIB" + path.substr(calib->size());
  std::string const prod = specprod_root();
  if (starts_with(path, prod)) return "SPECPROD" + path.substr(prod.size());
  std::string const prod_ro = prod.empty() ? prod : readonly_path(prod);
  if (starts_with(path, prod_ro)) return "SPECPROD" + path.substr(prod_ro.size());
  return path;
}

Pointing barycentric_pointing(FitsHeader const& image, std::string const& image_file,
                              FitsTable const* fibermap) {
  Pointing p;
  FitsHeader const* h = nullptr;
  if (image.has("RA") || image.has("TARGTRA")) {
    h = &image;
    p.file = image_file;
    p.hdu = "IMAGE";
  } else if (fibermap && (fibermap->header.has("RA") || fibermap->header.has("TARGTRA"))) {
    h = &fibermap->header;  // early commissioning: the pointing is only in the fibermap
    p.file = fibermap->file;
    p.hdu = fibermap->extname;
  } else {
    throw InputError(image_file, "IMAGE",
                     "the barycentric correction needs RA or TARGTRA in this header or in the "
                     "FIBERMAP's, and neither has one");
  }
  p.ra_key = first_key(*h, {"TARGTRA", "SKYRA", "TELRA", "RA"});
  p.dec_key = first_key(*h, {"TARGTDEC", "SKYDEC", "TELDEC", "DEC"});
  std::string const mjd_key = first_key(*h, {"MJD-OBS", "MJD"});
  if (p.dec_key.empty())
    throw InputError(p.file, p.hdu,
                     "no TARGTDEC, SKYDEC, TELDEC or DEC for the barycentric correction");
  if (mjd_key.empty())
    throw InputError(p.file, p.hdu, "no MJD-OBS or MJD for the barycentric correction");
  p.ra_deg = *h->get_number(p.ra_key, p.file, p.hdu);
  p.dec_deg = *h->get_number(p.dec_key, p.file, p.hdu);
  double const exptime = h->get_number("EXPTIME", p.file, p.hdu).value_or(0.0);
  p.mjd = *h->get_number(mjd_key, p.file, p.hdu) + exptime / 2.0 / 3600.0 / 24.0;
  return p;
}

FitsHeader desi_frame_header(FitsHeader const& image_header, FrameProvenance const& p) {
  FitsHeader h = image_header;
  if (p.heliocor != 1.0) h.set_number("HELIOCOR", p.heliocor);
  h.set_integer("NSPEC", p.nspec, "Number of spectra");
  h.set_number("WAVEMIN", p.wavemin, "First wavelength [Angstroms]");
  h.set_number("WAVEMAX", p.wavemax, "Last wavelength [Angstroms]");
  h.set_number("WAVESTEP", p.wavestep, "Wavelength step size [Angstroms]");
  h.set_string("IN_PSF", shorten_filename(p.psf), "Input spectral PSF");
  h.set_string("IN_IMG", shorten_filename(p.image));
  set_dependency(h, "kspecter", version());
  if (p.orig_psf) h.set_string("ORIG_PSF", *p.orig_psf);
  h.set_integer("FIBERMIN", p.fibermin);
  h.set_string("BUNIT", "electron/Angstrom");
  return h;
}

}  // namespace kspecter::io
