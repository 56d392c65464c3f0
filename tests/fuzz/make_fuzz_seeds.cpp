// Writes the seed corpus of the fuzz targets: small valid files from kspecter's own writers
// (and, for the preproc reader, one made with CFITSIO in the other layouts the reader accepts),
// so that the fuzzer starts from inputs that reach the end of each reader.
//
//   make_fuzz_seeds <dir>   writes <dir>/psf/*.fits and <dir>/preproc/*.fits
#include <kspecter/io/preproc_file.hpp>
#include <kspecter/io/psf_file.hpp>
#include <kspecter/psf/synthetic_psf.hpp>

#include <fitsio.h>

#include <cstdio>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

using namespace kspecter;

void psf_seeds(std::string const& dir) {
  psf::SyntheticPsfOptions o;  // two fibers, degrees 1, a 5 x 5 spot: ~17 kB
  o.nfiber = 2;
  o.bundlesize = 2;
  o.ghdegx = o.ghdegy = 1;
  o.hsizex = o.hsizey = 2;
  o.legdeg = 1;
  o.trace_ncoef = 2;
  io::write_psf(dir + "/small.fits", psf::make_synthetic_psf(o));
  o.nfiber = 1;  // with the tail parameters
  o.fibermin = 500;
  o.ghdegx = o.ghdegy = 0;
  o.tailamp = 0.01;
  io::write_psf(dir + "/tails.fits", psf::make_synthetic_psf(o));
}

io::PreprocImage small_image(int nx, int ny) {
  io::PreprocImage img;
  img.nx = nx;
  img.ny = ny;
  for (int i = 0; i < nx * ny; ++i) {
    img.image.push_back(0.5f * i);
    img.ivar.push_back(i % 5 == 0 ? 0.0f : 1.0f);
    img.mask.push_back(i % 5 == 0 ? io::ccdmask::cosmic : 0);
  }
  return img;
}

/// IMAGE as scaled 16-bit integers in an unnamed primary HDU, IVAR f8, MASK u8 (unsigned).
void preproc_other_layouts(std::string const& path) {
  std::remove(path.c_str());
  fitsfile* f = nullptr;
  int st = 0;
  long naxes[2] = {3, 2};
  std::vector<double> v = {1, 2, 3, 4, 5, 6};
  std::vector<unsigned char> m = {0, 1, 0, 0, 0, 128};
  double bscale = 0.5, bzero = 10;
  fits_create_diskfile(&f, path.c_str(), &st);
  fits_create_img(f, SHORT_IMG, 2, naxes, &st);
  fits_update_key(f, TDOUBLE, "BSCALE", &bscale, nullptr, &st);
  fits_update_key(f, TDOUBLE, "BZERO", &bzero, nullptr, &st);
  fits_set_bscale(f, bscale, bzero, &st);
  fits_write_img(f, TDOUBLE, 1, 6, v.data(), &st);
  fits_create_img(f, DOUBLE_IMG, 2, naxes, &st);
  fits_update_key(f, TSTRING, "EXTNAME", const_cast<char*>("IVAR"), nullptr, &st);
  fits_write_img(f, TDOUBLE, 1, 6, v.data(), &st);
  fits_create_img(f, BYTE_IMG, 2, naxes, &st);
  fits_update_key(f, TSTRING, "EXTNAME", const_cast<char*>("MASK"), nullptr, &st);
  fits_write_img(f, TBYTE, 1, 6, m.data(), &st);
  fits_close_file(f, &st);
  if (st) throw std::runtime_error(path + ": CFITSIO status " + std::to_string(st));
}

void preproc_seeds(std::string const& dir) {
  io::PreprocImage plain = small_image(4, 3);
  plain.header.set_string("CAMERA", "r0");
  io::write_preproc(dir + "/plain.fits", plain);
  io::TruthSpectra t;  // with TRUTH_FLUX, TRUTH_WAVE and a FIBERMAP
  t.specmin = 1;
  t.nspec = 2;
  t.wavelength = {5600, 5601, 5602};
  t.flux = {1, 2, 3, 4, 5, 6};
  t.objtype = {"SKY", "TGT"};
  t.fibermin = 500;
  io::write_preproc(dir + "/truth.fits", small_image(5, 2), &t);
  // As the DESI pipeline writes it: the whole file gzipped, MASK tile-compressed, the
  // exposure's keywords, a FIBERMAP.
  io::PreprocImage desi = small_image(5, 2);
  desi.header.set_string("CAMERA", "r0");
  desi.header.set_integer("EXPID", 67784);
  desi.header.set_number("EXPTIME", 900.0);
  desi.header.set_number("MJD-OBS", 59198.4452);
  desi.header.set_number("TARGTRA", 150.1);
  desi.header.set_number("TARGTDEC", 2.2);
  io::write_preproc(dir + "/desi.fits.gz", desi, &t);
  preproc_other_layouts(dir + "/layouts.fits");
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: make_fuzz_seeds <dir>\n");
    return 2;
  }
  namespace fs = std::filesystem;
  std::string const dir = argv[1];
  try {
    fs::create_directories(dir + "/psf");
    fs::create_directories(dir + "/preproc");
    psf_seeds(dir + "/psf");
    preproc_seeds(dir + "/preproc");
    // Each seed must be one the reader accepts, or the fuzzer starts from a refusal.
    for (auto const& e : fs::directory_iterator(dir + "/psf")) io::read_psf(e.path().string());
    for (auto const& e : fs::directory_iterator(dir + "/preproc")) {
      io::read_preproc(e.path().string());
      io::read_truth(e.path().string());
    }
  } catch (std::exception const& e) {
    std::fprintf(stderr, "make_fuzz_seeds: %s\n", e.what());
    return 1;
  }
  return 0;
}
