// Detector noise: over big flat regions the pulls (data - expected) * sqrt(ivar) have mean 0
// and variance 1 at every signal level; noiseless mode writes the expected image; values
// depend only on the seed.
#include <kspecter/sim/noise.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

namespace {

using mem = TEST_EXECSPACE::memory_space;
using V2 = Kokkos::View<double**, Kokkos::LayoutRight, mem>;
using V2f = Kokkos::View<float**, Kokkos::LayoutRight, mem>;

struct Noisy {
  std::vector<float> image, ivar;
};

// Four flat quadrants of `levels` electrons each, 2 ny x 2 nx pixels.
Noisy run_noise(int ny, int nx, double const levels[4], kspecter::sim::NoiseOptions const& o,
                V2* expected_out = nullptr) {
  V2 expected("expected", 2 * ny, 2 * nx);
  auto h = Kokkos::create_mirror_view(expected);
  for (int y = 0; y < 2 * ny; ++y)
    for (int x = 0; x < 2 * nx; ++x) h(y, x) = levels[(y / ny) * 2 + x / nx];
  Kokkos::deep_copy(expected, h);
  V2f image("image", 2 * ny, 2 * nx), ivar("ivar", 2 * ny, 2 * nx);
  kspecter::sim::add_noise(TEST_EXECSPACE(),
                           Kokkos::View<double const**, Kokkos::LayoutRight, mem>(expected), image,
                           ivar, o);
  auto hi = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), image);
  auto hv = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), ivar);
  if (expected_out) *expected_out = expected;
  return {std::vector<float>(hi.data(), hi.data() + hi.size()),
          std::vector<float>(hv.data(), hv.data() + hv.size())};
}

TEST(TEST_CATEGORY, noise_pulls_have_unit_variance) {
  int const ny = 256, nx = 256;
  for (double rn : {3.0, 0.0}) {
    double const levels[4] = {0.7, 12.0, 450.0, 30000.0};
    kspecter::sim::NoiseOptions o;
    o.seed = 99;
    o.readnoise = rn;
    Noisy const r = run_noise(ny, nx, levels, o);
    for (int q = 0; q < 4; ++q) {
      double const lambda = levels[q];
      double const ivar_want = 1.0 / (lambda + rn * rn);
      double sum = 0, sum2 = 0;
      long n = 0;
      for (int y = (q / 2) * ny; y < (q / 2 + 1) * ny; ++y)
        for (int x = (q % 2) * nx; x < (q % 2 + 1) * nx; ++x) {
          std::size_t const p = std::size_t(y) * 2 * nx + x;
          ASSERT_EQ(r.ivar[p], static_cast<float>(ivar_want));
          double const pull = (r.image[p] - lambda) * std::sqrt(ivar_want);
          sum += pull;
          sum2 += pull * pull;
          ++n;
        }
      double const mean = sum / n, var = sum2 / n - mean * mean;
      // Standard errors: 1/sqrt(n) for the mean; the variance's depends on the kurtosis of a
      // Poisson (1/lambda), which is large only for the faintest level.
      double const kurt_excess =
          lambda > 0 ? lambda / ((lambda + rn * rn) * (lambda + rn * rn)) : 0;
      EXPECT_NEAR(mean, 0.0, 5.0 / std::sqrt(double(n))) << "level " << lambda << " rn " << rn;
      EXPECT_NEAR(var, 1.0, 5.0 * std::sqrt((2.0 + kurt_excess) / n))
          << "level " << lambda << " rn " << rn;
    }
  }
}

TEST(TEST_CATEGORY, noiseless_writes_expected_exactly) {
  double const levels[4] = {0.0, 1.0 / 3.0, -2.0, 1e6 + 0.25};
  kspecter::sim::NoiseOptions o;
  o.readnoise = 2.5;
  o.noiseless = true;
  Noisy const r = run_noise(8, 8, levels, o);
  for (int y = 0; y < 16; ++y)
    for (int x = 0; x < 16; ++x) {
      double const e = levels[(y / 8) * 2 + x / 8];
      std::size_t const p = std::size_t(y) * 16 + x;
      EXPECT_EQ(r.image[p], static_cast<float>(e));
      EXPECT_EQ(r.ivar[p], static_cast<float>(1.0 / ((e > 0 ? e : 0.0) + 6.25)));
    }
  // No read noise and no light: a zero variance gives ivar 0, not infinity.
  o.readnoise = 0.0;
  o.noiseless = false;
  double const dark[4] = {0.0, 0.0, 5.0, 0.0};
  Noisy const d = run_noise(4, 4, dark, o);
  for (std::size_t p = 0; p < d.image.size(); ++p) {
    EXPECT_TRUE(std::isfinite(d.ivar[p]));
    if ((p / 8) / 4 == 1 && (p % 8) / 4 == 0) {
      EXPECT_EQ(d.ivar[p], 0.2f);
      EXPECT_EQ(d.image[p], std::floor(d.image[p]));  // pure Poisson counts
    } else {
      EXPECT_EQ(d.ivar[p], 0.0f);
      EXPECT_EQ(d.image[p], 0.0f);
    }
  }
  o.readnoise = -1.0;
  EXPECT_THROW(run_noise(2, 2, dark, o), kspecter::ParameterError);
}

TEST(TEST_CATEGORY, noise_is_a_function_of_the_seed) {
  double const levels[4] = {10.0, 100.0, 1000.0, 5.0};
  kspecter::sim::NoiseOptions o;
  o.seed = 5;
  Noisy const a = run_noise(64, 64, levels, o), b = run_noise(64, 64, levels, o);
  EXPECT_EQ(std::memcmp(a.image.data(), b.image.data(), a.image.size() * sizeof(float)), 0);
  o.seed = 6;
  Noisy const c = run_noise(64, 64, levels, o);
  int same = 0;
  for (std::size_t p = 0; p < a.image.size(); ++p) same += a.image[p] == c.image[p];
  EXPECT_LT(same, int(a.image.size() / 50));
}

}  // namespace
