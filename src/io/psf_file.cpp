// Reading and writing GaussHermite PSF files with CFITSIO. Every CFITSIO failure is turned
// into an InputError naming the file, the HDU being read and CFITSIO's own words.
#include "fits_file.hpp"

#include <kspecter/core/error.hpp>
#include <kspecter/io/psf_file.hpp>

#include <fitsio.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace kspecter::io {
namespace {

using psf::GaussHermitePsf;
using psf::LegendreSet;

/// Integer keyword `key` of the current HDU as an int (missing: nullopt).
std::optional<long> key_int(FitsReader const& r, char const* key) {
  auto const v = r.key_integer(key);
  if (!v) return std::nullopt;
  if (*v < -2147483647LL || *v > 2147483647LL)
    r.fail(std::string("keyword ") + key + " = " + std::to_string(*v) + " is not an int");
  return static_cast<long>(*v);
}
long need_int(FitsReader const& r, char const* key) {
  auto const v = key_int(r, key);
  if (!v) r.fail(std::string("keyword ") + key + " is missing");
  return *v;
}

/// The current image HDU as a Legendre set [nfiber][ncoef] with its WAVEMIN/WAVEMAX.
LegendreSet legendre_image(FitsReader const& r) {
  auto const naxes = r.image_shape();
  if (naxes.size() != 2)
    r.fail("expected a 2-D image [nfiber, ncoef], found " + std::to_string(naxes.size()) + " axes");
  if (naxes[0] < 1 || naxes[1] < 1)
    r.fail("empty image (" + std::to_string(naxes[1]) + " x " + std::to_string(naxes[0]) + ")");
  if (naxes[0] > 1000 || naxes[1] > 100000)
    r.fail("implausible image size " + std::to_string(naxes[1]) + " fibers x " +
           std::to_string(naxes[0]) + " coefficients");
  LegendreSet s;
  s.ncoef = static_cast<int>(naxes[0]);
  s.nfiber = static_cast<int>(naxes[1]);
  s.wavemin = r.need_double("WAVEMIN");
  s.wavemax = r.need_double("WAVEMAX");
  if (!(s.wavemin < s.wavemax))
    r.fail("WAVEMIN " + std::to_string(s.wavemin) + " is not below WAVEMAX " +
           std::to_string(s.wavemax));
  s.coeff.resize(std::size_t(s.nfiber) * s.ncoef);
  r.read_pixels<double>(TDOUBLE, static_cast<long long>(s.coeff.size()),
                        [&](long long i, double v) { s.coeff[std::size_t(i)] = v; });
  for (std::size_t i = 0; i < s.coeff.size(); ++i)
    if (!std::isfinite(s.coeff[i]))
      r.fail("coefficient " + std::to_string(i % s.ncoef) + " of fiber " +
             std::to_string(i / s.ncoef) + " is not finite");
  return s;
}

bool parse_gh(std::string const& name, int& i, int& j) {
  char tail = 0;
  return name.rfind("GH-", 0) == 0 && std::sscanf(name.c_str(), "GH-%d-%d%c", &i, &j, &tail) == 2 &&
         i >= 0 && j >= 0;
}

}  // namespace

namespace {
psf::GaussHermitePsf read_psf_file(std::string const& path, PsfKeywords* keywords);
}  // namespace

psf::GaussHermitePsf read_psf(std::string const& path, PsfKeywords* keywords) {
  return reading_file(path, [&] { return read_psf_file(path, keywords); });
}

