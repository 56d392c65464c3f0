// The simulator's counter-based generator: Random123's published known answers for
// Philox4x32-10, and uniform, normal and Poisson variates drawn in a kernel checked against
// their exact distributions.
#include <kspecter/sim/random.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

namespace {

using kspecter::sim::CounterRng;

TEST(TEST_CATEGORY, philox_known_answers_on_device) {
  // Random123 kat_vectors: (counter, key) -> output.
  std::uint32_t const kat[3][10] = {
      {0, 0, 0, 0, 0, 0, 0x6627e8d5u, 0xe169c58du, 0xbc57ac4cu, 0x9b00dbd8u},
      {0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu, 0x408f276du,
       0x41c83b0eu, 0xa20bc7c6u, 0x6d5451fdu},
      {0x243f6a88u, 0x85a308d3u, 0x13198a2eu, 0x03707344u, 0xa4093822u, 0x299f31d0u, 0xd16cfe09u,
       0x94fdccebu, 0x5001e420u, 0x24126ea1u}};
  Kokkos::View<std::uint32_t* [10], TEST_EXECSPACE::memory_space> v("kat", 3);
  auto h = Kokkos::create_mirror_view(v);
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 10; ++j) h(i, j) = kat[i][j];
  Kokkos::deep_copy(v, h);
  Kokkos::View<std::uint32_t* [4], TEST_EXECSPACE::memory_space> out("out", 3);
  Kokkos::parallel_for(
      "kspecter::test::philox", Kokkos::RangePolicy<TEST_EXECSPACE>(0, 3), KOKKOS_LAMBDA(int i) {
        std::uint32_t c[4] = {v(i, 0), v(i, 1), v(i, 2), v(i, 3)};
        std::uint32_t k[2] = {v(i, 4), v(i, 5)};
        std::uint32_t o[4];
        kspecter::sim::philox4x32_10(c, k, o);
        for (int j = 0; j < 4; ++j) out(i, j) = o[j];
      });
  auto ho = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), out);
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 4; ++j) EXPECT_EQ(ho(i, j), kat[i][6 + j]) << i << " " << j;
}

// Draws n variates of one kind in a kernel, one generator per index.
template <class Draw>
std::vector<double> draw(int n, Draw d) {
  Kokkos::View<double*, TEST_EXECSPACE::memory_space> v("draws", n);
  Kokkos::parallel_for(
      "kspecter::test::draw", Kokkos::RangePolicy<TEST_EXECSPACE>(0, n),
      KOKKOS_LAMBDA(int i) { v(i) = d(i); });
  auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), v);
  return std::vector<double>(h.data(), h.data() + n);
}

struct Moments {
  double mean = 0, var = 0;
};
Moments moments(std::vector<double> const& x) {
  Moments m;
  for (double v : x) m.mean += v;
  m.mean /= x.size();
  for (double v : x) m.var += (v - m.mean) * (v - m.mean);
  m.var /= (x.size() - 1);
  return m;
}

TEST(TEST_CATEGORY, uniform_and_normal_moments) {
  int const n = 200000;
  auto const u = draw(
      n, KOKKOS_LAMBDA(int i) { return CounterRng(7, 9, i).uniform(); });
  for (double x : u) ASSERT_TRUE(x > 0.0 && x < 1.0) << x;
  Moments const mu = moments(u);
  EXPECT_NEAR(mu.mean, 0.5, 5 * std::sqrt(1.0 / 12 / n));
  EXPECT_NEAR(mu.var, 1.0 / 12, 5 * 0.0745 / std::sqrt(double(n)));  // sd of var: sqrt(1/180 / n)
  auto const g = draw(
      n, KOKKOS_LAMBDA(int i) { return CounterRng(7, 10, i).normal(); });
  Moments const mg = moments(g);
  EXPECT_NEAR(mg.mean, 0.0, 5 / std::sqrt(double(n)));
  EXPECT_NEAR(mg.var, 1.0, 5 * std::sqrt(2.0 / n));
  // Tails: P(|z| > 3) = 0.0026998.
  int tail = 0;
  for (double z : g) tail += std::fabs(z) > 3.0;
  EXPECT_NEAR(tail / double(n), 0.0026998, 5 * std::sqrt(0.0027 / n));
}

