// Traces and parameters of the real r0 PSF (and the synthetic one) evaluated on each backend,
// against explicit Legendre polynomials in long double.
#include "psf_test_helpers.hpp"

#include <gtest/gtest.h>

#include <cmath>

namespace {

using namespace kspecter;

void check_traces_and_params(psf::GaussHermitePsf const& p, std::vector<int> const& fibers,
                             std::vector<double> const& waves) {
  using mem = TEST_EXECSPACE::memory_space;
  TEST_EXECSPACE space;
  auto const d = psf::to_device(space, p);
  auto const w = test::to_view<TEST_EXECSPACE>(waves);
  std::vector<std::string> const names = {"GHSIGX", "GHSIGY", "GH-0-0", "GH-1-1",
                                          "GH-2-0", "GH-0-2", "TAILAMP"};
  for (int f : fibers) {
    Kokkos::View<double**, Kokkos::LayoutRight, mem> x, y, v;
    psf::evaluate_traces(space, d, f, 1, w, x, y);
    auto hx = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), x);
    auto hy = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), y);
    for (std::size_t i = 0; i < waves.size(); ++i) {
      // Positions are up to ~4000 px: a few ulp of that.
      EXPECT_NEAR(hx(0, i), (double)test::legendre_ref(p.xtrace, f, waves[i]), 1e-10)
          << "x, fiber " << f << " at " << waves[i];
      EXPECT_NEAR(hy(0, i), (double)test::legendre_ref(p.ytrace, f, waves[i]), 1e-10)
          << "y, fiber " << f << " at " << waves[i];
      // The host evaluation (LegendreSet::value) agrees too.
      EXPECT_NEAR(p.xtrace.value(f, waves[i]), hx(0, i), 1e-10);
    }
    for (auto const& n : names) {
      int const ip = p.param_index(n);
      if (ip < 0) continue;
      psf::evaluate_param(space, d, ip, f, 1, w, v);
      auto hv = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), v);
      for (std::size_t i = 0; i < waves.size(); ++i)
        EXPECT_NEAR(hv(0, i), (double)test::legendre_ref(p.params[ip], f, waves[i]), 1e-14)
            << n << ", fiber " << f << " at " << waves[i];
    }
  }
}

TEST(TEST_CATEGORY, real_psf_traces_and_params_match_explicit_legendre) {
  KSPECTER_SHARED_DATA_OR_SKIP(path, test::real_psf_name());
  auto const& p = *test::real_psf();
  check_traces_and_params(p, {0, 1, 24, 25, 249, 250, 474, 499},
                          {5543.0, 5760.0, 6000.0, 6563.28, 7000.0, 7620.0, 7826.0});

  // Anchors from an evaluation outside kspecter (a C program with CFITSIO and its own
  // recurrence, rounded to 0.01 px): the real r0 geometry.
  TEST_EXECSPACE space;
  auto const d = psf::to_device(space, p);
  auto const w = test::to_view<TEST_EXECSPACE>({5543.0, 6700.0, 7826.0});
  Kokkos::View<double**, Kokkos::LayoutRight, TEST_EXECSPACE::memory_space> x, y;
  psf::evaluate_traces(space, d, 0, 500, w, x, y);
  auto hx = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), x);
  auto hy = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), y);
  EXPECT_NEAR(hx(0, 0), 122.96, 0.006);
  EXPECT_NEAR(hy(0, 0), -5.52, 0.006);
  EXPECT_NEAR(hx(250, 1), 2040.75, 0.006);
  EXPECT_NEAR(hy(250, 1), 1972.77, 0.006);
  EXPECT_NEAR(hx(499, 2), 3953.21, 0.006);
  EXPECT_NEAR(hy(499, 2), 4311.91, 0.006);
}

TEST(TEST_CATEGORY, synthetic_psf_traces_and_params_match_explicit_legendre) {
  auto const& p = test::synthetic_psf();
  check_traces_and_params(p, {0, 24, 25, 250, 499}, {5560.0, 5760.0, 6680.0, 7620.0, 7800.0});
}

}  // namespace
