// Frames round-trip through FITS and HDF5 with every HDU intact, and a failed write never
// replaces or truncates an existing output.
#include <kspecter/core/error.hpp>
#include <kspecter/io/frame_file.hpp>

#include <test_data.hpp>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <random>

namespace {

kspecter::io::FrameData make_frame(unsigned seed) {
  kspecter::io::FrameData fr;
  fr.specmin = 25;
  fr.nspec = 7;
  fr.nwave = 33;
  fr.ndiag = 2;
  std::mt19937 rng(seed);
  std::normal_distribution<float> g;
  for (int i = 0; i < fr.nwave; ++i) fr.wavelength.push_back(5760.0 + 0.8 * i);
  std::size_t const n = std::size_t(fr.nspec) * fr.nwave;
  for (std::size_t i = 0; i < n; ++i) {
    fr.flux.push_back(g(rng));
    fr.ivar.push_back(std::abs(g(rng)));
    fr.mask.push_back(static_cast<std::uint32_t>(rng() & 0xffff));
    fr.chi2pix.push_back(std::abs(g(rng)));
  }
  for (std::size_t i = 0; i < n * (2 * fr.ndiag + 1); ++i) fr.resolution.push_back(g(rng));
  fr.model_nx = 11;
  fr.model_ny = 5;
  for (int i = 0; i < fr.model_nx * fr.model_ny; ++i) fr.model.push_back(g(rng));
  fr.header.set_string("IN_PSF", "psf-r0.fits");
  fr.header.set_string("IN_IMG", "preproc-r0.fits");
  return fr;
}

void expect_same(kspecter::io::FrameData const& a, kspecter::io::FrameData const& b) {
  EXPECT_EQ(a.specmin, b.specmin);
  EXPECT_EQ(a.nspec, b.nspec);
  EXPECT_EQ(a.nwave, b.nwave);
  EXPECT_EQ(a.ndiag, b.ndiag);
  EXPECT_EQ(a.wavelength, b.wavelength);
  EXPECT_EQ(a.flux, b.flux);
  EXPECT_EQ(a.ivar, b.ivar);
  EXPECT_EQ(a.mask, b.mask);
  EXPECT_EQ(a.resolution, b.resolution);
  EXPECT_EQ(a.chi2pix, b.chi2pix);
  EXPECT_EQ(a.model, b.model);
  EXPECT_EQ(a.model_nx, b.model_nx);
  EXPECT_EQ(a.model_ny, b.model_ny);
}

TEST(frame_file, fits_round_trip) {
  auto const dir = kspecter::test::scratch_dir();
  auto const fr = make_frame(1);
  kspecter::io::write_frame(dir + "/frame.fits", fr);
  expect_same(fr, kspecter::io::read_frame(dir + "/frame.fits"));
  // No temporary file is left behind.
  int files = 0;
  for (auto const& e : std::filesystem::directory_iterator(dir)) files += e.is_regular_file();
  EXPECT_EQ(files, 1);
}

TEST(frame_file, hdf5_round_trip) {
  auto const dir = kspecter::test::scratch_dir();
  auto const fr = make_frame(2);
  kspecter::io::write_frame(dir + "/frame.h5", fr);
  expect_same(fr, kspecter::io::read_frame(dir + "/frame.h5"));
}

TEST(frame_file, overwrite_replaces_whole_file) {
  auto const dir = kspecter::test::scratch_dir();
  kspecter::io::write_frame(dir + "/frame.fits", make_frame(3));
  auto const second = make_frame(4);
  kspecter::io::write_frame(dir + "/frame.fits", second);
  expect_same(second, kspecter::io::read_frame(dir + "/frame.fits"));
}

TEST(frame_file, failed_write_keeps_previous_output) {
  auto const dir = kspecter::test::scratch_dir();
  std::string const path = dir + "/frame.fits";
  auto const good = make_frame(5);
  kspecter::io::write_frame(path, good);
  // A FIBERMAP that is not a FITS table makes the write fail half-way through.
  auto bad = make_frame(6);
  bad.fibermap = kspecter::io::FitsTable{dir + "/preproc.fits", "FIBERMAP", 1, {}, {'x', 'y'}};
  EXPECT_THROW(kspecter::io::write_frame(path, bad), kspecter::InputError);
  expect_same(good, kspecter::io::read_frame(path));
  int files = 0;
  for (auto const& e : std::filesystem::directory_iterator(dir)) files += e.is_regular_file();
  EXPECT_EQ(files, 1) << "the temporary file must be removed";
}

TEST(frame_file, inconsistent_frame_is_refused_before_writing) {
  auto const dir = kspecter::test::scratch_dir();
  auto fr = make_frame(7);
  fr.ivar.pop_back();
  try {
    kspecter::io::write_frame(dir + "/frame.fits", fr);
    FAIL() << "expected an error";
  } catch (kspecter::ParameterError const& e) {
    EXPECT_NE(std::string(e.what()).find("IVAR"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(std::filesystem::exists(dir + "/frame.fits"));
}

TEST(frame_file, missing_folder_names_the_path) {
  try {
    kspecter::io::write_frame("/no/such/folder/frame.fits", make_frame(8));
    FAIL() << "expected an error";
  } catch (kspecter::InputError const& e) {
    EXPECT_NE(std::string(e.what()).find("/no/such/folder"), std::string::npos) << e.what();
  }
}

TEST(frame_file, unreadable_frame_names_file_and_hdu) {
  auto const dir = kspecter::test::scratch_dir();
  std::string const path = dir + "/truncated.fits";
  kspecter::io::write_frame(path, make_frame(9));
  std::filesystem::resize_file(path, 2880 * 2);
  try {
    kspecter::io::read_frame(path);
    FAIL() << "expected an error";
  } catch (kspecter::InputError const& e) {
    EXPECT_NE(std::string(e.what()).find("truncated.fits"), std::string::npos) << e.what();
  }
}

}  // namespace
