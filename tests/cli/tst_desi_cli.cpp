// `kspecter extract` as desi_extract_spectra: every option of desispec's scripts/extract.py
// parse() accepted with its meaning, and the frame it writes as desispec writes it: the
// image's header, the FIBERMAP rows of the extracted fibers (or fiber numbers alone), SCORES,
// BAD2DFIT by desispec's rule over the whole frame, the model image with the frame's header.
#include <kspecter/astro/barycentric.hpp>
#include <kspecter/extract/bad2dfit.hpp>
#include <kspecter/extract/frame_scores.hpp>
#include <kspecter/extract/mask_bits.hpp>
#include <kspecter/io/fits_table.hpp>
#include <kspecter/io/frame_file.hpp>
#include <kspecter/io/preproc_file.hpp>

#include <run_command.hpp>
#include <test_data.hpp>

#include <fitsio.h>
#include <gtest/gtest.h>

#include <unistd.h>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

namespace {

namespace io = kspecter::io;
using Result = kspecter::test::CommandResult;

Result run(std::string const& args) { return kspecter::test::run_kspecter(args); }

class DesiCli : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = std::filesystem::path(KSPECTER_TEST_BINARY_DIR) / "scratch" /
           ("desi_cli." + std::to_string(::getpid()));
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    auto r = run("make-psf -o " + psf() + " --nfiber 20 --ccd 200,400 -w 6000,6200");
    ASSERT_EQ(r.status, 0) << r.out;
    r = run("simulate -p " + psf() + " -o " + image() + " -w 6020,6180,0.8 --seed 5");
    ASSERT_EQ(r.status, 0) << r.out;
  }
  static void TearDownTestSuite() { std::filesystem::remove_all(dir_); }
  static std::string psf() { return (dir_ / "psf.fits").string(); }
  static std::string image() { return (dir_ / "preproc-r0-00000005.fits.gz").string(); }
  static std::string out(std::string const& name) { return (dir_ / name).string(); }
  // desi_extract_spectra's command line on the small inputs, two bundles of ten.
  static std::string extract(std::string const& output, std::string const& options = "") {
    return "extract -i " + image() + " -p " + psf() + " -o " + output +
           " --bundlesize 10 --nsubbundles 2 --no-truth " + options;
  }
  static std::filesystem::path dir_;
};
std::filesystem::path DesiCli::dir_;

std::vector<long long> fibers_of(io::FrameData const& fr) {
  return fr.fibermap ? io::integer_column(*fr.fibermap, "FIBER").value_or(std::vector<long long>{})
                     : std::vector<long long>{};
}

TEST_F(DesiCli, defaults_are_desispecs) {
  // -w omitted: the PSF's WAVEMIN..WAVEMAX at 0.8 A; -n omitted: every fiber from specmin.
  auto const r = run(extract(out("default.fits"), "-s 10"));
  ASSERT_EQ(r.status, 0) << r.out;
  auto const fr = io::read_frame(out("default.fits"));
  EXPECT_EQ(fr.nspec, 10);
  ASSERT_EQ(fr.nwave, 251);
  EXPECT_EQ(fr.wavelength.front(), 6000.0);
  EXPECT_NEAR(fr.wavelength.back(), 6200.0, 1e-9);
  EXPECT_EQ(fibers_of(fr), (std::vector<long long>{10, 11, 12, 13, 14, 15, 16, 17, 18, 19}));
  // The header: the preproc IMAGE header, then what desispec adds.
  auto const& h = fr.header;
  std::string const f = out("default.fits");
  EXPECT_EQ(h.get_string("FLAVOR", f, "FLUX"), "science");
  EXPECT_EQ(h.get_string("CAMERA", f, "FLUX"), "r0");
  EXPECT_EQ(h.get_integer("SIMSEED", f, "FLUX"), 5);
  EXPECT_EQ(h.get_integer("NSPEC", f, "FLUX"), 10);
  EXPECT_EQ(h.get_number("WAVEMIN", f, "FLUX"), 6000.0);
  EXPECT_EQ(h.get_number("WAVEMAX", f, "FLUX"), 6200.0);
  EXPECT_EQ(h.get_number("WAVESTEP", f, "FLUX"), 0.8);
  EXPECT_EQ(h.get_string("BUNIT", f, "FLUX"), "electron/Angstrom");
  EXPECT_EQ(h.get_string("IN_PSF", f, "FLUX"), psf());
  EXPECT_EQ(h.get_string("IN_IMG", f, "FLUX"), image());
  EXPECT_EQ(h.get_integer("FIBERMIN", f, "FLUX"), 10);
  EXPECT_EQ(h.get_string("DEPNAM00", f, "FLUX"), "kspecter");
  // The frame's version is the one --version prints (git describe included).
  auto const version = kspecter::test::run_kspecter("--version");
  EXPECT_EQ(version.out, "kspecter " + h.get_string("DEPVER00", f, "FLUX").value_or("?") + "\n");
  EXPECT_FALSE(h.has("HELIOCOR"));
  // SCORES as desispec computes them from the frame's own spectra (in double: the file's
  // float32 flux rounds them, hence the tolerance).
  ASSERT_EQ(fr.scores.size(), 3u);
  std::vector<double> flux(fr.flux.begin(), fr.flux.end()), ivar(fr.ivar.begin(), fr.ivar.end());
  auto const want = kspecter::extract::frame_scores(fr.wavelength, flux, ivar, fr.nspec);
  for (std::size_t c = 0; c < 3; ++c) {
    EXPECT_EQ(fr.scores[c].name, want[c].name);
    EXPECT_EQ(fr.scores[c].comment, want[c].comment);
    for (int s = 0; s < fr.nspec; ++s)
      EXPECT_NEAR(fr.scores[c].values[s], want[c].values[s],
                  1e-5 * (1 + std::abs(want[c].values[s])));
  }
  // BAD2DFIT: desispec's rule over the whole frame (the bits it sets, at least; kspecter
  // also flags failed patches).
  std::vector<double> chi2(fr.chi2pix.begin(), fr.chi2pix.end());
  auto const bad = kspecter::extract::chi2pix_bad2dfit(chi2, fr.nspec, fr.nwave);
  int flagged = 0;
  for (std::size_t i = 0; i < bad.size(); ++i)
    if (bad[i]) {
      ++flagged;
      EXPECT_TRUE(fr.mask[i] & kspecter::extract::specmask::BAD2DFIT) << i;
    }
  SCOPED_TRACE(flagged);
}

