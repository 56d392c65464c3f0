// The frame-level quality rules kspecter takes from desispec, run side by side with the same
// rules in numpy (desi_quality_reference.py) on frames made to hit their corners: BAD2DFIT
// (get_chi2pix_mask: odd and even counts, ties, outliers along one axis only, a NaN) and the
// SCORES of a raw frame in each camera's tophat (edges, partial overlap, negative ivar).
#include <kspecter/core/error.hpp>
#include <kspecter/extract/bad2dfit.hpp>
#include <kspecter/extract/frame.hpp>
#include <kspecter/extract/frame_scores.hpp>
#include <kspecter/extract/mask_bits.hpp>

#include <run_command.hpp>
#include <test_data.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <fstream>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <vector>

namespace {

using namespace kspecter;

struct Frame {
  int nspec = 0, nwave = 0;
  std::vector<double> wave, flux, ivar, chi2pix;
};

// A frame with the structure of a real one: chi2pix ~ 1 with bright-sky columns and bright
// fibers (whole rows and columns higher), isolated outliers, exact ties.
Frame make_frame(unsigned seed, int nspec, int nwave, double w0, double dw) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  Frame f;
  f.nspec = nspec;
  f.nwave = nwave;
  for (int j = 0; j < nwave; ++j) f.wave.push_back(w0 + dw * j);
  for (int s = 0; s < nspec; ++s)
    for (int j = 0; j < nwave; ++j) {
      double c = 0.5 + u(rng);
      if (j % 17 == 3) c *= 8;     // a sky line: every fiber worse
      if (s % 5 == 2) c *= 7;      // a bright star: every bin worse
      if (u(rng) < 0.02) c *= 40;  // a bad fit
      if (u(rng) < 0.05) c = 1.0;  // ties
      f.chi2pix.push_back(c);
      f.flux.push_back(100 * (u(rng) - 0.2));  // some negative
      f.ivar.push_back(u(rng) < 0.03 ? -0.5 : 0.01 * u(rng));
    }
  return f;
}

template <class T>
void write_raw(std::string const& path, std::vector<T> const& v) {
  std::ofstream(path, std::ios::binary)
      .write(reinterpret_cast<char const*>(v.data()), std::streamsize(v.size() * sizeof(T)));
}

struct Reference {
  std::vector<std::uint8_t> bad2dfit;
  std::vector<extract::ScoreColumn> scores;
};

// desispec's rules in numpy on `f`.
Reference numpy_reference(Frame const& f, std::string const& dir) {
  write_raw(dir + "/wave.f8", f.wave);
  write_raw(dir + "/flux.f8", f.flux);
  write_raw(dir + "/ivar.f8", f.ivar);
  write_raw(dir + "/chi2pix.f8", f.chi2pix);
  auto const r =
      test::run_command(std::string(KSPECTER_PYTHON3) + " " +
                        KSPECTER_TEST_SOURCE_DIR "/extract/desi_quality_reference.py " + dir + " " +
                        std::to_string(f.nspec) + " " + std::to_string(f.nwave));
  EXPECT_EQ(r.status, 0) << r.out;
  Reference ref;
  std::ifstream b(dir + "/bad2dfit.u1", std::ios::binary);
  ref.bad2dfit.assign(std::istreambuf_iterator<char>(b), {});
  std::ifstream s(dir + "/scores.txt");
  for (std::string line, comment; std::getline(s, line) && std::getline(s, comment);) {
    std::istringstream fields(line);
    extract::ScoreColumn c;
    std::getline(fields, c.name, '\t');
    c.comment = comment;
    for (std::string v; std::getline(fields, v, '\t');) c.values.push_back(std::stod(v));
    ref.scores.push_back(c);
  }
  return ref;
}

void expect_same_as_numpy(Frame const& f) {
  Reference const ref = numpy_reference(f, test::scratch_dir());
  auto const bad = extract::chi2pix_bad2dfit(f.chi2pix, f.nspec, f.nwave);
  ASSERT_EQ(ref.bad2dfit.size(), bad.size());
  long long flagged = 0;
  for (std::size_t i = 0; i < bad.size(); ++i) {
    ASSERT_EQ(int(bad[i]), int(ref.bad2dfit[i]))
        << "bin " << i % f.nwave << " of spectrum " << i / f.nwave;
    flagged += bad[i];
  }
  auto const scores = extract::frame_scores(f.wave, f.flux, f.ivar, f.nspec);
  ASSERT_EQ(scores.size(), ref.scores.size());
  for (std::size_t c = 0; c < scores.size(); ++c) {
    EXPECT_EQ(scores[c].name, ref.scores[c].name);
    EXPECT_EQ(scores[c].comment, ref.scores[c].comment);
    ASSERT_EQ(scores[c].values.size(), std::size_t(f.nspec));
    ASSERT_EQ(ref.scores[c].values.size(), std::size_t(f.nspec));
    for (int s = 0; s < f.nspec; ++s) {
      // the same operations in the same order on the same numbers (numpy's pairwise sum
      // included): equal
      EXPECT_EQ(scores[c].values[s], ref.scores[c].values[s]) << scores[c].name << " " << s;
    }
  }
  SCOPED_TRACE(flagged);
}

