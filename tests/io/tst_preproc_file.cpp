// Preproc images: round trip through write_preproc/read_preproc, every BITPIX the reader
// promises, bad-pixel rules, and a corpus of broken files (made here byte by byte, without
// CFITSIO, so the reader is checked against an independent writer) each refused with an
// InputError that names the file and the HDU.
#include <kspecter/core/error.hpp>
#include <kspecter/io/preproc_file.hpp>

#include <test_data.hpp>

#include <gtest/gtest.h>

#include <cctype>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <string>
#include <utility>
#include <vector>

namespace {

namespace fs = std::filesystem;
using kspecter::InputError;
using kspecter::io::PreprocImage;
using kspecter::io::TruthSpectra;
using kspecter::test::file_bytes;

// ---------------------------------------------------------------- a minimal FITS writer

std::string card(std::string const& key, std::string const& value) {
  std::string c = key;
  c.resize(8, ' ');
  if (!value.empty()) c += "= " + value;
  c.resize(80, ' ');
  return c;
}
std::string sval(std::string const& s) { return "'" + s + "'"; }

struct RawHdu {
  std::vector<std::string> cards;
  std::vector<unsigned char> data;
};

template <class T>
void put_be(std::vector<unsigned char>& out, T v) {
  unsigned char b[sizeof(T)];
  std::memcpy(b, &v, sizeof(T));
  for (int i = int(sizeof(T)) - 1; i >= 0; --i) out.push_back(b[i]);
}

// An image HDU; `values` are converted to T and stored big-endian.
template <class T>
RawHdu image_hdu(bool primary, int bitpix, std::vector<long> naxes, std::string const& extname,
                 std::vector<double> const& values, std::vector<std::string> extra = {}) {
  RawHdu h;
  h.cards.push_back(primary ? card("SIMPLE", "T") : card("XTENSION", sval("IMAGE")));
  h.cards.push_back(card("BITPIX", std::to_string(bitpix)));
  h.cards.push_back(card("NAXIS", std::to_string(naxes.size())));
  for (std::size_t a = 0; a < naxes.size(); ++a)
    h.cards.push_back(card("NAXIS" + std::to_string(a + 1), std::to_string(naxes[a])));
  if (primary)
    h.cards.push_back(card("EXTEND", "T"));
  else {
    h.cards.push_back(card("PCOUNT", "0"));
    h.cards.push_back(card("GCOUNT", "1"));
  }
  if (!extname.empty()) h.cards.push_back(card("EXTNAME", sval(extname)));
  for (auto const& c : extra) h.cards.push_back(c);
  for (double v : values) put_be<T>(h.data, static_cast<T>(v));
  return h;
}

RawHdu empty_primary() { return image_hdu<float>(true, -32, {}, "", {}); }

// A one-column binary table (int32 column X).
RawHdu table_hdu(std::string const& extname, int nrows) {
  RawHdu h;
  h.cards = {card("XTENSION", sval("BINTABLE")),
             card("BITPIX", "8"),
             card("NAXIS", "2"),
             card("NAXIS1", "4"),
             card("NAXIS2", std::to_string(nrows)),
             card("PCOUNT", "0"),
             card("GCOUNT", "1"),
             card("TFIELDS", "1"),
             card("TTYPE1", sval("X")),
             card("TFORM1", sval("J")),
             card("EXTNAME", sval(extname))};
  for (int i = 0; i < nrows; ++i) put_be<std::int32_t>(h.data, i);
  return h;
}

std::string fits_bytes(std::vector<RawHdu> const& hdus) {
  std::string out;
  for (auto const& h : hdus) {
    std::string head;
    for (auto const& c : h.cards) head += c;
    head += card("END", "");
    head.resize((head.size() + 2879) / 2880 * 2880, ' ');
    out += head;
    std::string data(h.data.begin(), h.data.end());
    data.resize((data.size() + 2879) / 2880 * 2880, '\0');
    out += data;
  }
  return out;
}

void write_bytes(std::string const& path, std::string const& bytes) {
  std::ofstream(path, std::ios::binary).write(bytes.data(), std::streamsize(bytes.size()));
}

// A small valid image: IMAGE, IVAR, MASK of ny x nx with recognisable values.
constexpr int NX = 13, NY = 7;
std::vector<double> ramp(double scale, double offset) {
  std::vector<double> v(NX * NY);
  for (int i = 0; i < NX * NY; ++i) v[i] = offset + scale * i;
  return v;
}
std::vector<RawHdu> valid_hdus() {
  return {image_hdu<float>(true, -32, {NX, NY}, "IMAGE", ramp(0.5, -3.0)),
          image_hdu<float>(false, -32, {NX, NY}, "IVAR", ramp(0.01, 0.1)),
          image_hdu<std::int32_t>(false, 32, {NX, NY}, "MASK", std::vector<double>(NX * NY, 0.0))};
}

// Expects read_preproc(path) to throw an InputError naming the file and `hdu`, whose message
// contains `words`.
void expect_refused(std::string const& path, std::string const& hdu, std::string const& words,
                    std::function<void()> const& call) {
  try {
    call();
    ADD_FAILURE() << path << ": no error, expected one about HDU '" << hdu << "'";
  } catch (InputError const& e) {
    std::string const what = e.what();
    EXPECT_EQ(e.file(), path) << what;
    EXPECT_EQ(e.hdu(), hdu) << what;
    EXPECT_NE(what.find(path), std::string::npos) << what;
    if (!hdu.empty()) EXPECT_NE(what.find("'" + hdu + "'"), std::string::npos) << what;
    EXPECT_NE(what.find(words), std::string::npos) << "expected '" << words << "' in: " << what;
  } catch (std::exception const& e) {
    ADD_FAILURE() << path << ": wrong exception type: " << e.what();
  }
}
void expect_preproc_refused(std::string const& path, std::string const& hdu,
                            std::string const& words) {
  expect_refused(path, hdu, words, [&] { kspecter::io::read_preproc(path); });
}

PreprocImage make_image(int nx, int ny) {
  PreprocImage img;
  img.nx = nx;
  img.ny = ny;
  for (int i = 0; i < nx * ny; ++i) {
    img.image.push_back(static_cast<float>(std::sin(0.1 * i) * 100.0));
    img.ivar.push_back(static_cast<float>(1.0 / (10.0 + i % 17)));
    img.mask.push_back(i % 11 == 3 ? 16 : 0);
  }
  return img;
}

TruthSpectra make_truth() {
  TruthSpectra t;
  t.specmin = 20;
  t.nspec = 3;
  for (int j = 0; j < 5; ++j) t.wavelength.push_back(6000.0 + 0.8 * j);
  for (int i = 0; i < 15; ++i) t.flux.push_back(1.0 / 3.0 + i * 1e-13);
  t.objtype = {"SKY", "TGT", "TGT"};
  t.fibermin = 500;
  return t;
}

// ---------------------------------------------------------------- round trip

TEST(preproc_file, round_trip_with_truth_and_header) {
  std::string const dir = kspecter::test::scratch_dir();
  std::string const path = dir + "/preproc.fits";
  PreprocImage img = make_image(37, 21);
  img.ivar[5] = 0.0f;  // a legitimately dead pixel stays 0
  TruthSpectra const truth = make_truth();
  img.header.set_integer("SIMSEED", 42);
  img.header.set_number("RDNOISE", 3.5);
  img.header.set_logical("NOISELES", false);
  img.header.set_string("SIMPSF", "psf-r0-00067784.fits");
  kspecter::io::write_preproc(path, img, &truth);

  PreprocImage const back = kspecter::io::read_preproc(path);
  EXPECT_EQ(back.path, path);
  ASSERT_EQ(back.nx, 37);
  ASSERT_EQ(back.ny, 21);
  // Pixels with mask != 0 come back with ivar = 0; everything else is bit-identical.
  for (std::size_t i = 0; i < img.image.size(); ++i) {
    ASSERT_EQ(back.image[i], img.image[i]) << i;
    ASSERT_EQ(back.mask[i], img.mask[i]) << i;
    ASSERT_EQ(back.ivar[i], img.mask[i] ? 0.0f : img.ivar[i]) << i;
  }
  ASSERT_TRUE(back.fibermap.has_value());
  EXPECT_EQ(back.fibermap->nrows, truth.nspec);
  // The header comes back as records, typed.
  EXPECT_EQ(back.header.get_integer("SIMSEED", path, "IMAGE"), 42);
  EXPECT_EQ(back.header.get_number("RDNOISE", path, "IMAGE"), 3.5);
  EXPECT_EQ(back.header.get_string("SIMPSF", path, "IMAGE"), "psf-r0-00067784.fits");
  EXPECT_FALSE(back.header.has("NAXIS1"));

  auto const t = kspecter::io::read_truth(path);
  ASSERT_TRUE(t.has_value());
  EXPECT_EQ(t->specmin, 20);
  EXPECT_EQ(t->nspec, 3);
  EXPECT_EQ(t->wavelength, truth.wavelength);
  EXPECT_EQ(t->flux, truth.flux);  // f8 on disk: exact
  EXPECT_EQ(t->objtype, truth.objtype);
  EXPECT_EQ(t->fibermin, 500);

  // Header cards are typed: an integer, a float, a logical (right-justified to column 30)
  // and a string.
  std::string const bytes = file_bytes(path).substr(0, 2880 * 2);
  auto fixed = [](std::string const& key, std::string const& v) {
    std::string k = key;
    k.resize(8, ' ');
    return k + "= " + std::string(20 - v.size(), ' ') + v;
  };
  EXPECT_NE(bytes.find(fixed("SIMSEED", "42")), std::string::npos) << bytes;
  EXPECT_NE(bytes.find(fixed("RDNOISE", "3.5")), std::string::npos) << bytes;
  EXPECT_NE(bytes.find(fixed("NOISELES", "F")), std::string::npos) << bytes;
  EXPECT_NE(bytes.find("SIMPSF  = 'psf-r0-00067784.fits'"), std::string::npos) << bytes;
  EXPECT_NE(bytes.find("EXTNAME = 'IMAGE   '"), std::string::npos) << bytes;
  // No temporary file is left behind.
  int files = 0;
  for (auto const& e : fs::directory_iterator(dir)) files += e.is_regular_file();
  EXPECT_EQ(files, 1);
}

TEST(preproc_file, without_truth_has_no_truth_or_fibermap) {
  std::string const path = kspecter::test::scratch_dir() + "/p.fits";
  kspecter::io::write_preproc(path, make_image(5, 4));
  EXPECT_FALSE(kspecter::io::read_truth(path).has_value());
  EXPECT_FALSE(kspecter::io::read_preproc(path).fibermap.has_value());
  EXPECT_TRUE(kspecter::io::has_hdu(path, "MASK"));
  EXPECT_FALSE(kspecter::io::has_hdu(path, "FIBERMAP"));
  EXPECT_FALSE(kspecter::io::has_hdu(path + ".nope", "MASK"));
}

TEST(preproc_file, fibermap_is_carried_as_it_is) {
  std::string const dir = kspecter::test::scratch_dir();
  TruthSpectra const truth = make_truth();
  kspecter::io::write_preproc(dir + "/with.fits", make_image(6, 5), &truth);
  PreprocImage img = make_image(6, 5);
  img.fibermap = kspecter::io::read_preproc(dir + "/with.fits").fibermap;
  ASSERT_TRUE(img.fibermap.has_value());
  kspecter::io::write_preproc(dir + "/copy.fits", img);
  auto const back = kspecter::io::read_preproc(dir + "/copy.fits");
  ASSERT_TRUE(back.fibermap.has_value());
  EXPECT_EQ(back.fibermap->nrows, 3);
  EXPECT_EQ(kspecter::io::integer_column(*back.fibermap, "FIBER"),
            (std::vector<long long>{520, 521, 522}));  // fibermin + specmin + i
  EXPECT_FALSE(kspecter::io::read_truth(dir + "/copy.fits").has_value());
}

TEST(preproc_file, failed_write_leaves_previous_file) {
  std::string const dir = kspecter::test::scratch_dir();
  std::string const path = dir + "/p.fits";
  kspecter::io::write_preproc(path, make_image(5, 4));
  std::string const before = file_bytes(path);
  PreprocImage bad = make_image(5, 4);
  bad.ivar.pop_back();
  EXPECT_THROW(kspecter::io::write_preproc(path, bad), kspecter::ParameterError);
  PreprocImage good = make_image(5, 4);
  EXPECT_THROW(good.header.set_integer("NAXIS1", 3), kspecter::ParameterError);
  PreprocImage wide = make_image(5, 4);
  wide.mask[3] = 1 << 16;  // desispec's MASK is int16
  EXPECT_THROW(kspecter::io::write_preproc(path, wide), kspecter::ParameterError);
  EXPECT_EQ(file_bytes(path), before);
  int files = 0;
  for (auto const& e : fs::directory_iterator(dir)) files += e.is_regular_file();
  EXPECT_EQ(files, 1);
  EXPECT_THROW(kspecter::io::write_preproc(dir + "/no/such/folder/p.fits", good), InputError);
}

// ---------------------------------------------------------------- types the reader accepts

TEST(preproc_file, reads_f8_scaled_integers_and_any_integer_mask) {
  std::string const dir = kspecter::test::scratch_dir();
  // f8 IMAGE, scaled i16 IVAR (physical = 0.001 * raw + 1), u8 MASK, no EXTNAME on primary.
  std::vector<double> img(NX * NY), ivar_raw(NX * NY), mask(NX * NY);
  for (int i = 0; i < NX * NY; ++i) {
    img[i] = 1e-3 * i + 1.0 / 3.0;
    ivar_raw[i] = i - 40;
    mask[i] = (i % 5 == 0) ? 255 : 0;
  }
  std::string const p1 = dir + "/f8.fits";
  write_bytes(p1,
              fits_bytes({image_hdu<double>(true, -64, {NX, NY}, "", img),
                          image_hdu<std::int16_t>(false, 16, {NX, NY}, "IVAR", ivar_raw,
                                                  {card("BSCALE", "0.001"), card("BZERO", "1.0")}),
                          image_hdu<std::uint8_t>(false, 8, {NX, NY}, "MASK", mask)}));
  PreprocImage const r = kspecter::io::read_preproc(p1);
  ASSERT_EQ(r.nx, NX);
  ASSERT_EQ(r.ny, NY);
  for (int i = 0; i < NX * NY; ++i) {
    EXPECT_EQ(r.image[i], static_cast<float>(img[i])) << i;
    EXPECT_EQ(r.mask[i], int(mask[i])) << i;
    float const want = mask[i] ? 0.0f : static_cast<float>(0.001 * ivar_raw[i] + 1.0);
    EXPECT_FLOAT_EQ(r.ivar[i], want) << i;
  }
  // Unsigned 32-bit MASK (BZERO 2^31) with the top bit set, 64-bit MASK with only high bits:
  // both stay nonzero.
  std::vector<double> m32(NX * NY, 0.0), m64(NX * NY, 0.0);
  m32[3] = -2147483648.0;  // raw value: physical 0 ... and
  m32[4] = 2147483647.0;   // physical 2^32 - 1
  std::string const p2 = dir + "/u32.fits";
  auto h = valid_hdus();
  h[2] = image_hdu<std::int32_t>(false, 32, {NX, NY}, "MASK", m32,
                                 {card("BZERO", "2147483648"), card("BSCALE", "1")});
  write_bytes(p2, fits_bytes(h));
  PreprocImage const r2 = kspecter::io::read_preproc(p2);
  for (int i = 0; i < NX * NY; ++i) {
    if (i == 4) {
      EXPECT_EQ(static_cast<std::uint32_t>(r2.mask[i]), 0xffffffffu);
    } else if (i == 3) {
      EXPECT_EQ(r2.mask[i], 0);
    } else {
      EXPECT_EQ(static_cast<std::uint32_t>(r2.mask[i]), 0x80000000u) << i;  // raw 0: 2^31
    }
  }
  m64[6] = double(1LL << 40);
  h[2] = image_hdu<std::int64_t>(false, 64, {NX, NY}, "MASK", m64);
  std::string const p3 = dir + "/i64.fits";
  write_bytes(p3, fits_bytes(h));
  PreprocImage const r3 = kspecter::io::read_preproc(p3);
  EXPECT_NE(r3.mask[6], 0);
  // No bit of extractmaskval is set (desispec reads the mask as uint16: 2^40 is 0 there).
  EXPECT_NE(r3.ivar[6], 0.0f);
  EXPECT_EQ(r3.mask[7], 0);
}

TEST(preproc_file, bad_pixels_get_zero_ivar) {
  std::string const path = kspecter::test::scratch_dir() + "/bad.fits";
  double const nan = std::numeric_limits<double>::quiet_NaN();
  double const inf = std::numeric_limits<double>::infinity();
  auto img = ramp(1.0, 1.0), ivar = ramp(0.0, 0.25), mask = std::vector<double>(NX * NY, 0.0);
  img[1] = nan;     // image NaN: image 0, ivar 0
  img[2] = -inf;    // image infinite: likewise
  ivar[3] = -0.5;   // negative ivar
  ivar[4] = nan;    // NaN ivar
  ivar[5] = inf;    // infinite ivar
  mask[6] = 2;      // masked
  img[7] = -100.0;  // negative data are fine
  write_bytes(path, fits_bytes({image_hdu<float>(true, -32, {NX, NY}, "IMAGE", img),
                                image_hdu<float>(false, -32, {NX, NY}, "IVAR", ivar),
                                image_hdu<std::int16_t>(false, 16, {NX, NY}, "MASK", mask)}));
  PreprocImage const r = kspecter::io::read_preproc(path);
  for (int i = 0; i < NX * NY; ++i) {
    EXPECT_TRUE(std::isfinite(r.image[i])) << i;
    EXPECT_TRUE(std::isfinite(r.ivar[i]) && r.ivar[i] >= 0.0f) << i;
  }
  EXPECT_EQ(r.image[1], 0.0f);
  EXPECT_EQ(r.image[2], 0.0f);
  for (int i : {1, 2, 3, 4, 5, 6}) EXPECT_EQ(r.ivar[i], 0.0f) << i;
  EXPECT_EQ(r.mask[6], 2);
  EXPECT_EQ(r.mask[1], 0);  // the mask is not rewritten
  EXPECT_EQ(r.image[7], -100.0f);
  EXPECT_EQ(r.ivar[7], 0.25f);
  EXPECT_EQ(r.ivar[0], 0.25f);
}

// ---------------------------------------------------------------- the error corpus

TEST(preproc_file, error_corpus) {
  std::string const dir = kspecter::test::scratch_dir();
  auto make = [&](std::string const& name, std::vector<RawHdu> const& hdus) {
    std::string const p = dir + "/" + name;
    write_bytes(p, fits_bytes(hdus));
    return p;
  };
  auto h = valid_hdus();
  ASSERT_NO_THROW(kspecter::io::read_preproc(make("valid.fits", h)));

  expect_preproc_refused(make("no_ivar.fits", {h[0], h[2]}), "IVAR", "HDU not found");
  expect_preproc_refused(make("no_mask.fits", {h[0], h[1]}), "MASK", "HDU not found");
  expect_preproc_refused(make("no_image.fits", {empty_primary(), h[1], h[2]}), "IMAGE",
                         "HDU not found");
  {
    auto b = h;
    b[1] = image_hdu<float>(false, -32, {NX, NY - 1}, "IVAR", std::vector<double>(NX * (NY - 1)));
    expect_preproc_refused(make("ivar_shape.fits", b), "IVAR", "does not match");
  }
  {
    auto b = h;
    b[2] = image_hdu<std::int32_t>(false, 32, {NY, NX}, "MASK", std::vector<double>(NX * NY));
    expect_preproc_refused(make("mask_transposed.fits", b), "MASK", "does not match");
  }
  {
    auto b = h;
    b[2] = image_hdu<float>(false, -32, {NX, NY}, "MASK", std::vector<double>(NX * NY));
    expect_preproc_refused(make("mask_float.fits", b), "MASK", "integer");
  }
  {
    auto b = h;
    b[1] = table_hdu("IVAR", 3);
    expect_preproc_refused(make("ivar_table.fits", b), "IVAR", "binary table");
  }
  {
    std::vector<RawHdu> b = {empty_primary(), table_hdu("IMAGE", 2), h[1], h[2]};
    expect_preproc_refused(make("image_table.fits", b), "IMAGE", "binary table");
  }
  {
    auto b = h;
    b[0] = image_hdu<float>(true, -32, {NX, NY, 2}, "IMAGE", std::vector<double>(NX * NY * 2));
    expect_preproc_refused(make("image_3d.fits", b), "IMAGE", "2-D");
  }
  // Truncations: inside IMAGE's data, inside IVAR's header, inside MASK's data.
  std::string const full = file_bytes(dir + "/valid.fits");
  ASSERT_EQ(full.size(), 6u * 2880u);  // 3 x (header block + one data block)
  auto cut = [&](std::string const& name, std::size_t n) {
    std::string const p = dir + "/" + name;
    write_bytes(p, full.substr(0, n));
    return p;
  };
  expect_preproc_refused(cut("cut_image.fits", 2880 + 100), "IMAGE", "truncated");
  expect_preproc_refused(cut("cut_ivar_header.fits", 2 * 2880 + 1000), "IVAR", "truncated");
  expect_preproc_refused(cut("cut_mask.fits", 5 * 2880 + NX * NY * 4 - 8), "MASK", "truncated");
  // CFITSIO reads whole blocks: a file missing only its last block's padding is truncated too.
  expect_preproc_refused(cut("unpadded.fits", 5 * 2880 + NX * NY * 4), "MASK", "truncated");

  // Not FITS at all, empty, missing.
  std::string const text = dir + "/text.fits";
  write_bytes(text, std::string(5000, 'x'));
  expect_preproc_refused(text, "", "not a readable FITS file");
  expect_preproc_refused(cut("empty.fits", 0), "", "not a readable FITS file");
  expect_preproc_refused(dir + "/does_not_exist.fits", "", "file not found");
}

// Truth HDUs of two spectra on four wavelength bins: TRUTH_FLUX (4 x 2 values, 1 unless
// given, with the header cards `cards`) and TRUTH_WAVE (6000 .. 6003 A unless given).
RawHdu truth_flux_hdu(std::vector<std::string> cards = {},
                      std::vector<double> const& flux = std::vector<double>(2 * 4, 1.0)) {
  return image_hdu<double>(false, -64, {4, 2}, "TRUTH_FLUX", flux, std::move(cards));
}
RawHdu truth_wave_hdu(std::vector<double> const& wave = {6000, 6001, 6002, 6003}) {
  return image_hdu<double>(false, -64, {long(wave.size())}, "TRUTH_WAVE", wave);
}

// The call that reads the truth spectra of `path`, for expect_refused.
std::function<void()> reading_truth(std::string const& path) {
  return [path] { kspecter::io::read_truth(path); };
}

TEST(preproc_file, truth_error_cases) {
  std::string const dir = kspecter::test::scratch_dir();
  auto h = valid_hdus();
  auto flux = std::vector<double>(2 * 4, 1.0);
  auto with = [&](std::string const& name, RawHdu const& f, RawHdu const& w) {
    std::string const p = dir + "/" + name;
    write_bytes(p, fits_bytes({h[0], h[1], h[2], f, w}));
    return p;
  };
  auto good_flux = truth_flux_hdu({card("SPECMIN", "7"), card("NSPEC", "2")}, flux);
  auto good_wave = truth_wave_hdu();
  auto const t = kspecter::io::read_truth(with("ok.fits", good_flux, good_wave));
  ASSERT_TRUE(t.has_value());
  EXPECT_EQ(t->specmin, 7);
  EXPECT_EQ(t->nspec, 2);
  EXPECT_TRUE(t->objtype.empty());

  std::string p = with("short_wave.fits", good_flux, truth_wave_hdu({6000, 6001, 6002}));
  expect_refused(p, "TRUTH_FLUX", "matching TRUTH_WAVE", reading_truth(p));
  p = with("unsorted.fits", good_flux, truth_wave_hdu({6000, 6002, 6001, 6003}));
  expect_refused(p, "TRUTH_WAVE", "increasing", reading_truth(p));
  p = with("nspec.fits", truth_flux_hdu({card("NSPEC", "3")}, flux), good_wave);
  expect_refused(p, "TRUTH_FLUX", "NSPEC", reading_truth(p));
  flux[5] = std::numeric_limits<double>::quiet_NaN();
  p = with("nan.fits", truth_flux_hdu({}, flux), good_wave);
  expect_refused(p, "TRUTH_FLUX", "non-finite", reading_truth(p));
  p = dir + "/no_wave.fits";
  write_bytes(p, fits_bytes({h[0], h[1], h[2], good_flux}));
  expect_refused(p, "TRUTH_WAVE", "HDU not found", reading_truth(p));
}

// ---------------------------------------------------------------- found by fuzzing

TEST(preproc_file, integer_keys_cfitsio_cannot_convert_are_refused_or_ignored) {
  // libFuzzer's finding (tests/fuzz): reading a keyword as an integer through CFITSIO 4.2 when
  // its value is a long non-integer overruns CFITSIO's message buffer (ffc2j) and aborts the
  // process. The readers now parse integer values themselves.
  std::string const dir = kspecter::test::scratch_dir();
  auto h = valid_hdus();
  std::string const junk = sval(std::string(40, 'x'));
  auto truth_with = [&](std::string const& name, std::string const& specmin) {
    std::string const p = dir + "/" + name;
    write_bytes(p, fits_bytes({h[0], h[1], h[2], truth_flux_hdu({card("SPECMIN", specmin)}),
                               truth_wave_hdu()}));
    return p;
  };
  std::string p = truth_with("specmin_text.fits", junk);
  expect_refused(p, "TRUTH_FLUX", "SPECMIN = '" + std::string(40, 'x'), reading_truth(p));
  // An int that does not fit either (it came back negative before).
  p = truth_with("specmin_huge.fits", "3000000000");
  expect_refused(p, "TRUTH_FLUX", "SPECMIN 3000000000", reading_truth(p));
  EXPECT_EQ(kspecter::io::read_truth(truth_with("specmin_plus.fits", "+7"))->specmin, 7);

  // A lookup by name starts where the last one ended (after EXTNAME), which is how the fuzzer
  // reached a junk duplicate of NAXIS. CFITSIO looks structural keywords up by name too (an
  // extension of a type it does not know, fuzz seed 20261128), so the header guard refuses a
  // junk value wherever the card is.
  auto b = h;
  b[1].cards.push_back(card("NAXIS", junk));
  p = dir + "/naxis_duplicate.fits";
  write_bytes(p, fits_bytes(b));
  expect_refused(p, "IVAR", "(NAXIS   ) has a string where a number",
                 [&] { kspecter::io::read_preproc(p); });
}

TEST(preproc_file, sizes_that_overflow_or_outgrow_buffers) {
  // Found reviewing what the fuzzer reached. NAXIS1 x NAXIS2 overflowed a long long in the
  // header scan (CFITSIO's own data size wraps to a small number, so nothing else caught it).
  std::string const dir = kspecter::test::scratch_dir();
  auto h = valid_hdus();
  {
    auto b = h;
    b[0] = image_hdu<float>(true, -32, {1L << 32, 1L << 32}, "IMAGE", {});
    std::string const p = dir + "/naxis_overflow.fits";
    write_bytes(p, fits_bytes(b));
    expect_preproc_refused(p, "IMAGE", "truncated");
  }
  // OBJTYPE wider than the 71 bytes each row was given: CFITSIO wrote past them.
  RawHdu fm;
  fm.cards = {card("XTENSION", sval("BINTABLE")),
              card("BITPIX", "8"),
              card("NAXIS", "2"),
              card("NAXIS1", "84"),
              card("NAXIS2", "2"),
              card("PCOUNT", "0"),
              card("GCOUNT", "1"),
              card("TFIELDS", "2"),
              card("TTYPE1", sval("FIBER")),
              card("TFORM1", sval("J")),
              card("TTYPE2", sval("OBJTYPE")),
              card("TFORM2", sval("80A")),
              card("EXTNAME", sval("FIBERMAP"))};
  std::string const wide = "tgt" + std::string(76, 'w') + "z";  // 80 characters
  std::vector<std::pair<std::int32_t, std::string>> const rows = {{507, "sky"}, {508, wide}};
  for (auto const& [fiber, type] : rows) {
    put_be<std::int32_t>(fm.data, fiber);
    std::string cell = type;
    cell.resize(80, ' ');
    fm.data.insert(fm.data.end(), cell.begin(), cell.end());
  }
  std::string const p = dir + "/objtype80.fits";
  write_bytes(p, fits_bytes({h[0], h[1], h[2], truth_flux_hdu({card("SPECMIN", "7")}),
                             truth_wave_hdu(), fm}));
  auto const t = kspecter::io::read_truth(p);
  ASSERT_TRUE(t.has_value());
  std::string wide_upper = wide;
  for (auto& c : wide_upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  EXPECT_EQ(t->objtype, (std::vector<std::string>{"SKY", wide_upper}));
  EXPECT_EQ(t->fibermin, 500);
}

}  // namespace