// Chi-square of Poisson draws against the exact probability mass function, on both sides of
// the algorithm switch at 10 and far above it.
TEST(TEST_CATEGORY, poisson_matches_exact_distribution) {
  int const n = 200000;
  for (double lambda : {0.3, 4.0, 9.9, 10.0, 27.5, 400.0, 1.0e5}) {
    auto const k = draw(
        n, KOKKOS_LAMBDA(int i) { return CounterRng(11, 1, i).poisson(lambda); });
    Moments const m = moments(k);
    EXPECT_NEAR(m.mean, lambda, 5 * std::sqrt(lambda / n)) << lambda;
    EXPECT_NEAR(m.var / lambda, 1.0, 5 * std::sqrt(2.0 / n) + 2.0 / n) << lambda;
    for (double x : k) ASSERT_EQ(x, std::floor(x)) << lambda;
    // Bins of the pmf with expectation >= 20 (the rest pooled into the two tails).
    double const sd = std::sqrt(lambda);
    long const lo = std::max(0L, long(lambda - 6 * sd)), hi = long(lambda + 6 * sd) + 2;
    std::vector<double> expect, count;
    double below = 0, above = 0, cbelow = 0, cabove = 0;
    std::vector<double> hist(hi - lo + 1, 0.0);
    for (double x : k) {
      if (x < lo)
        cbelow += 1;
      else if (x > hi)
        cabove += 1;
      else
        hist[long(x) - lo] += 1;
    }
    for (long j = lo; j <= hi; ++j) {
      double const p = std::exp(-lambda + j * std::log(lambda) - std::lgamma(j + 1.0));
      if (n * p >= 20) {
        expect.push_back(n * p);
        count.push_back(hist[j - lo]);
      } else if (j < lambda) {
        below += n * p;
        cbelow += hist[j - lo];
      } else {
        above += n * p;
        cabove += hist[j - lo];
      }
    }
    double chi2 = 0;
    int dof = -1;
    for (std::size_t j = 0; j < expect.size(); ++j, ++dof)
      chi2 += (count[j] - expect[j]) * (count[j] - expect[j]) / expect[j];
    // Mass outside [lo, hi] is negligible (< 1e-8): pooled with the tail bins.
    if (below >= 5) {
      chi2 += (cbelow - below) * (cbelow - below) / below;
      ++dof;
    }
    if (above >= 5) {
      chi2 += (cabove - above) * (cabove - above) / above;
      ++dof;
    }
    ASSERT_GT(dof, 0);
    // 5 sigma above the mean of a chi-square with dof degrees of freedom.
    EXPECT_LT(chi2, dof + 5 * std::sqrt(2.0 * dof)) << "lambda " << lambda << ", dof " << dof;
  }
  Kokkos::View<double*, TEST_EXECSPACE::memory_space> bad("bad", 4);
  auto hb = Kokkos::create_mirror_view(bad);
  hb(0) = 0.0;
  hb(1) = -3.0;
  hb(2) = std::numeric_limits<double>::quiet_NaN();
  hb(3) = std::numeric_limits<double>::infinity();
  Kokkos::deep_copy(bad, hb);
  auto const z = draw(
      4, KOKKOS_LAMBDA(int i) { return CounterRng(1, 1, i).poisson(bad(i)); });
  for (double x : z) EXPECT_EQ(x, 0.0);
}

TEST(TEST_CATEGORY, variates_depend_only_on_seed_stream_and_index) {
  int const n = 1000;
  auto const a = draw(
      n, KOKKOS_LAMBDA(int i) { return CounterRng(5, 1, i).poisson(50.0); });
  // The same indices drawn in reverse order by other threads give the same values.
  auto const b = draw(
      n, KOKKOS_LAMBDA(int i) { return CounterRng(5, 1, n - 1 - i).poisson(50.0); });
  for (int i = 0; i < n; ++i) EXPECT_EQ(a[i], b[n - 1 - i]);
  auto const c = draw(
      n, KOKKOS_LAMBDA(int i) { return CounterRng(6, 1, i).poisson(50.0); });
  auto const d = draw(
      n, KOKKOS_LAMBDA(int i) { return CounterRng(5, 2, i).poisson(50.0); });
  int same_c = 0, same_d = 0;
  for (int i = 0; i < n; ++i) {
    same_c += a[i] == c[i];
    same_d += a[i] == d[i];
  }
  EXPECT_LT(same_c, n / 10);  // P(equal) for two Poisson(50) draws is about 4 %
  EXPECT_LT(same_d, n / 10);
  // 64-bit indices: the high word matters.
  auto const hi = draw(
      2, KOKKOS_LAMBDA(int i) { return CounterRng(5, 1, std::uint64_t(i) << 32).uniform(); });
  auto const lo = draw(
      1, KOKKOS_LAMBDA(int) { return CounterRng(5, 1, 0).uniform(); });
  EXPECT_EQ(hi[0], lo[0]);
  EXPECT_NE(hi[1], lo[0]);
}

}  // namespace
