// FITS frames (desispec layout) through the FITS layer (fits_file.hpp).
#include "fits_file.hpp"
#include "frame_formats.hpp"

#include <kspecter/core/error.hpp>

#include <limits>

namespace kspecter::io {

namespace {

// The keys every frame carries, from its own sizes, where the caller did not set them.
FitsHeader flux_header(FrameData const& fr) {
  FitsHeader h = fr.header;
  if (!h.has("BUNIT")) h.set_string("BUNIT", "electron/Angstrom");
  if (!h.has("NSPEC")) h.set_integer("NSPEC", fr.nspec, "Number of spectra");
  if (!h.has("SPECMIN")) h.set_integer("SPECMIN", fr.specmin, "first spectrum");
  if (!h.has("SPECMAX")) h.set_integer("SPECMAX", fr.specmin + fr.nspec - 1, "last spectrum");
  if (!fr.wavelength.empty()) {
    double const w0 = fr.wavelength.front(), w1 = fr.wavelength.back();
    double const dw = fr.wavelength.size() > 1 ? (w1 - w0) / double(fr.wavelength.size() - 1) : 0;
    if (!h.has("WAVEMIN")) h.set_number("WAVEMIN", w0, "First wavelength [Angstroms]");
    if (!h.has("WAVEMAX")) h.set_number("WAVEMAX", w1, "Last wavelength [Angstroms]");
    if (!h.has("WAVESTEP")) h.set_number("WAVESTEP", dw, "Wavelength step size [Angstroms]");
  }
  return h;
}

void write_scores(FitsWriter& w, std::vector<ScoreColumn> const& scores, long long nspec) {
  std::vector<char const*> names, forms;
  for (auto const& c : scores) {
    if (static_cast<long long>(c.values.size()) != nspec)
      throw ParameterError(w.path() + ": score " + c.name + " has " +
                           std::to_string(c.values.size()) + " values for " +
                           std::to_string(nspec) + " spectra");
    names.push_back(c.name.c_str());
    forms.push_back("D");
  }
  fitsfile* f = w.get();
  int status = 0;
  fits_create_tbl(f, BINARY_TBL, 0, static_cast<int>(scores.size()),
                  const_cast<char**>(names.data()), const_cast<char**>(forms.data()), nullptr,
                  const_cast<char*>("SCORES"), &status);
  for (std::size_t i = 0; i < scores.size(); ++i) {
    std::string const key = "TTYPE" + std::to_string(i + 1);
    if (!scores[i].comment.empty())
      fits_modify_comment(f, key.c_str(), const_cast<char*>(scores[i].comment.c_str()), &status);
    if (nspec > 0)
      fits_write_col(f, TDOUBLE, int(i) + 1, 1, 1, nspec,
                     const_cast<double*>(scores[i].values.data()), &status);
  }
  w.check(status, "SCORES", "write the table");
}

template <class T>
std::vector<T> read_image(FitsReader& r, char const* extname, int datatype,
                          std::vector<long>& axes) {
  r.move_to(extname, IMAGE_HDU);
  axes = r.image_shape();
  long long n = axes.empty() ? 0 : 1;
  for (long a : axes) n *= a;
  std::vector<T> out(static_cast<std::size_t>(n));
  r.read_pixels<T>(datatype, n, [&](long long i, T v) { out[std::size_t(i)] = v; });
  return out;
}

std::vector<ScoreColumn> read_scores(FitsReader& r) {
  r.move_to("SCORES", BINARY_TBL);
  fitsfile* f = r.get();
  int status = 0, ncols = 0;
  long long nrows = 0;
  fits_get_num_cols(f, &ncols, &status);
  fits_get_num_rowsll(f, &nrows, &status);
  r.check(status, "cannot read the table's size");
  std::vector<ScoreColumn> out(static_cast<std::size_t>(std::max(ncols, 0)));
  for (int c = 0; c < ncols; ++c) {
    std::string const key = "TTYPE" + std::to_string(c + 1);
    out[std::size_t(c)].name = r.key_string(key.c_str()).value_or("");
    char comment[FLEN_COMMENT] = {0}, value[FLEN_VALUE] = {0};
    fits_read_keyword(f, key.c_str(), value, comment, &status);
    out[std::size_t(c)].comment = comment;
    auto& v = out[std::size_t(c)].values;
    v.resize(static_cast<std::size_t>(nrows));
    int anynul = 0;
    if (nrows > 0)
      fits_read_col(f, TDOUBLE, c + 1, 1, 1, nrows, nullptr, v.data(), &anynul, &status);
    r.check(status, "cannot read column " + out[std::size_t(c)].name);
  }
  return out;
}

}  // namespace

void write_frame_fits(std::string const& path, FrameData const& fr) {
  FitsWriter w(path);
  long const nspec = fr.nspec, nwave = fr.nwave, nd = 2 * fr.ndiag + 1;
  // Primary HDU: FLUX, with the frame's header.
  w.image("FLUX", FLOAT_IMG, TFLOAT, {nwave, nspec}, fr.flux.data());
  w.records(flux_header(fr), "FLUX");
  w.image("IVAR", FLOAT_IMG, TFLOAT, {nwave, nspec}, fr.ivar.data());
  // uint32 as desispec writes it: BITPIX 32 with BZERO 2^31.
  w.image("MASK", ULONG_IMG, TUINT, {nwave, nspec}, fr.mask.data());
  w.image("WAVELENGTH", DOUBLE_IMG, TDOUBLE, {nwave}, fr.wavelength.data(), "Angstrom");
  w.image("RESOLUTION", FLOAT_IMG, TFLOAT, {nwave, nd, nspec}, fr.resolution.data());
  if (fr.fibermap) w.table(*fr.fibermap);
  w.image("CHI2PIX", FLOAT_IMG, TFLOAT, {nwave, nspec}, fr.chi2pix.data());
  if (!fr.scores.empty()) write_scores(w, fr.scores, nspec);
  if (!fr.model.empty())
    w.image("MODEL", FLOAT_IMG, TFLOAT, {long(fr.model_nx), long(fr.model_ny)}, fr.model.data(),
            "electron");
  w.commit();
}

void write_model_image(std::string const& path, int nx, int ny, std::vector<float> const& model,
                       FitsHeader const& header) {
  if (model.size() != std::size_t(nx) * std::size_t(ny))
    throw ParameterError(path + ": model image has " + std::to_string(model.size()) +
                         " pixels, expected " + std::to_string(std::size_t(nx) * ny));
  FitsWriter w(path);
  w.image("MODEL", FLOAT_IMG, TFLOAT, {long(nx), long(ny)}, model.data());
  FitsHeader h = header;
  h.set_string("BUNIT", "electron");
  w.records(h, "MODEL");
  w.commit();
}

FrameData read_frame_fits(std::string const& path) {
  FitsReader r(path);
  FrameData fr;
  std::vector<long> ax;
  fr.flux = read_image<float>(r, "FLUX", TFLOAT, ax);
  if (ax.size() != 2) r.fail("expected a 2-D image");
  fr.nwave = static_cast<int>(ax[0]);
  fr.nspec = static_cast<int>(ax[1]);
  fr.header = r.header();
  if (auto const v = r.key_integer("SPECMIN");
      v && *v >= 0 && *v <= std::numeric_limits<int>::max())
    fr.specmin = static_cast<int>(*v);
  fr.ivar = read_image<float>(r, "IVAR", TFLOAT, ax);
  fr.mask = read_image<std::uint32_t>(r, "MASK", TUINT, ax);
  fr.wavelength = read_image<double>(r, "WAVELENGTH", TDOUBLE, ax);
  fr.resolution = read_image<float>(r, "RESOLUTION", TFLOAT, ax);
  if (ax.size() == 3) fr.ndiag = static_cast<int>((ax[1] - 1) / 2);
  fr.chi2pix = read_image<float>(r, "CHI2PIX", TFLOAT, ax);
  if (r.has("FIBERMAP")) {
    r.move_to("FIBERMAP", BINARY_TBL);
    fr.fibermap = r.table();
  }
  if (r.has("SCORES")) fr.scores = read_scores(r);
  if (r.has("MODEL")) {
    fr.model = read_image<float>(r, "MODEL", TFLOAT, ax);
    if (ax.size() != 2) r.fail("expected a 2-D image");
    fr.model_nx = static_cast<int>(ax[0]);
    fr.model_ny = static_cast<int>(ax[1]);
  }
  return fr;
}

}  // namespace kspecter::io