namespace {
psf::GaussHermitePsf read_psf_file(std::string const& path, PsfKeywords* keywords) {
  FitsReader r(path);
  GaussHermitePsf psf;

  // Primary header: if it declares a PSF type, it must be ours.
  r.move_to_primary();
  if (auto t = r.key_string("PSFTYPE"); t && *t != "GAUSS-HERMITE")
    r.fail("PSFTYPE is '" + *t + "', expected 'GAUSS-HERMITE'");
  std::optional<std::string> camera;
  if (keywords) camera = r.key_string("CAMERA");

  r.move_to("XTRACE", IMAGE_HDU);
  psf.xtrace = legendre_image(r);
  std::optional<long> const xfibermin = key_int(r, "FIBERMIN");
  r.move_to("YTRACE", IMAGE_HDU);
  psf.ytrace = legendre_image(r);
  if (psf.ytrace.nfiber != psf.xtrace.nfiber)
    r.fail("has " + std::to_string(psf.ytrace.nfiber) + " fibers but XTRACE has " +
           std::to_string(psf.xtrace.nfiber));
  psf.nfiber = psf.xtrace.nfiber;

  r.move_to("PSF", BINARY_TBL);
  {
    auto const t = r.key_string("PSFTYPE");
    if (!t) r.fail("keyword PSFTYPE is missing");
    if (*t != "GAUSS-HERMITE") r.fail("PSFTYPE is '" + *t + "', expected 'GAUSS-HERMITE'");
    auto const v = r.key_value("PSFVER");
    if (!v) r.fail("keyword PSFVER is missing");
    char* end = nullptr;
    double const ver = std::strtod(v->c_str(), &end);
    if (end == v->c_str() || !std::isfinite(ver))
      r.fail("PSFVER '" + *v + "' is not a version number");
    if (ver < 3)
      r.fail("PSFVER " + *v +
             " is an older layout (traces inside the PSF table); only PSFVER 3 "
             "(XTRACE and YTRACE HDUs) is supported");
  }
  long const legdeg = need_int(r, "LEGDEG");
  long const ghdegx = need_int(r, "GHDEGX"), ghdegy = need_int(r, "GHDEGY");
  long const hsizex = need_int(r, "HSIZEX"), hsizey = need_int(r, "HSIZEY");
  long const npix_x = need_int(r, "NPIX_X"), npix_y = need_int(r, "NPIX_Y");
  double const wavemin = r.need_double("WAVEMIN"), wavemax = r.need_double("WAVEMAX");
  if (!(wavemin < wavemax))
    r.fail("WAVEMIN " + std::to_string(wavemin) + " is not below WAVEMAX " +
           std::to_string(wavemax));
  if (legdeg < 0 || legdeg > 100) r.fail("LEGDEG " + std::to_string(legdeg) + " is out of range");
  if (ghdegx < 0 || ghdegy < 0 || ghdegx > psf::max_gh_degree || ghdegy > psf::max_gh_degree)
    r.fail("GHDEGX " + std::to_string(ghdegx) + ", GHDEGY " + std::to_string(ghdegy) +
           " are outside [0, " + std::to_string(psf::max_gh_degree) + "]");
  if (hsizex < 0 || hsizey < 0 || hsizex > psf::max_half_size || hsizey > psf::max_half_size)
    r.fail("HSIZEX " + std::to_string(hsizex) + ", HSIZEY " + std::to_string(hsizey) +
           " are outside [0, " + std::to_string(psf::max_half_size) + "]");
  if (npix_x < 1 || npix_y < 1)
    r.fail("NPIX_X " + std::to_string(npix_x) + ", NPIX_Y " + std::to_string(npix_y) +
           " are not a CCD size");
  std::optional<long> const fibermin = key_int(r, "FIBERMIN");
  std::optional<long> const fibermax = key_int(r, "FIBERMAX");
  if (fibermin && fibermax && *fibermax - *fibermin + 1 != psf.nfiber)
    r.fail("FIBERMIN " + std::to_string(*fibermin) + " .. FIBERMAX " + std::to_string(*fibermax) +
           " do not match the " + std::to_string(psf.nfiber) + " fibers of XTRACE");
  long const first_fiber = fibermin ? *fibermin : (xfibermin ? *xfibermin : 0);
  // Fiber numbers are ints everywhere downstream (fibermin + nfiber - 1 included).
  if (first_fiber < 0 || first_fiber > std::numeric_limits<int>::max() - psf.nfiber + 1L)
    r.fail("FIBERMIN " + std::to_string(first_fiber) + " is not the number of a first fiber");
  psf.fibermin = static_cast<int>(first_fiber);
  psf.psferr = r.key_double("PSFERR").value_or(0.01);
  if (keywords) {
    if (!camera) camera = r.key_string("CAMERA");
    keywords->camera = camera;
    keywords->in_psf = r.key_string("IN_PSF");
  }
  psf.npix_x = static_cast<int>(npix_x);
  psf.npix_y = static_cast<int>(npix_y);
  psf.hsizex = static_cast<int>(hsizex);
  psf.hsizey = static_cast<int>(hsizey);
  psf.ghdegx = static_cast<int>(ghdegx);
  psf.ghdegy = static_cast<int>(ghdegy);

  // Columns.
  fitsfile* const f = r.get();
  int st = 0;
  auto column = [&](char const* name) {
    int col = 0;
    fits_get_colnum(f, CASEINSEN, const_cast<char*>(name), &col, &st);
    if (st == COL_NOT_FOUND) {
      st = 0;
      fits_clear_errmsg();
      r.fail(std::string("column ") + name + " is missing");
    }
    r.check(st, std::string("cannot find column ") + name);
    return col;
  };
  int const cparam = column("PARAM");
  int const ccoeff = column("COEFF");
  int tparam = 0, tcoeff = 0;
  long rparam = 0, rcoeff = 0, wparam = 0, wcoeff = 0;
  r.check(fits_get_coltype(f, cparam, &tparam, &rparam, &wparam, &st), "column PARAM");
  r.check(fits_get_coltype(f, ccoeff, &tcoeff, &rcoeff, &wcoeff, &st), "column COEFF");
  if (tparam != TSTRING) r.fail("column PARAM is not a character column");
  if (tcoeff == TSTRING || tcoeff == TLOGICAL || tcoeff == TBIT || tcoeff == TCOMPLEX ||
      tcoeff == TDBLCOMPLEX || tcoeff < 0)
    r.fail("column COEFF is not a real-valued column");
  long const ncoef = legdeg + 1;
  if (rcoeff != psf.nfiber * ncoef)
    r.fail("column COEFF holds " + std::to_string(rcoeff) + " values per row, expected " +
           std::to_string(psf.nfiber) + " fibers x " + std::to_string(ncoef) +
           " coefficients (LEGDEG " + std::to_string(legdeg) + ")");
  {
    int naxis = 0;
    long naxes[4] = {0, 0, 0, 0};
    r.check(fits_read_tdim(f, ccoeff, 4, &naxis, naxes, &st), "cannot read TDIM of COEFF");
    bool const ok = (naxis == 1 && naxes[0] == rcoeff) ||
                    (naxis == 2 && naxes[0] == ncoef && naxes[1] == psf.nfiber);
    if (!ok)
      r.fail("column COEFF has dimensions (" + std::to_string(naxes[0]) +
             (naxis > 1 ? ", " + std::to_string(naxes[1]) : std::string()) + "), expected (" +
             std::to_string(ncoef) + ", " + std::to_string(psf.nfiber) + ")");
  }
  long nrows = 0;
  r.check(fits_get_num_rows(f, &nrows, &st), "cannot count the rows");
  if (nrows < 1 || nrows > 10000) r.fail("has " + std::to_string(nrows) + " rows");

  std::vector<std::vector<char>> nbuf(nrows, std::vector<char>(std::max(wparam, 1L) + 1, 0));
  std::vector<char*> nptr(nrows);
  for (long i = 0; i < nrows; ++i) nptr[i] = nbuf[i].data();
  int anynul = 0;
  r.check(fits_read_col(f, TSTRING, cparam, 1, 1, nrows, nullptr, nptr.data(), &anynul, &st),
          "cannot read column PARAM (truncated file?)");
  std::vector<double> coeff(std::size_t(nrows) * rcoeff);
  r.check(fits_read_col(f, TDOUBLE, ccoeff, 1, 1, static_cast<LONGLONG>(coeff.size()), nullptr,
                        coeff.data(), &anynul, &st),
          "cannot read column COEFF (truncated file?)");

  std::set<std::string> seen;
  for (long row = 0; row < nrows; ++row) {
    std::string name = nptr[row];
    while (!name.empty() && name.back() == ' ') name.pop_back();
    std::string const where = "row " + std::to_string(row + 1) + " (" + name + ")";
    if (name.empty()) r.fail(where + ": empty PARAM");
    if (!seen.insert(name).second) r.fail("parameter " + name + " appears twice");
    LegendreSet s;
    s.wavemin = wavemin;
    s.wavemax = wavemax;
    s.nfiber = psf.nfiber;
    s.ncoef = static_cast<int>(ncoef);
    s.coeff.assign(coeff.begin() + row * rcoeff, coeff.begin() + (row + 1) * rcoeff);
    for (std::size_t i = 0; i < s.coeff.size(); ++i)
      if (!std::isfinite(s.coeff[i]))
        r.fail("COEFF of " + where + ": coefficient " + std::to_string(i % ncoef) + " of fiber " +
               std::to_string(i / ncoef) + " is not finite");
    int gi = 0, gj = 0;
    if (name.rfind("GH-", 0) == 0) {
      if (!parse_gh(name, gi, gj)) r.fail(where + ": not of the form GH-i-j");
      if (gi > ghdegx || gj > ghdegy)
        r.fail(where + " exceeds the degrees GHDEGX " + std::to_string(ghdegx) + ", GHDEGY " +
               std::to_string(ghdegy));
    }
    psf.param_names.push_back(name);
    psf.params.push_back(std::move(s));
  }
  for (char const* n : {"GHSIGX", "GHSIGY"})
    if (!seen.count(n)) r.fail(std::string("parameter ") + n + " is missing");
  for (long i = 0; i <= ghdegx; ++i)
    for (long j = 0; j <= ghdegy; ++j)
      if (!seen.count("GH-" + std::to_string(i) + "-" + std::to_string(j)))
        r.fail("parameter GH-" + std::to_string(i) + "-" + std::to_string(j) +
               " is missing (GHDEGX " + std::to_string(ghdegx) + ", GHDEGY " +
               std::to_string(ghdegy) + ")");

  // What remains (spot widths > 0, tails complete, ranges overlapping) concerns the table.
  std::string const problem = psf::check_psf(psf);
  if (!problem.empty()) r.fail(problem);
  return psf;
}
}  // namespace