TEST(desi_quality, same_as_desispec_rules_in_numpy) {
  // r camera, the tophat inside the grid (odd nspec, even nwave).
  expect_same_as_numpy(make_frame(1, 25, 300, 6000.0, 0.8));
  // b camera, grid overlapping the tophat's low edge (even nspec, odd nwave).
  expect_same_as_numpy(make_frame(2, 10, 151, 3900.0, 0.9));
  // z camera, grid crossing 9800 A, a step that does not divide it.
  expect_same_as_numpy(make_frame(3, 7, 400, 9600.0, 0.7));
  // r camera across 7600 A exactly on a bin (mean 7599.x: still r).
  expect_same_as_numpy(make_frame(4, 4, 101, 7559.6, 0.8));
  // one spectrum: numpy sums its contiguous row pairwise (over 128 bins: the recursion too).
  expect_same_as_numpy(make_frame(5, 1, 300, 6000.0, 0.8));
}

TEST(desi_quality, bad2dfit_corners) {
  // A NaN makes its fiber's and its bin's medians NaN: nothing there is flagged, as numpy.
  Frame f = make_frame(5, 6, 40, 6000.0, 0.8);
  f.chi2pix[2 * 40 + 7] = std::numeric_limits<double>::quiet_NaN();
  expect_same_as_numpy(f);
  auto const bad = extract::chi2pix_bad2dfit(f.chi2pix, 6, 40);
  for (int j = 0; j < 40; ++j) EXPECT_EQ(bad[2 * 40 + j], 0) << j;
  for (int s = 0; s < 6; ++s) EXPECT_EQ(bad[s * 40 + 7], 0) << s;

  // Hand-made, 3 fibers x 6 bins of 1: one bin 10x both medians is flagged; one 30x its
  // fiber's median, in a bin whose median is 8, is not (30 < 5 x 8); nor are the 8s there.
  std::vector<double> c(3 * 6, 1.0);
  c[1 * 6 + 2] = 10;                // flagged
  c[0 * 6 + 1] = c[2 * 6 + 1] = 8;  // bin 1: median 8 over the 3 fibers ...
  c[1 * 6 + 1] = 30;                // ... so 30 < 5 x 8
  auto const b = extract::chi2pix_bad2dfit(c, 3, 6);
  for (std::size_t i = 0; i < c.size(); ++i) EXPECT_EQ(b[i], i == 8 ? 1 : 0) << i;

  // apply_bad2dfit ORs the bit into the frame's mask and keeps the others.
  extract::FrameResult fr;
  fr.nspec = 3;
  fr.nwave = 6;
  fr.chi2pix = c;
  fr.mask.assign(18, extract::specmask::SOMEBADPIX);
  EXPECT_EQ(extract::apply_bad2dfit(fr), 1);
  EXPECT_EQ(fr.mask[8], extract::specmask::SOMEBADPIX | extract::specmask::BAD2DFIT);
  EXPECT_EQ(fr.mask[7], extract::specmask::SOMEBADPIX);
}

TEST(desi_quality, scores_need_the_tophat) {
  // desispec raises when no wavelength falls in the camera's tophat: so does kspecter, and
  // scores_defined says so beforehand.
  std::vector<double> wave = {3600, 3700, 3800};  // b, below 4000 A
  EXPECT_EQ(extract::score_band(wave), 'b');
  EXPECT_FALSE(extract::scores_defined(wave));
  EXPECT_THROW(extract::frame_scores(wave, std::vector<double>(3), std::vector<double>(3), 1),
               ParameterError);
  wave = {5799.5, 5800.0};  // b by its mean (<= 5800), and 5800 is not in [4000, 5800)
  EXPECT_EQ(extract::score_band(wave), 'b');
  EXPECT_TRUE(extract::scores_defined(wave));  // 5799.5 is
  wave = {5800.0, 5800.5};                     // r: 5800 is in [5800, 7600)
  EXPECT_EQ(extract::score_band(wave), 'r');
  EXPECT_TRUE(extract::scores_defined(wave));
  wave = {7600.0, 7601.0};  // z by its mean; 7600 is in [7600, 9800)
  EXPECT_EQ(extract::score_band(wave), 'z');
  EXPECT_TRUE(extract::scores_defined(wave));
  wave = {9800.0, 9900.0};  // z, beyond [7600, 9800)
  EXPECT_FALSE(extract::scores_defined(wave));
}

}  // namespace
