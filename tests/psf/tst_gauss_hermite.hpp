// The building blocks of the spot kernel, evaluated on each backend: the Hermite recursion
// against the closed forms He_0..He_8, the Legendre recursion against P_0..P_8, and the
// pixel integrals against Gauss-Legendre quadrature of He_k phi (long double).
#include "reference_spot.hpp"

#include <kspecter/psf/gauss_hermite.hpp>
#include <kspecter/psf/legendre.hpp>
#include "psf/impl/spot_kernel.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

namespace {

using kspecter::test::hermite_closed;
using kspecter::test::legendre_closed;

// One pixel-integral case: pixels, fractional offset of the centre, sigma (at namespace
// scope: nvcc refuses function-local types in kernel template arguments).
struct PixelCase {
  int n;
  double frac, sigma;
};

TEST(TEST_CATEGORY, hermite_recursion_matches_closed_forms) {
  int const nt = 121, nk = 9;
  Kokkos::View<double**, Kokkos::LayoutRight, TEST_EXECSPACE::memory_space> he("he", nt, nk);
  Kokkos::View<double**, Kokkos::LayoutRight, TEST_EXECSPACE::memory_space> edge("edge", nt, nk);
  Kokkos::parallel_for(
      "kspecter::test::hermite", Kokkos::RangePolicy<TEST_EXECSPACE>(0, nt), KOKKOS_LAMBDA(int i) {
        double const t = -6.0 + 0.1 * i;
        for (int k = 0; k < nk; ++k) he(i, k) = kspecter::psf::hermite_e(k, t);
        kspecter::psf::gauss_hermite_edge(t, nk - 1, &edge(i, 0));
      });
  auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), he);
  auto e = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), edge);
  for (int i = 0; i < nt; ++i) {
    long double const t = -6.0 + 0.1 * i;
    for (int k = 0; k < nk; ++k) {
      long double const ref = hermite_closed(k, t);
      // Relative to the size of the terms of the polynomial (|t|+3)^k.
      long double const scale = std::pow(std::fabs(t) + 3.0L, k);
      EXPECT_LE(std::fabs(h(i, k) - ref), 1e-14L * scale) << "He_" << k << "(" << (double)t << ")";
    }
    // E_0 = erf(t/sqrt 2)/2, E_k = -He_{k-1} phi.
    EXPECT_NEAR(e(i, 0), std::erf((double)t / std::sqrt(2.0)) / 2, 1e-15) << (double)t;
    for (int k = 1; k < nk; ++k) {
      long double const ref = -hermite_closed(k - 1, t) * kspecter::test::phi_ref(t);
      EXPECT_LE(std::fabs(e(i, k) - ref), 1e-15L * std::pow(std::fabs(t) + 3.0L, k))
          << "E_" << k << "(" << (double)t << ")";
    }
  }
}

TEST(TEST_CATEGORY, legendre_recursion_matches_closed_forms) {
  int const nu = 41, nk = 9;
  // Coefficients e_k: the sum picks out P_k alone.
  Kokkos::View<double**, Kokkos::LayoutRight, TEST_EXECSPACE::memory_space> out("out", nu, nk);
  Kokkos::parallel_for(
      "kspecter::test::legendre", Kokkos::RangePolicy<TEST_EXECSPACE>(0, nu), KOKKOS_LAMBDA(int i) {
        double const u = -1.0 + 0.05 * i;
        for (int k = 0; k < nk; ++k) {
          double c[9] = {0, 0, 0, 0, 0, 0, 0, 0, 0};
          c[k] = 1.0;
          out(i, k) = kspecter::psf::legendre_sum(c, k + 1, u);
        }
      });
  auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), out);
  for (int i = 0; i < nu; ++i)
    for (int k = 0; k < nk; ++k)
      EXPECT_NEAR(h(i, k), (double)legendre_closed(k, -1.0L + 0.05L * i), 1e-14)
          << "P_" << k << "(" << -1.0 + 0.05 * i << ")";
  // The reduced coordinate: -1 and +1 at the ends of the range.
  EXPECT_EQ(kspecter::psf::legendre_u(5543.0, 5543.0, 7826.0), -1.0);
  EXPECT_EQ(kspecter::psf::legendre_u(7826.0, 5543.0, 7826.0), 1.0);
}

