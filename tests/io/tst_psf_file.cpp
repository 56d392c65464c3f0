// GaussHermite PSF files: the real r0 PSF read against CFITSIO read directly, write -> read
// round trips, `kspecter make-psf` output, and a corpus of broken PSFs made here, each of
// which must be refused with an InputError naming the file and the HDU.
#include <kspecter/core/error.hpp>
#include <kspecter/io/psf_file.hpp>
#include <kspecter/psf/synthetic_psf.hpp>
#include <test_data.hpp>

#include <fitsio.h>
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <array>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <vector>

namespace {

using namespace kspecter;
namespace fs = std::filesystem;

void expect_equal(psf::LegendreSet const& a, psf::LegendreSet const& b, std::string const& what) {
  EXPECT_EQ(a.wavemin, b.wavemin) << what;
  EXPECT_EQ(a.wavemax, b.wavemax) << what;
  EXPECT_EQ(a.nfiber, b.nfiber) << what;
  EXPECT_EQ(a.ncoef, b.ncoef) << what;
  EXPECT_EQ(a.coeff, b.coeff) << what;
}

void expect_equal(psf::GaussHermitePsf const& a, psf::GaussHermitePsf const& b) {
  EXPECT_EQ(a.nfiber, b.nfiber);
  EXPECT_EQ(a.fibermin, b.fibermin);
  EXPECT_EQ(a.npix_x, b.npix_x);
  EXPECT_EQ(a.npix_y, b.npix_y);
  EXPECT_EQ(a.hsizex, b.hsizex);
  EXPECT_EQ(a.hsizey, b.hsizey);
  EXPECT_EQ(a.ghdegx, b.ghdegx);
  EXPECT_EQ(a.ghdegy, b.ghdegy);
  EXPECT_EQ(a.psferr, b.psferr);
  expect_equal(a.xtrace, b.xtrace, "XTRACE");
  expect_equal(a.ytrace, b.ytrace, "YTRACE");
  ASSERT_EQ(a.param_names, b.param_names);
  for (std::size_t i = 0; i < a.params.size(); ++i)
    expect_equal(a.params[i], b.params[i], a.param_names[i]);
}

// ------------------------------------------------------------------ the real PSF

TEST(psf_file, reads_the_real_r0_psf) {
  KSPECTER_SHARED_DATA_OR_SKIP(path, "psf-r0-00067784.fits");
  auto const p = io::read_psf(path);
  EXPECT_EQ(p.nfiber, 500);
  EXPECT_EQ(p.fibermin, 0);
  EXPECT_EQ(p.npix_x, 4114);
  EXPECT_EQ(p.npix_y, 4128);
  EXPECT_EQ(p.hsizex, 8);
  EXPECT_EQ(p.hsizey, 5);
  EXPECT_EQ(p.ghdegx, 6);
  EXPECT_EQ(p.ghdegy, 6);
  EXPECT_EQ(p.psferr, 0.01);  // no PSFERR key: specter's default
  EXPECT_EQ(p.xtrace.ncoef, 7);
  EXPECT_EQ(p.ytrace.ncoef, 7);
  EXPECT_EQ(p.xtrace.wavemin, 5543.0);
  EXPECT_EQ(p.xtrace.wavemax, 7826.0);
  EXPECT_EQ(p.wavemin(), 5543.0);
  EXPECT_EQ(p.wavemax(), 7826.0);  // PSF table: 7827
  ASSERT_EQ(p.params.size(), 59u);
  EXPECT_EQ(p.params[0].wavemax, 7827.0);
  EXPECT_EQ(p.params[0].ncoef, 2);  // LEGDEG 1
  EXPECT_EQ(p.param_names[0], "GHSIGX");
  EXPECT_EQ(p.param_names[2], "GH-0-0");
  EXPECT_EQ(p.param_names[3], "GH-1-0");
  EXPECT_EQ(p.param_names[58], "CONT");
  EXPECT_FALSE(p.has_tails());

  // Every coefficient equals what CFITSIO reads directly.
  fitsfile* f = nullptr;
  int st = 0;
  ASSERT_EQ(fits_open_diskfile(&f, path.c_str(), READONLY, &st), 0);
  std::vector<double> x(500 * 7), y(500 * 7);
  long fp[2] = {1, 1};
  fits_movnam_hdu(f, ANY_HDU, const_cast<char*>("XTRACE"), 0, &st);
  fits_read_pix(f, TDOUBLE, fp, x.size(), nullptr, x.data(), nullptr, &st);
  fits_movnam_hdu(f, ANY_HDU, const_cast<char*>("YTRACE"), 0, &st);
  fits_read_pix(f, TDOUBLE, fp, y.size(), nullptr, y.data(), nullptr, &st);
  fits_movnam_hdu(f, BINARY_TBL, const_cast<char*>("PSF"), 0, &st);
  std::vector<double> c(59 * 1000);
  fits_read_col(f, TDOUBLE, 2, 1, 1, c.size(), nullptr, c.data(), nullptr, &st);
  fits_close_file(f, &st);
  ASSERT_EQ(st, 0);
  EXPECT_EQ(p.xtrace.coeff, x);
  EXPECT_EQ(p.ytrace.coeff, y);
  for (int r = 0; r < 59; ++r)
    EXPECT_EQ(p.params[r].coeff,
              std::vector<double>(c.begin() + r * 1000, c.begin() + (r + 1) * 1000))
        << p.param_names[r];
  // Spot checks against the values listed by the file (fiber 0).
  EXPECT_NEAR(p.params[0].coeff[0], 1.03823, 5e-6);
  EXPECT_NEAR(p.params[1].coeff[1], 0.0699857, 5e-8);
}

TEST(psf_file, real_psf_round_trips) {
  KSPECTER_SHARED_DATA_OR_SKIP(path, "psf-r0-00067784.fits");
  auto const p = io::read_psf(path);
  std::string const out = test::scratch_dir() + "/psf.fits";
  io::write_psf(out, p);
  expect_equal(p, io::read_psf(out));
}

// ------------------------------------------------------------------ round trips, make-psf

TEST(psf_file, synthetic_psf_round_trips) {
  std::string const dir = test::scratch_dir();
  psf::SyntheticPsfOptions o;
  o.nfiber = 40;
  o.fibermin = 500;
  o.ghdegx = 2;
  o.ghdegy = 4;
  o.legdeg = 5;
  o.trace_ncoef = 9;
  o.tailamp = 0.01;
  o.psferr = 0.04;
  auto const p = psf::make_synthetic_psf(o);
  io::write_psf(dir + "/a.fits", p);
  expect_equal(p, io::read_psf(dir + "/a.fits"));
  // Overwriting goes through a temporary file that does not stay behind.
  io::write_psf(dir + "/a.fits", psf::make_synthetic_psf());
  expect_equal(psf::make_synthetic_psf(), io::read_psf(dir + "/a.fits"));
  int n = 0;
  for (auto const& e : fs::directory_iterator(dir)) {
    (void)e;
    ++n;
  }
  EXPECT_EQ(n, 1);
}

int run_cli(std::string const& args, std::string* output = nullptr) {
  std::string const cmd = std::string(KSPECTER_CLI_PATH) + " " + args + " 2>&1";
  std::unique_ptr<FILE, int (*)(FILE*)> p(popen(cmd.c_str(), "r"), pclose);
  std::array<char, 4096> buf;
  std::string out;
  while (std::fgets(buf.data(), buf.size(), p.get())) out += buf.data();
  int const st = pclose(p.release());
  if (output) *output = out;
  return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

TEST(psf_file, make_psf_writes_the_synthetic_psf) {
  std::string const dir = test::scratch_dir();
  std::string out;
  ASSERT_EQ(run_cli("make-psf -o " + dir + "/default.fits", &out), 0) << out;
  expect_equal(psf::make_synthetic_psf(), io::read_psf(dir + "/default.fits"));

  ASSERT_EQ(run_cli("make-psf -o " + dir +
                        "/small.fits --nfiber 50 --seed 3 --ghdeg 4,3 "
                        "--hsize 6,4 --legdeg 2 --tailamp 0.01 --log-level quiet",
                    &out),
            0)
      << out;
  psf::SyntheticPsfOptions o;
  o.nfiber = 50;
  o.seed = 3;
  o.ghdegx = 4;
  o.ghdegy = 3;
  o.hsizex = 6;
  o.hsizey = 4;
  o.legdeg = 2;
  o.tailamp = 0.01;
  expect_equal(psf::make_synthetic_psf(o), io::read_psf(dir + "/small.fits"));

  EXPECT_EQ(run_cli("make-psf", &out), 2) << out;  // -o is required
  EXPECT_EQ(run_cli("make-psf -o " + dir + "/x.fits --nfiber 0", &out), 2) << out;
  EXPECT_EQ(run_cli("make-psf -o " + dir + "/x.fits --ghdeg 3", &out), 2) << out;
  EXPECT_FALSE(fs::exists(dir + "/x.fits"));
}

// ------------------------------------------------------------------ the error corpus

/// A valid small PSF file to break.
std::string valid_psf(std::string const& dir, std::string const& name) {
  psf::SyntheticPsfOptions o;
  o.nfiber = 30;
  std::string const path = dir + "/" + name;
  io::write_psf(path, psf::make_synthetic_psf(o));
  return path;
}

/// Opens `path` read-write, applies `edit` with the named HDU current, closes.
void edit_fits(std::string const& path, char const* hdu,
               std::function<void(fitsfile*, int&)> edit) {
  fitsfile* f = nullptr;
  int st = 0;
  ASSERT_EQ(fits_open_diskfile(&f, path.c_str(), READWRITE, &st), 0);
  if (hdu) fits_movnam_hdu(f, ANY_HDU, const_cast<char*>(hdu), 0, &st);
  edit(f, st);
  fits_close_file(f, &st);
  ASSERT_EQ(st, 0) << "could not prepare " << path;
}

/// read_psf must throw an InputError naming `path` and `hdu`, whose message contains `words`.
void expect_refused(std::string const& path, std::string const& hdu, std::string const& words) {
  try {
    io::read_psf(path);
    ADD_FAILURE() << path << " was accepted (expected: " << words << ")";
  } catch (InputError const& e) {
    std::string const msg = e.what();
    EXPECT_EQ(e.file(), path);
    EXPECT_EQ(e.hdu(), hdu) << msg;
    EXPECT_NE(msg.find(path), std::string::npos) << msg;
    if (!hdu.empty()) EXPECT_NE(msg.find("HDU '" + hdu + "'"), std::string::npos) << msg;
    EXPECT_NE(msg.find(words), std::string::npos) << msg;
  } catch (std::exception const& e) {
    ADD_FAILURE() << path << ": wrong exception type: " << e.what();
  }
}

TEST(psf_file, refuses_missing_hdus) {
  std::string const dir = test::scratch_dir();
  auto p = valid_psf(dir, "no_ytrace.fits");
  edit_fits(p, "YTRACE", [](fitsfile* f, int& st) { fits_delete_hdu(f, nullptr, &st); });
  expect_refused(p, "YTRACE", "missing");
  p = valid_psf(dir, "no_psf.fits");
  edit_fits(p, "PSF", [](fitsfile* f, int& st) { fits_delete_hdu(f, nullptr, &st); });
  expect_refused(p, "PSF", "missing");
  // XTRACE is the primary HDU: renamed, it is missing.
  p = valid_psf(dir, "no_xtrace.fits");
  edit_fits(p, "XTRACE", [](fitsfile* f, int& st) {
    fits_update_key(f, TSTRING, "EXTNAME", const_cast<char*>("OTHER"), nullptr, &st);
  });
  expect_refused(p, "XTRACE", "missing");
}

TEST(psf_file, refuses_missing_columns_and_keys) {
  std::string const dir = test::scratch_dir();
  auto p = valid_psf(dir, "no_coeff.fits");
  edit_fits(p, "PSF", [](fitsfile* f, int& st) { fits_delete_col(f, 2, &st); });
  expect_refused(p, "PSF", "column COEFF is missing");
  p = valid_psf(dir, "no_param.fits");
  edit_fits(p, "PSF", [](fitsfile* f, int& st) { fits_delete_col(f, 1, &st); });
  expect_refused(p, "PSF", "column PARAM is missing");
  for (char const* key : {"HSIZEX", "GHDEGY", "LEGDEG", "WAVEMIN", "NPIX_Y"}) {
    p = valid_psf(dir, std::string("no_") + key + ".fits");
    edit_fits(p, "PSF", [&](fitsfile* f, int& st) { fits_delete_key(f, key, &st); });
    expect_refused(p, "PSF", std::string("keyword ") + key + " is missing");
  }
  p = valid_psf(dir, "no_wavemax.fits");
  edit_fits(p, "YTRACE", [](fitsfile* f, int& st) { fits_delete_key(f, "WAVEMAX", &st); });
  expect_refused(p, "YTRACE", "keyword WAVEMAX is missing");
}

TEST(psf_file, refuses_wrong_shapes) {
  std::string const dir = test::scratch_dir();
  // YTRACE with one fiber fewer than XTRACE.
  auto p = valid_psf(dir, "short_ytrace.fits");
  edit_fits(p, "YTRACE", [](fitsfile* f, int& st) {
    long naxes[2] = {6, 29};
    fits_resize_img(f, DOUBLE_IMG, 2, naxes, &st);
  });
  expect_refused(p, "YTRACE", "29 fibers but XTRACE has 30");
  // A 1-D XTRACE.
  p = valid_psf(dir, "flat_xtrace.fits");
  edit_fits(p, "XTRACE", [](fitsfile* f, int& st) {
    long naxes[1] = {180};
    fits_resize_img(f, DOUBLE_IMG, 1, naxes, &st);
  });
  expect_refused(p, "XTRACE", "expected a 2-D image");
  // LEGDEG that does not match the COEFF column.
  p = valid_psf(dir, "legdeg.fits");
  edit_fits(p, "PSF", [](fitsfile* f, int& st) {
    int v = 2;
    fits_update_key(f, TINT, "LEGDEG", &v, nullptr, &st);
  });
  expect_refused(p, "PSF", "expected 30 fibers x 3 coefficients");
  // FIBERMIN..FIBERMAX that do not match the traces.
  p = valid_psf(dir, "fibermax.fits");
  edit_fits(p, "PSF", [](fitsfile* f, int& st) {
    int v = 40;
    fits_update_key(f, TINT, "FIBERMAX", &v, nullptr, &st);
  });
  expect_refused(p, "PSF", "FIBERMAX");
  // A PSF table that is an image.
  p = valid_psf(dir, "psf_image.fits");
  edit_fits(p, "PSF", [](fitsfile* f, int& st) {
    fits_delete_hdu(f, nullptr, &st);
    long naxes[2] = {4, 30};
    fits_create_img(f, DOUBLE_IMG, 2, naxes, &st);
    fits_update_key(f, TSTRING, "EXTNAME", const_cast<char*>("PSF"), nullptr, &st);
  });
  expect_refused(p, "PSF", "expected a binary table, found an image");
}

TEST(psf_file, refuses_inconsistent_degrees) {
  std::string const dir = test::scratch_dir();
  auto p = valid_psf(dir, "ghdegx7.fits");
  edit_fits(p, "PSF", [](fitsfile* f, int& st) {
    int v = 7;
    fits_update_key(f, TINT, "GHDEGX", &v, nullptr, &st);
  });
  expect_refused(p, "PSF", "GH-7-0 is missing");
  p = valid_psf(dir, "ghdegy5.fits");
  edit_fits(p, "PSF", [](fitsfile* f, int& st) {
    int v = 5;
    fits_update_key(f, TINT, "GHDEGY", &v, nullptr, &st);
  });
  expect_refused(p, "PSF", "exceeds the degrees");
  // A GH row renamed away: GH-3-2 missing.
  p = valid_psf(dir, "no_gh32.fits");
  edit_fits(p, "PSF", [](fitsfile* f, int& st) {
    char const* name = "XX-3-2";
    long nrows = 0;
    fits_get_num_rows(f, &nrows, &st);
    for (long r = 1; r <= nrows; ++r) {
      char buf[16] = {0};
      char* b = buf;
      fits_read_col(f, TSTRING, 1, r, 1, 1, nullptr, &b, nullptr, &st);
      if (std::string(buf) == "GH-3-2")
        fits_write_col(f, TSTRING, 1, r, 1, 1, const_cast<char**>(&name), &st);
    }
  });
  expect_refused(p, "PSF", "GH-3-2 is missing");
  // GHSIGX negative everywhere.
  p = valid_psf(dir, "sigma.fits");
  edit_fits(p, "PSF", [](fitsfile* f, int& st) {
    double v = -1.0;
    fits_write_col(f, TDOUBLE, 2, 1, 1, 1, &v, &st);  // row 1 = GHSIGX, fiber 0, c0
  });
  expect_refused(p, "PSF", "GHSIGX");
}

TEST(psf_file, refuses_non_finite_coefficients) {
  std::string const dir = test::scratch_dir();
  double nan = std::numeric_limits<double>::quiet_NaN();
  double inf = std::numeric_limits<double>::infinity();
  auto p = valid_psf(dir, "nan_coeff.fits");
  edit_fits(p, "PSF", [&](fitsfile* f, int& st) {
    fits_write_col(f, TDOUBLE, 2, 5, 4 * 7 + 2 + 1, 1, &nan, &st);  // row 5, fiber 7, c2
  });
  expect_refused(p, "PSF", "coefficient 2 of fiber 7 is not finite");
  p = valid_psf(dir, "inf_xtrace.fits");
  edit_fits(p, "XTRACE", [&](fitsfile* f, int& st) {
    long fp[2] = {1, 12};
    fits_write_pix(f, TDOUBLE, fp, 1, &inf, &st);  // fiber 11, c0
  });
  expect_refused(p, "XTRACE", "coefficient 0 of fiber 11 is not finite");
}

TEST(psf_file, refuses_other_psf_types_and_versions) {
  std::string const dir = test::scratch_dir();
  auto p = valid_psf(dir, "spotgrid.fits");
  edit_fits(p, "PSF", [](fitsfile* f, int& st) {
    fits_update_key(f, TSTRING, "PSFTYPE", const_cast<char*>("SPOTGRID"), nullptr, &st);
  });
  expect_refused(p, "PSF", "PSFTYPE is 'SPOTGRID'");
  p = valid_psf(dir, "primary_type.fits");
  edit_fits(p, nullptr, [](fitsfile* f, int& st) {
    fits_update_key(f, TSTRING, "PSFTYPE", const_cast<char*>("MONOSPOT"), nullptr, &st);
  });
  expect_refused(p, "XTRACE", "PSFTYPE is 'MONOSPOT'");  // the primary HDU is XTRACE
  p = valid_psf(dir, "psfver2.fits");
  edit_fits(p, "PSF", [](fitsfile* f, int& st) {
    fits_update_key(f, TSTRING, "PSFVER", const_cast<char*>("2"), nullptr, &st);
  });
  expect_refused(p, "PSF", "PSFVER 2");
}

TEST(psf_file, refuses_truncated_and_foreign_files) {
  std::string const dir = test::scratch_dir();
  auto const good = valid_psf(dir, "good.fits");
  // Cut inside every HDU's header and inside its data; the error names that HDU.
  struct Cut {
    long long at;
    std::string hdu;
  };
  std::vector<Cut> cuts;
  {
    fitsfile* f = nullptr;
    int st = 0;
    ASSERT_EQ(fits_open_diskfile(&f, good.c_str(), READONLY, &st), 0);
    char const* names[] = {"PRIMARY", "YTRACE", "PSF"};
    for (int h = 1; h <= 3; ++h) {
      int type = 0;
      LONGLONG head = 0, data = 0, end = 0;
      fits_movabs_hdu(f, h, &type, &st);
      fits_get_hduaddrll(f, &head, &data, &end, &st);
      // (A cut in the primary header leaves no FITS file; later headers are the HDU before
      // them still being read, or the HDU itself.)
      cuts.push_back({head + 100, names[h - 1]});
      cuts.push_back({data + 16, names[h - 1]});
      cuts.push_back({end - 8, names[h - 1]});
    }
    fits_close_file(f, &st);
    ASSERT_EQ(st, 0);
  }
  int n = 0;
  for (auto const& c : cuts) {
    std::string const p = dir + "/cut" + std::to_string(n++) + ".fits";
    fs::copy_file(good, p);
    fs::resize_file(p, static_cast<std::uintmax_t>(c.at));
    try {
      io::read_psf(p);
      ADD_FAILURE() << "truncated at " << c.at << " was accepted";
    } catch (InputError const& e) {
      EXPECT_EQ(e.file(), p);
      // A cut inside the primary header leaves no FITS file to open (no HDU named); the
      // primary HDU is XTRACE.
      std::string const hdu = c.hdu != "PRIMARY" ? c.hdu : c.at > 2880 ? "XTRACE" : "";
      EXPECT_EQ(e.hdu(), hdu) << "cut at " << c.at << ": " << e.what();
      if (!hdu.empty())
        EXPECT_NE(std::string(e.what()).find("HDU '" + hdu + "'"), std::string::npos) << e.what();
    }
  }
  // Not FITS at all, and no file.
  std::string const text = dir + "/text.fits";
  std::ofstream(text) << "this is not a FITS file\n";
  expect_refused(text, "", "cannot open");
  expect_refused(dir + "/absent.fits", "", "cannot open");
}

// ------------------------------------------------------------------ found by fuzzing

/// Rewrites, byte for byte, the value field (columns 11-80) of the first card named `key` at
/// or after the text `after`: cards CFITSIO itself would refuse to write.
void patch_card(std::string const& path, std::string const& after, std::string const& key,
                std::string value) {
  std::string bytes = test::file_bytes(path);
  std::string name = key;
  name.resize(8, ' ');
  std::size_t const at = bytes.find(name + "= ", bytes.find(after));
  ASSERT_NE(at, std::string::npos) << key;
  value.resize(70, ' ');
  bytes.replace(at + 10, 70, value);
  std::ofstream(path, std::ios::binary).write(bytes.data(), std::streamsize(bytes.size()));
}

TEST(psf_file, refuses_unquoted_values_cfitsio_would_overrun) {
  // libFuzzer's first finding (tests/fuzz): 70 bytes without quotes after "TTYPE3  = " made
  // CFITSIO 4.2 copy 71 bytes into its 70-byte column name and abort the process (ffgtbp).
  std::string const dir = test::scratch_dir();
  auto p = valid_psf(dir, "ttype70.fits");
  patch_card(p, "XTENSION= 'BINTABLE'", "TTYPE3", std::string(70, 'X'));
  expect_refused(p, "PSF", "70 characters without quotes");
  // One shorter is an odd but harmless column name (LEGDEGX, which read_psf does not use).
  p = valid_psf(dir, "ttype69.fits");
  patch_card(p, "XTENSION= 'BINTABLE'", "TTYPE3", std::string(69, 'X'));
  EXPECT_EQ(io::read_psf(p).nfiber, 30);
}

TEST(psf_file, refuses_sizes_the_file_cannot_hold) {
  // Found reviewing what the fuzzer reached: sizes were allocated from the header before
  // CFITSIO read (and missed) the data, so a few corrupt bytes could ask for gigabytes.
  std::string const dir = test::scratch_dir();
  auto p = valid_psf(dir, "xtrace_fibers.fits");  // XTRACE (the primary HDU): 800 MB of doubles
  patch_card(p, "", "NAXIS1", "1000");
  patch_card(p, "", "NAXIS2", "100000");
  expect_refused(p, "XTRACE", "the data of this HDU end at byte");
  p = valid_psf(dir, "psf_rows.fits");
  patch_card(p, "XTENSION= 'BINTABLE'", "NAXIS2", "10000");
  expect_refused(p, "PSF", "the data of this HDU end at byte");
  // Fiber numbers downstream are ints from FIBERMIN up.
  p = valid_psf(dir, "fibermin.fits");
  edit_fits(p, "PSF", [](fitsfile* f, int& st) {
    int lo = -5, hi = 24;
    fits_update_key(f, TINT, "FIBERMIN", &lo, nullptr, &st);
    fits_update_key(f, TINT, "FIBERMAX", &hi, nullptr, &st);
  });
  expect_refused(p, "PSF", "FIBERMIN -5");
}

TEST(psf_file, write_refuses_inconsistent_psfs_and_bad_paths) {
  std::string const dir = test::scratch_dir();
  auto p = psf::make_synthetic_psf();
  p.ghdegx = 7;
  EXPECT_THROW(io::write_psf(dir + "/bad.fits", p), ParameterError);
  p = psf::make_synthetic_psf();
  p.param_names[p.param_index("CONT")] = "CONTINUUM";
  EXPECT_THROW(io::write_psf(dir + "/bad.fits", p), ParameterError);
  EXPECT_THROW(io::write_psf(dir + "/no/such/folder/psf.fits", psf::make_synthetic_psf()), Error);
  EXPECT_FALSE(fs::exists(dir + "/bad.fits"));
}

}  // namespace
