// What desispec puts around a frame's spectra, piece by piece: header records (typed values,
// long strings, desiutil.depend keywords), the frame header desi_extract_spectra writes,
// shortened file names, the pointing of the barycentric correction, the FIBERMAP rows of
// the extracted fibers, and the frame file itself (uint32 MASK, checksums in every HDU, the
// same bytes every time, gzip by name).
#include <kspecter/core/error.hpp>
#include <kspecter/io/desi_frame.hpp>
#include <kspecter/io/fits_header.hpp>
#include <kspecter/io/fits_table.hpp>
#include <kspecter/io/frame_file.hpp>

#include <test_data.hpp>

#include <fitsio.h>
#include <gtest/gtest.h>
#include <zlib.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

namespace {

namespace io = kspecter::io;
using kspecter::InputError;
using kspecter::ParameterError;
using kspecter::test::file_bytes;

// ------------------------------------------------------------------ header records

TEST(fits_header, typed_values_round_trip_and_replace_in_place) {
  io::FitsHeader h;
  h.set_string("CAMERA", "r0", "Spectrograph Camera");
  h.set_integer("EXPID", 67784);
  h.set_number("EXPTIME", 900.0);
  h.set_number("MJD-OBS", 59198.44520833333);
  h.set_logical("SIMPLE2", true);
  h.set_number("TINY", 1.5e-7);
  h.set_number("HUGE", -2e20);
  h.set_string("QUOTE", "it's");
  EXPECT_EQ(h.records().size(), 8u);
  EXPECT_EQ(h.value_text("TINY"), "1.5E-07");
  EXPECT_EQ(h.value_text("HUGE"), "-2.0E+20");
  EXPECT_EQ(h.get_number("TINY", "f", "h"), 1.5e-7);
  for (auto const& r : h.records()) EXPECT_EQ(r.size(), 80u) << r;
  EXPECT_EQ(h.records()[0].substr(0, 23), "CAMERA  = 'r0      ' / ");  // >= 8 characters
  EXPECT_EQ(h.records()[1].substr(0, 30), "EXPID   =                67784");
  EXPECT_EQ(h.records()[2].substr(0, 30), "EXPTIME =                900.0");
  EXPECT_EQ(h.get_string("CAMERA", "f", "IMAGE"), "r0");
  EXPECT_EQ(h.get_integer("EXPID", "f", "IMAGE"), 67784);
  EXPECT_EQ(h.get_number("MJD-OBS", "f", "IMAGE"), 59198.44520833333);  // shortest round trip
  EXPECT_EQ(h.get_number("EXPID", "f", "IMAGE"), 67784.0);              // an integer is a number
  EXPECT_EQ(h.get_string("QUOTE", "f", "IMAGE"), "it's");
  EXPECT_EQ(h.value_text("QUOTE"), "'it''s    '");  // padded to 8 characters
  // Replaced where it is; erased; absent.
  h.set_integer("CAMERA", 5);
  EXPECT_EQ(h.records()[0].substr(0, 10), "CAMERA  = ");
  EXPECT_EQ(h.get_integer("CAMERA", "f", "IMAGE"), 5);
  h.erase("EXPID");
  EXPECT_FALSE(h.has("EXPID"));
  EXPECT_EQ(h.get_number("NOPE", "f", "IMAGE"), std::nullopt);
  // Keys that are not FITS keywords, or that the writer sets itself.
  EXPECT_THROW(h.set_integer("NAXIS2", 3), ParameterError);
  EXPECT_THROW(h.set_string("EXTNAME", "X"), ParameterError);
  EXPECT_THROW(h.set_string("lower", "X"), ParameterError);
  EXPECT_THROW(h.set_string("TOOLONGKEY", "X"), ParameterError);
}

TEST(fits_header, wrong_types_name_file_hdu_and_key) {
  io::FitsHeader h;
  h.set_integer("CAMERA", 5);
  h.set_string("MJD-OBS", "yesterday");
  h.set_number("NSPEC", 2.5);
  auto expect = [&](auto call, std::string const& words) {
    try {
      call();
      ADD_FAILURE() << "accepted: " << words;
    } catch (InputError const& e) {
      EXPECT_EQ(e.file(), "pre.fits");
      EXPECT_EQ(e.hdu(), "IMAGE");
      EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
    }
  };
  expect([&] { h.get_string("CAMERA", "pre.fits", "IMAGE"); }, "CAMERA = 5 is not a string");
  expect([&] { h.get_number("MJD-OBS", "pre.fits", "IMAGE"); },
         "MJD-OBS = 'yesterday' is not a finite number");
  expect([&] { h.get_integer("NSPEC", "pre.fits", "IMAGE"); }, "NSPEC = 2.5 is not an integer");
}

TEST(fits_header, long_strings_continue_and_come_back_whole) {
  std::string const path = std::string(150, 'p') + "/psf-r0-00067784.fits";
  io::FitsHeader h;
  h.set_string("IN_PSF", path, "Input spectral PSF");
  h.set_integer("AFTER", 1);
  ASSERT_GT(h.records().size(), 3u);
  EXPECT_EQ(h.records()[1].substr(0, 10), "CONTINUE  ");
  EXPECT_EQ(h.get_string("IN_PSF", "f", "h"), path);
  h.set_string("IN_PSF", "short.fits");  // replaces every record of the long one
  EXPECT_EQ(h.records().size(), 2u);
  EXPECT_EQ(h.get_string("IN_PSF", "f", "h"), "short.fits");
  EXPECT_EQ(h.get_integer("AFTER", "f", "h"), 1);
}

TEST(fits_header, dependencies_as_desiutil_depend_records_them) {
  io::FitsHeader h;
  h.set_string("DEPNAM00", "python");
  h.set_string("DEPVER00", "3.11.2");
  h.set_string("DEPNAM01", "desispec");
  h.set_string("DEPVER01", "0.60");
  io::set_dependency(h, "kspecter", "0.1.0");  // the first free pair
  EXPECT_EQ(h.get_string("DEPNAM02", "f", "h"), "kspecter");
  EXPECT_EQ(h.get_string("DEPVER02", "f", "h"), "0.1.0");
  io::set_dependency(h, "desispec", "0.61");  // the pair that names it
  EXPECT_EQ(h.get_string("DEPVER01", "f", "h"), "0.61");
  EXPECT_FALSE(h.has("DEPNAM03"));
}

// ------------------------------------------------------------------ the frame's header

TEST(desi_frame, header_is_the_image_header_and_what_desispec_adds) {
  io::FitsHeader image;
  image.set_string("CAMERA", "r0");
  image.set_string("FLAVOR", "science");
  image.set_string("BUNIT", "electron");
  io::FrameProvenance p;
  p.nspec = 25;
  p.wavemin = 5760;
  p.wavemax = 7620;
  p.wavestep = 0.8;
  p.psf = "/data/psf-r0.fits";
  p.image = "/data/preproc-r0.fits.gz";
  p.orig_psf = "SPECPROD/calibnight/psfnight-r0.fits";
  p.heliocor = 1.0000123;
  p.fibermin = 500;
  auto const h = io::desi_frame_header(image, p);
  auto get = [&](char const* k) { return h.value_text(k).value_or("<absent>"); };
  EXPECT_EQ(h.get_string("FLAVOR", "", ""), "science");
  EXPECT_EQ(h.get_string("CAMERA", "", ""), "r0");
  EXPECT_EQ(h.get_string("BUNIT", "", ""), "electron/Angstrom");
  EXPECT_EQ(h.get_integer("NSPEC", "", ""), 25);
  EXPECT_EQ(h.get_number("WAVEMIN", "", ""), 5760);
  EXPECT_EQ(h.get_number("WAVEMAX", "", ""), 7620);
  EXPECT_EQ(h.get_number("WAVESTEP", "", ""), 0.8);
  EXPECT_EQ(h.get_number("HELIOCOR", "", ""), 1.0000123);
  EXPECT_EQ(h.get_string("IN_PSF", "", ""), "/data/psf-r0.fits");
  EXPECT_EQ(h.get_string("IN_IMG", "", ""), "/data/preproc-r0.fits.gz");
  EXPECT_EQ(h.get_string("ORIG_PSF", "", ""), "SPECPROD/calibnight/psfnight-r0.fits");
  EXPECT_EQ(h.get_integer("FIBERMIN", "", ""), 500);
  EXPECT_EQ(h.get_string("DEPNAM00", "", ""), "kspecter");
  EXPECT_NE(get("DEPVER00"), "<absent>");
  p.heliocor = 1.0;  // no correction: no HELIOCOR, as desispec
  p.orig_psf.reset();
  auto const h1 = io::desi_frame_header(image, p);
  EXPECT_FALSE(h1.has("HELIOCOR"));
  EXPECT_FALSE(h1.has("ORIG_PSF"));
}

TEST(desi_frame, file_names_shortened_as_desispec_shortens_them) {
  ::setenv("DESI_SPECTRO_CALIB", "/cal", 1);
  ::setenv("DESI_SPECTRO_REDUX", "/redux", 1);
  ::setenv("SPECPROD", "fuji", 1);
  ::unsetenv("DESI_ROOT");
  EXPECT_EQ(io::shorten_filename("/cal/psf.fits"), "SPCALIB/psf.fits");
  EXPECT_EQ(io::shorten_filename("/redux/fuji/preproc/p.fits"), "SPECPROD/preproc/p.fits");
  EXPECT_EQ(io::shorten_filename("/elsewhere/p.fits"), "/elsewhere/p.fits");
  ::setenv("SPECPROD", "/my/prod", 1);  // a path
  EXPECT_EQ(io::shorten_filename("/my/prod/x.fits"), "SPECPROD/x.fits");
  ::unsetenv("DESI_SPECTRO_REDUX");
  ::setenv("SPECPROD", "iron", 1);
  ::setenv("DESI_ROOT", "/desi", 1);
  EXPECT_EQ(io::shorten_filename("/desi/spectro/redux/iron/x.fits"), "SPECPROD/x.fits");
  for (char const* v : {"DESI_SPECTRO_CALIB", "SPECPROD", "DESI_ROOT"}) ::unsetenv(v);
  EXPECT_EQ(io::shorten_filename("/desi/spectro/redux/iron/x.fits"),
            "/desi/spectro/redux/iron/x.fits");
}

// ------------------------------------------------------------------ barycentric pointing

TEST(desi_frame, barycentric_pointing_follows_desispec_fallbacks) {
  io::FitsHeader h;
  h.set_number("RA", 10.0);
  h.set_number("DEC", -5.0);
  h.set_number("TELRA", 11.0);
  h.set_number("SKYDEC", -6.0);
  h.set_number("MJD", 59000.0);
  h.set_number("MJD-OBS", 59000.25);
  h.set_number("EXPTIME", 1200.0);
  auto p = io::barycentric_pointing(h, "pre.fits", nullptr);
  EXPECT_EQ(p.ra_key, "TELRA");  // TARGTRA, SKYRA, TELRA, RA: the first present
  EXPECT_EQ(p.ra_deg, 11.0);
  EXPECT_EQ(p.dec_key, "SKYDEC");
  EXPECT_EQ(p.dec_deg, -6.0);
  EXPECT_DOUBLE_EQ(p.mjd, 59000.25 + 600.0 / 86400.0);  // MJD-OBS before MJD, + EXPTIME/2
  h.set_number("TARGTRA", 12.0);
  h.set_number("TARGTDEC", -7.0);
  h.erase("MJD-OBS");
  h.erase("EXPTIME");
  p = io::barycentric_pointing(h, "pre.fits", nullptr);
  EXPECT_EQ(p.ra_deg, 12.0);
  EXPECT_EQ(p.dec_deg, -7.0);
  EXPECT_EQ(p.mjd, 59000.0);  // MJD; no EXPTIME: 0
  EXPECT_EQ(p.hdu, "IMAGE");

  // Neither RA nor TARGTRA in the image: the FIBERMAP's header (early commissioning).
  io::FitsHeader none;
  none.set_number("SKYRA", 1.0);  // desispec looks only for RA or TARGTRA to choose
  io::FitsTable fm = io::integer_table("FIBERMAP", "FIBER", {0, 1});
  fm.file = "fibermap.fits";
  fm.header.set_number("TARGTRA", 20.0);
  fm.header.set_number("TARGTDEC", 30.0);
  fm.header.set_number("MJD-OBS", 58800.5);
  p = io::barycentric_pointing(none, "pre.fits", &fm);
  EXPECT_EQ(p.file, "fibermap.fits");
  EXPECT_EQ(p.hdu, "FIBERMAP");
  EXPECT_EQ(p.ra_deg, 20.0);
  // Nowhere, or missing pieces, or wrong types: errors naming where.
  EXPECT_THROW(io::barycentric_pointing(none, "pre.fits", nullptr), InputError);
  io::FitsHeader no_mjd;
  no_mjd.set_number("RA", 1.0);
  no_mjd.set_number("DEC", 1.0);
  try {
    io::barycentric_pointing(no_mjd, "pre.fits", nullptr);
    ADD_FAILURE();
  } catch (InputError const& e) {
    EXPECT_NE(std::string(e.what()).find("MJD-OBS"), std::string::npos) << e.what();
  }
  no_mjd.set_string("MJD-OBS", "soon");
  try {
    io::barycentric_pointing(no_mjd, "pre.fits", nullptr);
    ADD_FAILURE();
  } catch (InputError const& e) {
    EXPECT_EQ(e.hdu(), "IMAGE");
    EXPECT_NE(std::string(e.what()).find("MJD-OBS = 'soon"), std::string::npos) << e.what();
  }
}

// ------------------------------------------------------------------ FIBERMAP rows

TEST(desi_frame, fibermap_rows_of_the_extracted_spectra) {
  std::vector<long long> fibers;
  for (int i = 0; i < 500; ++i) fibers.push_back(500 + i);
  io::FitsTable fm = io::integer_table("FIBERMAP", "FIBER", fibers);
  fm.file = "preproc-r1.fits";
  auto const rows = io::frame_fibermap(fm, 5, 5);
  EXPECT_EQ(rows.nrows, 5);
  EXPECT_EQ(io::integer_column(rows, "FIBER"), (std::vector<long long>{505, 506, 507, 508, 509}));
  EXPECT_EQ(io::frame_fibermap(fm, 475, 25).nrows, 25);  // up to the last row
  try {
    io::frame_fibermap(fm, 490, 25);  // beyond its rows
    ADD_FAILURE();
  } catch (InputError const& e) {
    EXPECT_EQ(e.file(), "preproc-r1.fits");
    EXPECT_EQ(e.hdu(), "FIBERMAP");
    EXPECT_NE(std::string(e.what()).find("has 500 rows"), std::string::npos) << e.what();
  }
  io::FitsTable no_fiber = io::integer_table("FIBERMAP", "TARGETID", fibers);
  EXPECT_THROW(io::frame_fibermap(no_fiber, 0, 5), InputError);
  auto const own = io::fiber_numbers_fibermap(1005, 3);
  EXPECT_EQ(io::integer_column(own, "FIBER"), (std::vector<long long>{1005, 1006, 1007}));
}

// ------------------------------------------------------------------ the frame file

// The bytes of a gzip file, as zlib inflates them.
std::string gunzip(std::string const& path) {
  gzFile g = gzopen(path.c_str(), "rb");
  std::string out;
  char buf[1 << 16];
  for (int got; g && (got = gzread(g, buf, sizeof buf)) > 0;) out.append(buf, std::size_t(got));
  if (g) gzclose(g);
  return out;
}

io::FrameData small_frame() {
  io::FrameData fr;
  fr.specmin = 3;
  fr.nspec = 2;
  fr.nwave = 4;
  fr.ndiag = 1;
  fr.wavelength = {6000, 6000.8, 6001.6, 6002.4};
  fr.flux = {1, 2, 3, 4, 5, 6, 7, 8};
  fr.ivar = fr.chi2pix = fr.flux;
  fr.mask = {0, 1u << 31, 128, 3, 0, 0, 0, 0xffffffffu};
  fr.resolution.assign(2 * 3 * 4, 0.25f);
  fr.header.set_string("FLAVOR", "science");
  fr.fibermap = io::fiber_numbers_fibermap(3, 2);
  fr.scores = {{"SUM_RAW_COUNT_R", "sum counts in wave. range 5800,7600A", {10, 26}}};
  return fr;
}

TEST(desi_frame, frame_file_as_desispec_writes_it) {
  std::string const dir = kspecter::test::scratch_dir();
  io::FrameData const fr = small_frame();
  io::write_frame(dir + "/a.fits", fr);
  io::write_frame(dir + "/b.fits", fr);
  // The same frame, the same bytes (no time stamps in the checksums' comments).
  EXPECT_TRUE(file_bytes(dir + "/a.fits") == file_bytes(dir + "/b.fits"));
  io::write_frame(dir + "/c.fits.gz", fr);
  EXPECT_EQ(file_bytes(dir + "/c.fits.gz").substr(0, 2), "\x1f\x8b");
  for (char const* name : {"a.fits", "c.fits.gz"}) {
    SCOPED_TRACE(name);
    auto const back = io::read_frame(dir + "/" + name);
    EXPECT_EQ(back.mask, fr.mask);
    EXPECT_EQ(back.flux, fr.flux);
    ASSERT_TRUE(back.fibermap.has_value());
    EXPECT_EQ(io::integer_column(*back.fibermap, "FIBER"), (std::vector<long long>{3, 4}));
    ASSERT_EQ(back.scores.size(), 1u);
    EXPECT_EQ(back.scores[0].name, "SUM_RAW_COUNT_R");
    EXPECT_EQ(back.scores[0].comment, "sum counts in wave. range 5800,7600A");
    EXPECT_EQ(back.scores[0].values, (std::vector<double>{10, 26}));
    EXPECT_EQ(back.header.get_string("FLAVOR", name, "FLUX"), "science");
  }
  // MASK is uint32 (BITPIX 32, BZERO 2^31); every HDU has a valid CHECKSUM and DATASUM, and
  // the HDUs come in desispec's order.
  fitsfile* f = nullptr;
  int st = 0, nhdu = 0, type = 0;
  fits_open_diskfile(&f, (dir + "/a.fits").c_str(), READONLY, &st);
  fits_get_num_hdus(f, &nhdu, &st);
  std::vector<std::string> names;
  for (int h = 1; h <= nhdu; ++h) {
    int dataok = 0, hduok = 0;
    char extname[FLEN_VALUE] = {0};
    fits_movabs_hdu(f, h, &type, &st);
    fits_read_key(f, TSTRING, "EXTNAME", extname, nullptr, &st);
    names.push_back(extname);
    fits_verify_chksum(f, &dataok, &hduok, &st);
    EXPECT_EQ(dataok, 1) << extname;
    EXPECT_EQ(hduok, 1) << extname;
    if (names.back() == "MASK") {
      int bitpix = 0;
      fits_get_img_equivtype(f, &bitpix, &st);
      EXPECT_EQ(bitpix, ULONG_IMG);
    }
  }
  fits_close_file(f, &st);
  EXPECT_EQ(st, 0);
  EXPECT_EQ(names, (std::vector<std::string>{"FLUX", "IVAR", "MASK", "WAVELENGTH", "RESOLUTION",
                                             "FIBERMAP", "CHI2PIX", "SCORES"}));
  EXPECT_TRUE(gunzip(dir + "/c.fits.gz") == file_bytes(dir + "/a.fits"));
}

TEST(desi_frame, a_gz_frame_is_the_plain_frame_gzipped) {
  // Its images are streamed into the deflater from the frame's arrays (placeholders in
  // CFITSIO's memory file until then): the bytes must be those CFITSIO writes to a plain
  // file, headers, CHECKSUMs and fill included. RESOLUTION's 2.6 MB cross the deflater's
  // 2 MiB pieces; MODEL ends the file.
  io::FrameData fr = small_frame();
  fr.nspec = 30;
  fr.nwave = 2000;
  fr.ndiag = 5;
  std::size_t const n = std::size_t(fr.nspec) * std::size_t(fr.nwave);
  fr.wavelength.resize(std::size_t(fr.nwave));
  fr.flux.resize(n);
  fr.mask.resize(n);
  fr.resolution.resize(n * std::size_t(2 * fr.ndiag + 1));
  for (std::size_t i = 0; i < fr.wavelength.size(); ++i) fr.wavelength[i] = 5000 + 0.8 * double(i);
  for (std::size_t i = 0; i < n; ++i) {
    fr.flux[i] = float(i % 977) * 0.37f - 40.0f;
    fr.mask[i] = std::uint32_t(i * 2654435761u);
  }
  for (std::size_t i = 0; i < fr.resolution.size(); ++i) fr.resolution[i] = 1.0f / float(i + 1);
  fr.ivar = fr.chi2pix = fr.flux;
  fr.fibermap = io::fiber_numbers_fibermap(3, fr.nspec);
  fr.scores = {{"SUM_RAW_COUNT_R", "sum", std::vector<double>(std::size_t(fr.nspec), 2.5)}};
  fr.model_nx = 37;
  fr.model_ny = 41;
  fr.model.assign(37 * 41, 3.25f);
  std::string const dir = kspecter::test::scratch_dir();
  io::write_frame(dir + "/plain.fits", fr);
  io::write_frame(dir + "/packed.fits.gz", fr);
  std::string const plain = file_bytes(dir + "/plain.fits");
  EXPECT_EQ(plain.size() % 2880, 0u);
  EXPECT_TRUE(gunzip(dir + "/packed.fits.gz") == plain);
  io::FrameData const back = io::read_frame(dir + "/packed.fits.gz");
  EXPECT_EQ(back.resolution, fr.resolution);
  EXPECT_EQ(back.mask, fr.mask);
  EXPECT_EQ(back.wavelength, fr.wavelength);
  EXPECT_EQ(back.model, fr.model);
}

}  // namespace