TEST(TEST_CATEGORY, pixel_integrals_match_quadrature) {
  // (pixels, fractional offset, sigma) cases: DESI's x and y spot sizes, offsets at both
  // ends of [-0.5, 0.5), narrow and wide spots.
  PixelCase const cases[] = {{17, 0.0, 1.04},  {17, -0.5, 1.04}, {17, 0.4999, 0.7},
                             {11, 0.23, 1.11}, {11, -0.31, 2.3}, {5, 0.1, 0.5}};
  int const ncase = sizeof(cases) / sizeof(cases[0]);
  int const deg = 8, nmax = 17;
  Kokkos::View<double***, Kokkos::LayoutRight, TEST_EXECSPACE::memory_space> p("p", ncase, deg + 1,
                                                                               nmax);
  Kokkos::View<PixelCase*, TEST_EXECSPACE::memory_space> dcases("cases", ncase);
  auto hc = Kokkos::create_mirror_view(dcases);
  for (int c = 0; c < ncase; ++c) hc(c) = cases[c];
  Kokkos::deep_copy(dcases, hc);
  Kokkos::parallel_for(
      "kspecter::test::pixel_integrals", Kokkos::RangePolicy<TEST_EXECSPACE>(0, ncase),
      KOKKOS_LAMBDA(int c) {
        double buf[(deg + 1) * nmax], edges[(deg + 1) * (nmax + 1)];
        PixelCase const k = dcases(c);
        kspecter::psf::pixel_integrals(k.n, k.frac, k.sigma, deg, buf, edges);
        for (int d = 0; d <= deg; ++d)
          for (int m = 0; m < k.n; ++m) p(c, d, m) = buf[d * k.n + m];
      });
  auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), p);
  double worst = 0;
  for (int c = 0; c < ncase; ++c) {
    PixelCase const k = cases[c];
    long double sum0 = 0;
    for (int d = 0; d <= deg; ++d)
      for (int m = 0; m < k.n; ++m) {
        long double const a = (m - k.n / 2 - 0.5L - k.frac) / k.sigma;
        long double const b = (m + 1 - k.n / 2 - 0.5L - k.frac) / k.sigma;
        long double const ref = kspecter::test::gh_integral_quadrature(d, a, b);
        double const err = (double)std::fabs(h(c, d, m) - ref);
        worst = std::max(worst, err);
        EXPECT_LE(err, 1e-12) << "case " << c << " degree " << d << " pixel " << m;
        if (d == 0) sum0 += h(c, d, m);
      }
    // The Gaussian's pixel integrals add up to the mass inside the spot.
    long double const a = (-k.n / 2 - 0.5L - k.frac) / k.sigma,
                      b = (k.n - k.n / 2 - 0.5L - k.frac) / k.sigma;
    EXPECT_NEAR((double)sum0,
                (double)((std::erf(b / std::sqrt(2.0L)) - std::erf(a / std::sqrt(2.0L))) / 2),
                1e-15);
  }
  RecordProperty("worst_abs_error", kspecter::test::sci(worst));
}

TEST(TEST_CATEGORY, host_edge_walk_matches_quadrature) {
  // The host kernel takes phi at the edges by ratios between neighbours (4 exp per axis):
  // the same pixel integrals, over narrow and wide spots and both signs of the offset.
  using Host = kspecter::psf::detail::SpotKernel<Kokkos::DefaultHostExecutionSpace, true>;
  PixelCase const cases[] = {{17, 0.0, 1.04},  {17, -0.5, 1.04}, {17, 0.4999, 0.3},
                             {11, 0.23, 1.11}, {11, -0.31, 3.1}, {11, -0.02, 0.25},
                             {5, 0.1, 0.5},    {31, 0.3, 0.6}};
  int const deg = 8;
  double worst = 0;
  for (PixelCase const& k : cases) {
    std::vector<double> e((deg + 1) * (k.n + 1));
    Host::edges_axis(k.n, k.frac, k.sigma, deg, e.data());
    for (int d = 0; d <= deg; ++d)
      for (int m = 0; m < k.n; ++m) {
        long double const a = (m - k.n / 2 - 0.5L - k.frac) / k.sigma;
        long double const b = (m + 1 - k.n / 2 - 0.5L - k.frac) / k.sigma;
        double const got = e[d * (k.n + 1) + m + 1] - e[d * (k.n + 1) + m];
        double const err = (double)std::fabs(got - kspecter::test::gh_integral_quadrature(d, a, b));
        worst = std::max(worst, err);
        EXPECT_LE(err, 1e-12) << "n " << k.n << " sigma " << k.sigma << " degree " << d << " pixel "
                              << m;
      }
  }
  RecordProperty("worst_abs_error", kspecter::test::sci(worst));
}

TEST(TEST_CATEGORY, corners_and_offsets) {
  // floor(X - h + 0.5) and ((X + 0.5) mod 1) - 0.5, including negative X and half-integers.
  double const xs[] = {0.0, 0.49, 0.5, 0.51, -0.5, -0.51, -3.2, 122.96, 4113.5, -5.52};
  int const n = sizeof(xs) / sizeof(xs[0]);
  Kokkos::View<double*, TEST_EXECSPACE::memory_space> x("x", n), off("off", n);
  Kokkos::View<int*, TEST_EXECSPACE::memory_space> c("c", n);
  auto hx = Kokkos::create_mirror_view(x);
  for (int i = 0; i < n; ++i) hx(i) = xs[i];
  Kokkos::deep_copy(x, hx);
  Kokkos::parallel_for(
      "kspecter::test::corners", Kokkos::RangePolicy<TEST_EXECSPACE>(0, n), KOKKOS_LAMBDA(int i) {
        c(i) = kspecter::psf::spot_corner(x(i), 8);
        off(i) = kspecter::psf::pixel_offset(x(i));
      });
  auto hc = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), c);
  auto ho = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), off);
  for (int i = 0; i < n; ++i) {
    EXPECT_EQ(hc(i), (int)std::floor(xs[i] - 8 + 0.5)) << xs[i];
    EXPECT_GE(ho(i), -0.5) << xs[i];
    EXPECT_LT(ho(i), 0.5) << xs[i];
    // X = (centre pixel) + offset, the centre pixel being corner + hsize.
    EXPECT_NEAR(hc(i) + 8 + ho(i), xs[i], 1e-12) << xs[i];
  }
}

}  // namespace