TEST_F(DesiCli, fibermap_rows_follow_specmin_and_nspec) {
  // -s 5 -n 5: five rows, those of fibers 5..9 (the image's FIBERMAP has 20).
  ASSERT_EQ(run(extract(out("s5.fits"), "-w 6020,6100,0.8 -s 5 -n 5")).status, 0);
  auto const fr = io::read_frame(out("s5.fits"));
  EXPECT_EQ(fr.nspec, 5);
  EXPECT_EQ(fibers_of(fr), (std::vector<long long>{5, 6, 7, 8, 9}));
  ASSERT_TRUE(fr.fibermap.has_value());
  EXPECT_EQ(fr.fibermap->nrows, 5);
  EXPECT_TRUE(fr.fibermap->header.has("TTYPE2"));  // the whole row, not only FIBER

  // -f FILE: that file's FIBERMAP; here a preproc of other fibers (PSF FIBERMIN 500).
  ASSERT_EQ(run("make-psf -o " + out("psf500.fits") +
                " --nfiber 20 --ccd 200,400 -w 6000,6200 --fibermin 500")
                .status,
            0);
  ASSERT_EQ(run("simulate -p " + out("psf500.fits") + " -o " + out("other.fits") +
                " -w 6020,6180,0.8 -n 20")
                .status,
            0);
  auto r = run(extract(out("f.fits"), "-w 6020,6100,0.8 -s 5 -n 5 -f " + out("other.fits")));
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_EQ(fibers_of(io::read_frame(out("f.fits"))),
            (std::vector<long long>{505, 506, 507, 508, 509}));

  // A FIBERMAP of the wrong length: refused, naming it.
  r = run(extract(out("short.fits"), "-w 6020,6100,0.8 -s 0 -n 20 -f " + out("s5.fits")));
  EXPECT_EQ(r.status, 1) << r.out;
  EXPECT_NE(r.out.find(out("s5.fits") + ": HDU 'FIBERMAP': has 5 rows"), std::string::npos)
      << r.out;
  EXPECT_FALSE(std::filesystem::exists(out("short.fits")));
}