namespace {

void write_trace(FitsWriter& w, LegendreSet const& s, char const* name, GaussHermitePsf const& psf,
                 bool primary) {
  fitsfile* f = w.get();
  int st = 0;
  long naxes[2] = {s.ncoef, s.nfiber};
  w.check(fits_create_img(f, DOUBLE_IMG, 2, naxes, &st), name, "create the image");
  long fpixel[2] = {1, 1};
  w.check(fits_write_pix(f, TDOUBLE, fpixel, static_cast<LONGLONG>(s.coeff.size()),
                         const_cast<double*>(s.coeff.data()), &st),
          name, "write the image");
  int fibermin = psf.fibermin, fibermax = psf.fibermin + psf.nfiber - 1, psfver = 3;
  double wmin = s.wavemin, wmax = s.wavemax;
  fits_update_key(f, TSTRING, "EXTNAME", const_cast<char*>(name), nullptr, &st);
  fits_update_key(f, TINT, "FIBERMIN", &fibermin, "first fiber (starting at 0)", &st);
  fits_update_key(f, TINT, "FIBERMAX", &fibermax, "last fiber (included)", &st);
  fits_update_key(f, TDOUBLE, "WAVEMIN", &wmin, "minimum wavelength (A) of the Legendre range",
                  &st);
  fits_update_key(f, TDOUBLE, "WAVEMAX", &wmax, "maximum wavelength (A) of the Legendre range",
                  &st);
  if (primary) {
    fits_update_key(f, TSTRING, "PSFTYPE", const_cast<char*>("GAUSS-HERMITE"), nullptr, &st);
    fits_update_key(f, TINT, "PSFVER", &psfver, nullptr, &st);
  }
  w.check(st, name, "write the header");
}

}  // namespace

