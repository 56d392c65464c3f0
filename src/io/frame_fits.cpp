// FITS frames (desispec layout) through CFITSIO.
#include "atomic_output.hpp"
#include "fits_support.hpp"
#include "frame_formats.hpp"

#include <kspecter/core/error.hpp>
#include <kspecter/core/version.hpp>

#include <fitsio.h>

#include <cstring>
#include <limits>
#include <memory>

namespace kspecter::io {

namespace {

void check(int status, std::string const& file, std::string const& hdu, char const* what) {
  if (status) throw InputError(file, hdu, std::string(what) + ": " + fits_message(status));
}

template <class T>
void write_image(fitsfile* f, std::string const& file, char const* extname, int bitpix,
                 int datatype, std::vector<long> naxes_fastest_first, T const* data,
                 char const* bunit = nullptr) {
  int status = 0;
  long n = 1;
  for (long a : naxes_fastest_first) n *= a;
  fits_create_img(f, bitpix, static_cast<int>(naxes_fastest_first.size()),
                  naxes_fastest_first.data(), &status);
  fits_update_key(f, TSTRING, "EXTNAME", const_cast<char*>(extname), nullptr, &status);
  if (bunit) fits_update_key(f, TSTRING, "BUNIT", const_cast<char*>(bunit), nullptr, &status);
  if (n > 0) fits_write_img(f, datatype, 1, n, const_cast<T*>(data), &status);
  check(status, file, extname, "cannot write image");
}

template <class T>
std::vector<T> read_image(fitsfile* f, std::string const& file, char const* extname, int datatype,
                          std::vector<long>& naxes) {
  int status = 0;
  if (fits_movnam_hdu(f, IMAGE_HDU, const_cast<char*>(extname), 0, &status))
    throw InputError(file, extname, "HDU not found");
  int naxis = 0;
  fits_get_img_dim(f, &naxis, &status);
  naxes.assign(naxis, 0);
  if (naxis > 0) fits_get_img_size(f, naxis, naxes.data(), &status);
  long n = naxis > 0 ? 1 : 0;
  for (long a : naxes) n *= a;
  std::vector<T> out(n);
  int anynul = 0;
  if (n > 0) fits_read_img(f, datatype, 1, n, nullptr, out.data(), &anynul, &status);
  check(status, file, extname, "cannot read image");
  return out;
}

}  // namespace

void write_frame_fits(std::string const& path, FrameData const& fr) {
  AtomicOutput out(path);
  int status = 0;
  FitsPtr f = create_fits(out, status);
  check(status, path, "", "cannot create file");
  long const nspec = fr.nspec, nwave = fr.nwave, nd = 2 * fr.ndiag + 1;

  // Primary HDU: FLUX, with the frame's header.
  write_image(f.get(), path, "FLUX", FLOAT_IMG, TFLOAT, {nwave, nspec}, fr.flux.data(),
              "electron/Angstrom");
  int v = fr.nspec;
  fits_update_key(f.get(), TINT, "NSPEC", &v, "number of spectra", &status);
  v = fr.specmin;
  fits_update_key(f.get(), TINT, "SPECMIN", &v, "first spectrum", &status);
  v = fr.specmin + fr.nspec - 1;
  fits_update_key(f.get(), TINT, "SPECMAX", &v, "last spectrum", &status);
  if (!fr.wavelength.empty()) {
    double w0 = fr.wavelength.front(), w1 = fr.wavelength.back();
    double dw = fr.wavelength.size() > 1 ? (w1 - w0) / (fr.wavelength.size() - 1) : 0.0;
    fits_update_key(f.get(), TDOUBLE, "WAVEMIN", &w0, "first wavelength [Angstrom]", &status);
    fits_update_key(f.get(), TDOUBLE, "WAVEMAX", &w1, "last wavelength [Angstrom]", &status);
    fits_update_key(f.get(), TDOUBLE, "WAVESTEP", &dw, "wavelength step [Angstrom]", &status);
  }
  std::string const tool = std::string("kspecter ") + version();
  fits_update_key(f.get(), TSTRING, "EXTRACT", const_cast<char*>(tool.c_str()),
                  "extraction code and version", &status);
  for (auto const& [key, value] : fr.header)
    fits_update_key_longstr(f.get(), const_cast<char*>(key.c_str()),
                            const_cast<char*>(value.c_str()), nullptr, &status);
  check(status, path, "FLUX", "cannot write header");

  write_image(f.get(), path, "IVAR", FLOAT_IMG, TFLOAT, {nwave, nspec}, fr.ivar.data(),
              "Angstrom^2/electron^2");
  write_image(f.get(), path, "MASK", LONG_IMG, TUINT, {nwave, nspec}, fr.mask.data());
  write_image(f.get(), path, "WAVELENGTH", DOUBLE_IMG, TDOUBLE, {nwave}, fr.wavelength.data(),
              "Angstrom");
  write_image(f.get(), path, "RESOLUTION", FLOAT_IMG, TFLOAT, {nwave, nd, nspec},
              fr.resolution.data());
  if (!fr.fibermap_from.empty()) {
    fitsfile* src = nullptr;
    int st = 0;
    fits_open_file(&src, fr.fibermap_from.c_str(), READONLY, &st);
    check(st, fr.fibermap_from, "", "cannot open to copy FIBERMAP");
    FitsPtr srcp(src);
    if (fits_movnam_hdu(src, BINARY_TBL, const_cast<char*>("FIBERMAP"), 0, &st))
      throw InputError(fr.fibermap_from, "FIBERMAP", "HDU not found");
    fits_copy_hdu(src, f.get(), 0, &st);
    check(st, fr.fibermap_from, "FIBERMAP", "cannot copy into the frame");
  }
  write_image(f.get(), path, "CHI2PIX", FLOAT_IMG, TFLOAT, {nwave, nspec}, fr.chi2pix.data());
  if (!fr.model.empty())
    write_image(f.get(), path, "MODEL", FLOAT_IMG, TFLOAT, {long(fr.model_nx), long(fr.model_ny)},
                fr.model.data(), "electron");
  fits_write_chksum(f.get(), &status);
  fits_close_file(f.release(), &status);
  check(status, path, "", "cannot finish writing");
  out.commit();
}

void write_model_image(std::string const& path, int nx, int ny, std::vector<float> const& model,
                       std::vector<std::pair<std::string, std::string>> const& header) {
  if (model.size() != std::size_t(nx) * ny)
    throw ParameterError(path + ": model image has " + std::to_string(model.size()) +
                         " pixels, expected " + std::to_string(std::size_t(nx) * ny));
  AtomicOutput out(path);
  int status = 0;
  FitsPtr f = create_fits(out, status);
  check(status, path, "", "cannot create file");
  write_image(f.get(), path, "MODEL", FLOAT_IMG, TFLOAT, {long(nx), long(ny)}, model.data(),
              "electron");
  for (auto const& [key, value] : header)
    fits_update_key_longstr(f.get(), const_cast<char*>(key.c_str()),
                            const_cast<char*>(value.c_str()), nullptr, &status);
  fits_write_chksum(f.get(), &status);
  fits_close_file(f.release(), &status);
  check(status, path, "MODEL", "cannot finish writing");
  out.commit();
}

FrameData read_frame_fits(std::string const& path) {
  int status = 0;
  fitsfile* raw = nullptr;
  fits_open_file(&raw, path.c_str(), READONLY, &status);
  check(status, path, "", "cannot open");
  FitsPtr f(raw);
  FrameData fr;
  std::vector<long> ax;
  fr.flux = read_image<float>(f.get(), path, "FLUX", TFLOAT, ax);
  if (ax.size() != 2) throw InputError(path, "FLUX", "expected a 2-D image");
  fr.nwave = static_cast<int>(ax[0]);
  fr.nspec = static_cast<int>(ax[1]);
  // Integer keywords go through parse_integer, not CFITSIO's conversion (fits_support.hpp).
  if (auto const v = read_integer_key(f.get(), "SPECMIN");
      v && *v >= 0 && *v <= std::numeric_limits<int>::max())
    fr.specmin = static_cast<int>(*v);
  fr.ivar = read_image<float>(f.get(), path, "IVAR", TFLOAT, ax);
  fr.mask = read_image<std::uint32_t>(f.get(), path, "MASK", TUINT, ax);
  fr.wavelength = read_image<double>(f.get(), path, "WAVELENGTH", TDOUBLE, ax);
  fr.resolution = read_image<float>(f.get(), path, "RESOLUTION", TFLOAT, ax);
  if (ax.size() == 3) fr.ndiag = static_cast<int>((ax[1] - 1) / 2);
  fr.chi2pix = read_image<float>(f.get(), path, "CHI2PIX", TFLOAT, ax);
  if (fits_movnam_hdu(f.get(), BINARY_TBL, const_cast<char*>("FIBERMAP"), 0, &status) == 0)
    fr.fibermap_from = path;
  status = 0;
  fits_clear_errmsg();
  if (fits_movnam_hdu(f.get(), IMAGE_HDU, const_cast<char*>("MODEL"), 0, &status) == 0) {
    fr.model = read_image<float>(f.get(), path, "MODEL", TFLOAT, ax);
    fr.model_nx = static_cast<int>(ax[0]);
    fr.model_ny = static_cast<int>(ax[1]);
  }
  fits_clear_errmsg();
  return fr;
}

}  // namespace kspecter::io
