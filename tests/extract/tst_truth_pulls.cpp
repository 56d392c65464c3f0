// The pulls against truth (extract/truth_pulls.hpp) against a brute force in long double: the
// truth interpolated by its own search for every bin, R built dense from its diagonals and
// applied row by row.
#include <kspecter/extract/truth_pulls.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

namespace {

using kspecter::extract::FrameResult;

// A frame of `nspec` spectra on a grid of `nwave` bins with random resolution diagonals.
FrameResult random_frame(int nspec, int nwave, int ndiag, std::mt19937& rng) {
  std::uniform_real_distribution<double> u(0.0, 1.0);
  FrameResult f;
  f.nspec = nspec;
  f.nwave = nwave;
  f.ndiag = ndiag;
  f.specmin = 3;
  for (int j = 0; j < nwave; ++j) f.wavelength.push_back(5000.0 + 0.8 * j);
  std::size_t const n = std::size_t(nspec) * nwave;
  f.flux.resize(n);
  f.ivar.resize(n);
  for (std::size_t k = 0; k < n; ++k) {
    f.flux[k] = 10 * u(rng);
    f.ivar[k] = u(rng) < 0.1 ? 0.0 : 0.5 + u(rng);  // some bins masked
  }
  f.resolution.resize(n * std::size_t(2 * ndiag + 1));
  for (double& r : f.resolution) r = u(rng);
  return f;
}

// R[r][j] of spectrum i, from the diagonals as desispec stores them (offset nd - k).
long double r_dense(FrameResult const& f, int i, int r, int j) {
  int const nd = f.ndiag, nk = 2 * nd + 1, k = r + nd - j;
  if (k < 0 || k >= nk) return 0;
  return f.resolution[(std::size_t(i) * nk + std::size_t(k)) * f.nwave + std::size_t(j)];
}

// numpy.interp inside the truth's range, NaN outside.
long double interp(std::vector<double> const& tw, std::vector<double> const& tf, double w) {
  if (w < tw.front() || w > tw.back()) return std::numeric_limits<long double>::quiet_NaN();
  for (std::size_t h = 0; h < tw.size(); ++h) {
    if (tw[h] == w) return tf[h];
    if (tw[h] > w) {
      long double const a = (static_cast<long double>(w) - tw[h - 1]) / (tw[h] - tw[h - 1]);
      return (1 - a) * tf[h - 1] + a * tf[h];
    }
  }
  return std::numeric_limits<long double>::quiet_NaN();
}

}  // namespace

TEST(truth_pulls, convolution_and_statistics_match_a_dense_long_double_brute_force) {
  std::mt19937 rng(7);
  int const nspec = 6, nwave = 90, nd = 4;
  FrameResult const f = random_frame(nspec, nwave, nd, rng);
  // The truth covers the frame's grid but the first 10 bins, on a grid of its own that also
  // has some of the frame's wavelengths exactly.
  std::vector<double> tw;
  for (double w = 5008.3; w < 5000.0 + 0.8 * nwave + 3; w += 0.37) tw.push_back(w);
  tw.push_back(5000.0 + 0.8 * 40);
  std::sort(tw.begin(), tw.end());
  int const tspecmin = 4, tnspec = 4;  // spectra 4..7: frame spectra 1..4 (specmin 3)
  std::vector<double> tf(std::size_t(tnspec) * tw.size());
  std::uniform_real_distribution<double> u(0.0, 10.0);
  for (double& x : tf) x = u(rng);

  std::vector<long double> pulls;
  for (int i = 0; i < nspec; ++i) {
    int const spec = f.specmin + i;
    bool const has_truth = spec >= tspecmin && spec < tspecmin + tnspec;
    std::vector<double> truth;
    if (has_truth)
      truth.assign(tf.begin() + long(std::size_t(spec - tspecmin) * tw.size()),
                   tf.begin() + long(std::size_t(spec - tspecmin + 1) * tw.size()));
    else
      truth.assign(tw.size(), 1.0);
    auto const got = kspecter::extract::convolve_truth(f, i, tw, truth);
    ASSERT_EQ(got.size(), std::size_t(nwave));
    for (int r = 0; r < nwave; ++r) {
      long double want = std::numeric_limits<long double>::quiet_NaN();
      if (r - nd >= 0 && r + nd < nwave) {
        want = 0;
        for (int j = r - nd; j <= r + nd; ++j)
          want += r_dense(f, i, r, j) * interp(tw, truth, f.wavelength[std::size_t(j)]);
      }
      if (std::isnan(static_cast<double>(want))) {
        EXPECT_TRUE(std::isnan(got[std::size_t(r)])) << "spectrum " << i << " bin " << r;
        continue;
      }
      EXPECT_NEAR(got[std::size_t(r)], static_cast<double>(want), 1e-12 * (1 + std::fabs(want)))
          << "spectrum " << i << " bin " << r;
      std::size_t const k = std::size_t(i) * nwave + std::size_t(r);
      if (has_truth && f.ivar[k] > 0)
        pulls.push_back((f.flux[k] - want) * std::sqrt(static_cast<long double>(f.ivar[k])));
    }
  }

  auto const s = kspecter::extract::truth_pulls(f, tw, tf, tspecmin, tnspec);
  ASSERT_EQ(s.n, static_cast<long long>(pulls.size()));
  ASSERT_GT(s.n, 100);
  long double sum = 0, sum2 = 0, max_abs = 0;
  for (long double p : pulls) {
    sum += p;
    sum2 += p * p;
    max_abs = std::max(max_abs, std::fabs(p));
  }
  long double const mean = sum / pulls.size();
  EXPECT_NEAR(s.mean, static_cast<double>(mean), 1e-10);
  EXPECT_NEAR(s.std, static_cast<double>(std::sqrt(sum2 / pulls.size() - mean * mean)), 1e-9);
  EXPECT_NEAR(s.max_abs, static_cast<double>(max_abs), 1e-10);
  std::vector<long double> sorted = pulls;
  std::sort(sorted.begin(), sorted.end());
  long double const median = sorted[sorted.size() / 2];  // the upper middle, as the report's
  EXPECT_NEAR(s.median, static_cast<double>(median), 1e-10);
  std::vector<long double> dev;
  for (long double p : pulls) dev.push_back(std::fabs(p - median));
  std::sort(dev.begin(), dev.end());
  EXPECT_NEAR(s.robust_std, static_cast<double>(1.4826L * dev[dev.size() / 2]), 1e-9);
}