void write_psf(std::string const& path, psf::GaussHermitePsf const& psf) {
  std::string const problem = psf::check_psf(psf);
  if (!problem.empty())
    throw ParameterError(path + ": cannot write an inconsistent PSF: " + problem);
  for (auto const& n : psf.param_names)
    if (n.size() > 8 || n.empty())
      throw ParameterError(path + ": parameter name '" + n + "' does not fit PARAM (8A)");

  FitsWriter w(path);
  write_trace(w, psf.xtrace, "XTRACE", psf, true);
  write_trace(w, psf.ytrace, "YTRACE", psf, false);

  fitsfile* f = w.get();
  int st = 0;
  int const nrows = static_cast<int>(psf.params.size());
  int const ncoef = psf.params[0].ncoef;
  std::string const coeff_form = std::to_string(std::size_t(psf.nfiber) * ncoef) + "D";
  char const* ttype[] = {"PARAM", "COEFF", "LEGDEGX", "LEGDEGW"};
  char const* tform[] = {"8A", coeff_form.c_str(), "J", "J"};
  w.check(fits_create_tbl(f, BINARY_TBL, nrows, 4, const_cast<char**>(ttype),
                          const_cast<char**>(tform), nullptr, const_cast<char*>("PSF"), &st),
          "PSF", "create the table");
  long tdim[2] = {ncoef, psf.nfiber};
  w.check(fits_write_tdim(f, 2, 2, tdim, &st), "PSF", "write TDIM2");
  std::vector<char*> names;
  for (auto const& n : psf.param_names) names.push_back(const_cast<char*>(n.c_str()));
  w.check(fits_write_col(f, TSTRING, 1, 1, 1, nrows, names.data(), &st), "PSF", "write PARAM");
  std::vector<double> coeff;
  coeff.reserve(std::size_t(nrows) * psf.nfiber * ncoef);
  for (auto const& p : psf.params) coeff.insert(coeff.end(), p.coeff.begin(), p.coeff.end());
  w.check(
      fits_write_col(f, TDOUBLE, 2, 1, 1, static_cast<LONGLONG>(coeff.size()), coeff.data(), &st),
      "PSF", "write COEFF");
  // Legendre degree in fiber number (specex's fit; informational) and in wavelength.
  std::vector<int> degx(nrows, 0), degw(nrows, ncoef - 1);
  w.check(fits_write_col(f, TINT, 3, 1, 1, nrows, degx.data(), &st), "PSF", "write LEGDEGX");
  w.check(fits_write_col(f, TINT, 4, 1, 1, nrows, degw.data(), &st), "PSF", "write LEGDEGW");

  int npix_x = psf.npix_x, npix_y = psf.npix_y, hsizex = psf.hsizex, hsizey = psf.hsizey;
  int fibermin = psf.fibermin, fibermax = psf.fibermin + psf.nfiber - 1, nparams = nrows;
  int legdeg = ncoef - 1, ghdegx = psf.ghdegx, ghdegy = psf.ghdegy;
  double wmin = psf.params[0].wavemin, wmax = psf.params[0].wavemax, psferr = psf.psferr;
  fits_update_key(f, TSTRING, "PSFTYPE", const_cast<char*>("GAUSS-HERMITE"), nullptr, &st);
  fits_update_key(f, TSTRING, "PSFVER", const_cast<char*>("3"), nullptr, &st);
  fits_update_key(f, TINT, "NPIX_X", &npix_x, "number of columns in input CCD image", &st);
  fits_update_key(f, TINT, "NPIX_Y", &npix_y, "number of rows in input CCD image", &st);
  fits_update_key(f, TINT, "HSIZEX", &hsizex, "Half size of PSF in fit, NX=2*HSIZEX+1", &st);
  fits_update_key(f, TINT, "HSIZEY", &hsizey, "Half size of PSF in fit, NY=2*HSIZEY+1", &st);
  fits_update_key(f, TINT, "FIBERMIN", &fibermin, "first fiber (starting at 0)", &st);
  fits_update_key(f, TINT, "FIBERMAX", &fibermax, "last fiber (included)", &st);
  fits_update_key(f, TINT, "NPARAMS", &nparams, "number of PSF parameters", &st);
  fits_update_key(f, TINT, "LEGDEG", &legdeg, "degree of Legendre pol.(wave) for parameters", &st);
  fits_update_key(f, TINT, "GHDEGX", &ghdegx, "degree of Hermite polynomial along CCD columns",
                  &st);
  fits_update_key(f, TINT, "GHDEGY", &ghdegy, "degree of Hermite polynomial along CCD rows", &st);
  fits_update_key(f, TDOUBLE, "WAVEMIN", &wmin, "minimum wavelength (A), used for the Legendre p",
                  &st);
  fits_update_key(f, TDOUBLE, "WAVEMAX", &wmax, "maximum wavelength (A), used for the Legendre p",
                  &st);
  fits_update_key(f, TDOUBLE, "PSFERR", &psferr, "PSF fractional error used in chi2pix", &st);
  w.check(st, "PSF", "write the header");
  w.commit();
}

}  // namespace kspecter::io