TEST_F(DesiCli, no_fibermap_still_names_the_fibers) {
  // An image without FIBERMAP: the frame carries FIBER = the PSF's FIBERMIN + specmin ...
  ASSERT_EQ(run("make-psf -o " + out("psf500b.fits") +
                " --nfiber 20 --ccd 200,400 -w 6000,6200 --fibermin 500")
                .status,
            0);
  std::string const bare = out("bare.fits");
  {  // the preproc without its FIBERMAP
    fitsfile *in = nullptr, *o = nullptr;
    int st = 0, type = 0, nhdu = 0;
    std::string const src = out("sim500.fits");
    ASSERT_EQ(run("simulate -p " + out("psf500b.fits") + " -o " + src + " -w 6020,6180,0.8").status,
              0);
    fits_open_diskfile(&in, src.c_str(), READONLY, &st);
    fits_create_diskfile(&o, bare.c_str(), &st);
    fits_get_num_hdus(in, &nhdu, &st);
    for (int h = 1; h <= nhdu; ++h) {
      char name[FLEN_VALUE] = {0};
      fits_movabs_hdu(in, h, &type, &st);
      fits_read_key(in, TSTRING, "EXTNAME", name, nullptr, &st);
      if (std::string(name) != "FIBERMAP") fits_copy_hdu(in, o, 0, &st);
    }
    fits_close_file(in, &st);
    fits_close_file(o, &st);
    ASSERT_EQ(st, 0);
  }
  auto const r =
      run("extract -i " + bare + " -p " + out("psf500b.fits") + " -o " + out("bare_frame.fits") +
          " -w 6020,6100,0.8 -s 3 -n 4 --bundlesize 10 " + "--nsubbundles 2 --no-truth");
  ASSERT_EQ(r.status, 0) << r.out;
  auto const fr = io::read_frame(out("bare_frame.fits"));
  EXPECT_EQ(fibers_of(fr), (std::vector<long long>{503, 504, 505, 506}));
  EXPECT_EQ(fr.header.get_integer("FIBERMIN", "", ""), 503);
}

TEST_F(DesiCli, every_desi_extract_spectra_option_is_accepted) {
  // -v, --mpi, --no-scores, --psferr, --pixpad-frac, --wavepad-frac, --use-specter, --no-gpu,
  // -m, -r, --nwavestep: a frame, no SCORES.
  auto r = run(extract(out("opts.fits"),
                       "-w 6020,6100,0.8 -n 10 -v --mpi --no-scores --psferr 0.02 "
                       "--pixpad-frac 0.5 --wavepad-frac 0.3 --use-specter --no-gpu -r 0.1 "
                       "--nwavestep 40 -m " +
                           out("model.fits")));
  ASSERT_EQ(r.status, 0) << r.out;
  // -v: the debug log (stage times among it).
  EXPECT_NE(r.out.find("kspecter::extract::"), std::string::npos) << r.out;
  auto const fr = io::read_frame(out("opts.fits"));
  EXPECT_TRUE(fr.scores.empty());
  // The model image carries the frame's header.
  fitsfile* f = nullptr;
  int st = 0;
  char flavor[FLEN_VALUE] = {0}, bunit[FLEN_VALUE] = {0};
  long nspec = 0;
  fits_open_diskfile(&f, out("model.fits").c_str(), READONLY, &st);
  fits_read_key(f, TSTRING, "FLAVOR", flavor, nullptr, &st);
  fits_read_key(f, TLONG, "NSPEC", &nspec, nullptr, &st);
  fits_read_key(f, TSTRING, "BUNIT", bunit, nullptr, &st);
  fits_close_file(f, &st);
  EXPECT_EQ(st, 0);
  EXPECT_STREQ(flavor, "science");
  EXPECT_EQ(nspec, 10);
  EXPECT_STREQ(bunit, "electron");

  // --decorrelate-fibers: refused with gpu_specter's reason, before anything is read.
  r = run(extract(out("decorr.fits"), "--decorrelate-fibers"));
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("--decorrelate-fibers not implemented with gpu_specter"), std::string::npos)
      << r.out;
  // --no-gpu with a GPU backend named: contradictory.
  r = run(extract(out("nogpu.fits"), "--no-gpu --backend cuda"));
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("--no-gpu"), std::string::npos) << r.out;
  // .fits.gz output, as the name says.
  ASSERT_EQ(run(extract(out("frame.fits.gz"), "-w 6020,6100,0.8 -n 10")).status, 0);
  EXPECT_EQ(kspecter::test::file_bytes(out("frame.fits.gz")).substr(0, 2), "\x1f\x8b");
  EXPECT_EQ(io::read_frame(out("frame.fits.gz")).nspec, 10);
}

TEST_F(DesiCli, barycentric_correction_extracts_on_the_corrected_grid) {
  auto r = run(extract(out("bary.fits"), "-w 6020,6100,0.8 -n 10 --barycentric-correction"));
  ASSERT_EQ(r.status, 0) << r.out;
  auto const fr = io::read_frame(out("bary.fits"));
  std::string const f = out("bary.fits");
  // HELIOCOR: desispec's factor from the image header's pointing and the exposure's middle
  // (MJD-OBS + EXPTIME/2), seen from Kitt Peak.
  auto const h = io::read_preproc(image()).header;
  std::string const img = image();
  double const mjd = *h.get_number("MJD-OBS", img, "IMAGE") +
                     *h.get_number("EXPTIME", img, "IMAGE") / 2.0 / 3600.0 / 24.0;
  double const want = kspecter::astro::barycentric_factor(*h.get_number("TARGTRA", img, "IMAGE"),
                                                          *h.get_number("TARGTDEC", img, "IMAGE"),
                                                          mjd, kspecter::astro::kitt_peak());
  auto const heliocor = fr.header.get_number("HELIOCOR", f, "FLUX");
  ASSERT_TRUE(heliocor.has_value());
  EXPECT_DOUBLE_EQ(*heliocor, want);
  EXPECT_GT(std::abs(*heliocor - 1.0), 1e-6);  // tens of km/s: not a no-op
  // The frame keeps the grid asked for ...
  ASSERT_EQ(fr.nwave, 101);
  for (int i = 0; i < fr.nwave; ++i) EXPECT_NEAR(fr.wavelength[i], 6020.0 + 0.8 * i, 1e-9) << i;
  EXPECT_EQ(fr.header.get_number("WAVEMIN", f, "FLUX"), 6020.0);
  EXPECT_EQ(fr.header.get_number("WAVESTEP", f, "FLUX"), 0.8);
  // ... and holds the spectra extracted on that grid divided by the factor (desispec's
  // corrected_wavelength): the same bytes as an extraction asked for on that grid.
  char grid[128];
  std::snprintf(grid, sizeof grid, "%.17g,%.17g,%.17g", 6020.0 / *heliocor, 6100.0 / *heliocor,
                0.8 / *heliocor);
  r = run(extract(out("bary_ref.fits"), std::string("-n 10 -w ") + grid));
  ASSERT_EQ(r.status, 0) << r.out;
  auto const ref = io::read_frame(out("bary_ref.fits"));
  ASSERT_EQ(ref.nwave, fr.nwave);
  EXPECT_NEAR(ref.wavelength.front(), 6020.0 / *heliocor, 1e-9);
  EXPECT_EQ(ref.flux, fr.flux);
  EXPECT_EQ(ref.ivar, fr.ivar);
  // Not what the uncorrected grid gives.
  ASSERT_EQ(run(extract(out("bary_none.fits"), "-w 6020,6100,0.8 -n 10")).status, 0);
  EXPECT_NE(io::read_frame(out("bary_none.fits")).flux, fr.flux);
  // The PSF's whole range (-w omitted), shifted by the factor, leaves the PSF by a fraction
  // of a bin: extracted all the same (desispec extrapolates the PSF there).
  r = run(extract(out("bary_psf_grid.fits"), "-n 10 --barycentric-correction"));
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_EQ(io::read_frame(out("bary_psf_grid.fits")).nwave, 251);
}

TEST_F(DesiCli, psf_table_range_beyond_its_traces_is_the_default_grid) {
  // The r0 PSF of exposure 67784: the PSF table to 7827 A, XTRACE and YTRACE to 7826 A.
  // desispec's default grid is the table's, and the traces are extrapolated to its end.
  std::string const wide = out("psf_wide.fits");
  std::filesystem::copy_file(psf(), wide);
  fitsfile* f = nullptr;
  int st = 0;
  double wavemax = 6201.0;
  fits_open_diskfile(&f, wide.c_str(), READWRITE, &st);
  fits_movnam_hdu(f, BINARY_TBL, const_cast<char*>("PSF"), 0, &st);
  fits_update_key(f, TDOUBLE, "WAVEMAX", &wavemax, nullptr, &st);
  fits_close_file(f, &st);
  ASSERT_EQ(st, 0);
  auto const r = run("extract -i " + image() + " -p " + wide + " -o " + out("wide.fits") +
                     " -n 10 --bundlesize 10 --nsubbundles 2 --no-truth");
  ASSERT_EQ(r.status, 0) << r.out;
  auto const fr = io::read_frame(out("wide.fits"));
  ASSERT_EQ(fr.nwave, 252);  // arange(6000, 6201 + 0.4, 0.8)
  EXPECT_NEAR(fr.wavelength.back(), 6200.8, 1e-9);
  EXPECT_EQ(fr.header.get_number("WAVEMAX", "", ""), 6201.0);
}

TEST_F(DesiCli, image_and_psf_of_different_cameras_are_refused) {
  std::string const b1 = out("psf_b1.fits");
  std::filesystem::copy_file(psf(), b1);
  fitsfile* f = nullptr;
  int st = 0;
  fits_open_diskfile(&f, b1.c_str(), READWRITE, &st);
  fits_update_key(f, TSTRING, "CAMERA", const_cast<char*>("b1"), nullptr, &st);
  fits_close_file(f, &st);
  ASSERT_EQ(st, 0);
  auto const r = run("extract -i " + image() + " -p " + b1 + " -o " + out("cam.fits") +
                     " --bundlesize 10 --nsubbundles 2");
  EXPECT_EQ(r.status, 1) << r.out;
  EXPECT_NE(r.out.find(image() + ": HDU 'IMAGE': CAMERA is 'r0' but the PSF " + b1 +
                       " is of camera 'b1'"),
            std::string::npos)
      << r.out;
  EXPECT_FALSE(std::filesystem::exists(out("cam.fits")));
}

}  // namespace
