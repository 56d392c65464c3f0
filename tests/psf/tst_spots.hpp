// The spot kernel on each backend: against the long-double reference of docs/algorithm.md §2,
// invariants (>= 0, sum 1, centroid in the central pixel), agreement with the host backend,
// tails, other degrees and spot sizes, and the range checks.
#include "psf_test_helpers.hpp"

#include <kspecter/core/error.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

namespace {

using namespace kspecter;
using test::HostSpots;
using test::spots_on;
using test::wave_grid;

// Bound on |spot - reference|, every backend. (CUDA spots are compiled without fused
// multiply-adds, src/psf/spots_backend.cpp.in: with them, they were up to 5.8e-14 away.)
constexpr double spot_tol = 1e-14;

TEST(TEST_CATEGORY, synthetic_spots_match_reference) {
  auto const& p = test::synthetic_psf();
  auto const waves = wave_grid(p.wavemin(), p.wavemax(), 23);  // both ends of the range
  int const f0 = 118, nf = 12;                                 // across a bundle edge
  HostSpots const s = spots_on<TEST_EXECSPACE>(p, f0, nf, waves);
  double const worst = test::max_diff_to_reference(p, s, f0, waves, false);
  EXPECT_LE(worst, spot_tol);
  RecordProperty("max_abs_diff", kspecter::test::sci(worst));
}

TEST(TEST_CATEGORY, real_spots_match_reference) {
  KSPECTER_SHARED_DATA_OR_SKIP(path, test::real_psf_name());
  auto const& p = *test::real_psf();
  auto const waves = wave_grid(5760.0, 7620.0, 17);
  for (int f0 : {0, 243, 488}) {
    HostSpots const s = spots_on<TEST_EXECSPACE>(p, f0, 12, waves);
    double const worst = test::max_diff_to_reference(p, s, f0, waves, false);
    EXPECT_LE(worst, spot_tol) << "fibers from " << f0;
    RecordProperty("max_abs_diff_" + std::to_string(f0), kspecter::test::sci(worst));
  }
}

TEST(TEST_CATEGORY, spots_are_normalised_nonnegative_and_centred) {
  for (int which = 0; which < 2; ++which) {
    psf::GaussHermitePsf const* p = which == 0 ? &test::synthetic_psf() : test::real_psf();
    if (!p) continue;  // no shared data: the synthetic PSF alone
    auto const waves = wave_grid(p->wavemin(), p->wavemax(), 160);
    int const f0 = 25, nf = 25;
    HostSpots const s = spots_on<TEST_EXECSPACE>(*p, f0, nf, waves);
    // Trace positions, to place the centroid.
    TEST_EXECSPACE space;
    auto const d = psf::to_device(space, *p);
    auto const w = test::to_view<TEST_EXECSPACE>(waves);
    Kokkos::View<double**, Kokkos::LayoutRight, TEST_EXECSPACE::memory_space> x, y;
    psf::evaluate_traces(space, d, f0, nf, w, x, y);
    auto hx = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), x);
    auto hy = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), y);
    double worst_sum = 0, worst_cx = 0, worst_cy = 0;
    for (int f = 0; f < nf; ++f)
      for (int iw = 0; iw < s.nwave; ++iw) {
        double const* v = s.spot(f, iw);
        double sum = 0, mx = 0, my = 0;
        for (int iy = 0; iy < s.ny; ++iy)
          for (int ix = 0; ix < s.nx; ++ix) {
            double const a = v[iy * s.nx + ix];
            ASSERT_GE(a, 0.0) << "fiber " << f0 + f << " wave " << waves[iw];
            sum += a;
            mx += a * ix;
            my += a * iy;
          }
        worst_sum = std::max(worst_sum, std::fabs(sum - 1));
        // The trace lies in the central pixel: -0.5 <= X - xc - hsizex < 0.5.
        double const dx = hx(f, iw) - s.xc[f * s.nwave + iw] - p->hsizex;
        double const dy = hy(f, iw) - s.yc[f * s.nwave + iw] - p->hsizey;
        EXPECT_TRUE(dx >= -0.5 && dx < 0.5) << dx;
        EXPECT_TRUE(dy >= -0.5 && dy < 0.5) << dy;
        // And so does the spot's centroid, within the asymmetry of the GH terms.
        worst_cx = std::max(worst_cx, std::fabs(mx - p->hsizex));
        worst_cy = std::max(worst_cy, std::fabs(my - p->hsizey));
      }
    EXPECT_LE(worst_sum, 1e-13) << (which ? "real" : "synthetic");
    EXPECT_LT(worst_cx, 0.7) << (which ? "real" : "synthetic");
    EXPECT_LT(worst_cy, 0.7) << (which ? "real" : "synthetic");
  }
}

TEST(TEST_CATEGORY, spots_agree_with_host_backend) {
  psf::GaussHermitePsf const* p = test::real_psf();
  if (!p) p = &test::synthetic_psf();
  auto const waves = wave_grid(5760.0, 7620.0, 97);
  int const f0 = 200, nf = 40;
  HostSpots const a = spots_on<TEST_EXECSPACE>(*p, f0, nf, waves);
  HostSpots const b = spots_on<Kokkos::DefaultHostExecutionSpace>(*p, f0, nf, waves);
  double worst = 0;
  for (std::size_t i = 0; i < a.v.size(); ++i) worst = std::max(worst, std::fabs(a.v[i] - b.v[i]));
  EXPECT_LE(worst, spot_tol);
  EXPECT_EQ(a.xc, b.xc);
  EXPECT_EQ(a.yc, b.yc);
  RecordProperty("max_abs_diff_vs_host", kspecter::test::sci(worst));
}

TEST(TEST_CATEGORY, spots_do_not_depend_on_the_launch_shape) {
  auto const& p = test::synthetic_psf();
  auto const waves = wave_grid(5700.0, 7700.0, 37);  // not a multiple of the block sizes
  HostSpots const ref = spots_on<TEST_EXECSPACE>(p, 40, 7, waves);
  for (int wpt : {1, 3, 5, 64}) {
    psf::SpotOptions o;
    o.waves_per_team = wpt;
    HostSpots const s = spots_on<TEST_EXECSPACE>(p, 40, 7, waves, o);
    EXPECT_EQ(s.v, ref.v) << "waves per team " << wpt;
    EXPECT_EQ(s.xc, ref.xc);
    EXPECT_EQ(s.yc, ref.yc);
  }
}

TEST(TEST_CATEGORY, team_driver_agrees) {
  // The GPU's team driver, run here on whatever TEST_EXECSPACE is (on a host backend with
  // as many threads per team as the pool has): same spots as the default driver.
  psf::GaussHermitePsf const* p = test::real_psf();
  if (!p) p = &test::synthetic_psf();
  auto const waves = wave_grid(5760.0, 7620.0, 41);
  HostSpots const a = spots_on<TEST_EXECSPACE>(*p, 100, 13, waves);
  for (int wpt : {1, 3, 8}) {
    psf::SpotOptions o;
    o.team_driver = true;
    o.waves_per_team = wpt;
    o.team_size = 4;
    HostSpots const b = spots_on<TEST_EXECSPACE>(*p, 100, 13, waves, o);
    double worst = 0;
    for (std::size_t i = 0; i < a.v.size(); ++i)
      worst = std::max(worst, std::fabs(a.v[i] - b.v[i]));
    EXPECT_LE(worst, spot_tol) << "waves per team " << wpt;
    EXPECT_EQ(a.xc, b.xc);
    EXPECT_EQ(a.yc, b.yc);
    EXPECT_LE(test::max_diff_to_reference(*p, b, 100, waves, false), spot_tol);
  }
}

TEST(TEST_CATEGORY, other_degrees_and_spot_sizes) {
  psf::SyntheticPsfOptions o;
  o.nfiber = 30;
  o.ghdegx = 3;
  o.ghdegy = 5;
  o.hsizex = 4;
  o.hsizey = 7;
  o.legdeg = 1;
  o.trace_ncoef = 4;
  o.seed = 7;
  auto const p = psf::make_synthetic_psf(o);
  auto const waves = wave_grid(p.wavemin(), p.wavemax(), 19);
  HostSpots const s = spots_on<TEST_EXECSPACE>(p, 3, 20, waves);
  EXPECT_EQ(s.ny, 15);
  EXPECT_EQ(s.nx, 9);
  EXPECT_LE(test::max_diff_to_reference(p, s, 3, waves, false), spot_tol);
  // Degree 0: a pure pixel-integrated Gaussian.
  o.ghdegx = o.ghdegy = 0;
  auto const g = psf::make_synthetic_psf(o);
  HostSpots const sg = spots_on<TEST_EXECSPACE>(g, 0, 30, waves);
  EXPECT_LE(test::max_diff_to_reference(g, sg, 0, waves, false), spot_tol);
}

TEST(TEST_CATEGORY, narrow_and_wide_spots) {
  // Widths far from DESI's: 0.35 px across (undersampled), 2.8 px along the trace.
  psf::SyntheticPsfOptions o;
  o.nfiber = 25;
  auto p = psf::make_synthetic_psf(o);
  for (double& c : p.params[p.param_index("GHSIGX")].coeff) c *= 0.35;
  for (double& c : p.params[p.param_index("GHSIGY")].coeff) c *= 2.5;
  ASSERT_EQ(psf::check_psf(p), "");
  auto const waves = wave_grid(p.wavemin(), p.wavemax(), 29);
  HostSpots const s = spots_on<TEST_EXECSPACE>(p, 0, 25, waves);
  double const worst = test::max_diff_to_reference(p, s, 0, waves, false);
  EXPECT_LE(worst, spot_tol);
  HostSpots const h = spots_on<Kokkos::DefaultHostExecutionSpace>(p, 0, 25, waves);
  double d = 0;
  for (std::size_t i = 0; i < s.v.size(); ++i) d = std::max(d, std::fabs(s.v[i] - h.v[i]));
  EXPECT_LE(d, spot_tol);
  RecordProperty("max_abs_diff", kspecter::test::sci(worst));
}

TEST(TEST_CATEGORY, tails_follow_tailamp) {
  psf::SyntheticPsfOptions o;
  o.nfiber = 25;
  o.tailamp = 0.02;
  auto const p = psf::make_synthetic_psf(o);
  ASSERT_TRUE(p.has_tails());
  EXPECT_FALSE(test::synthetic_psf().has_tails());
  {
    TEST_EXECSPACE space;
    EXPECT_TRUE(psf::to_device(space, p).tails);
    EXPECT_FALSE(psf::to_device(space, test::synthetic_psf()).tails);
  }
  auto const waves = wave_grid(p.wavemin(), p.wavemax(), 13);
  HostSpots const with = spots_on<TEST_EXECSPACE>(p, 5, 10, waves);
  EXPECT_LE(test::max_diff_to_reference(p, with, 5, waves, true), spot_tol);
  psf::SpotOptions off;
  off.tails = false;  // gpu_specter's behaviour
  HostSpots const without = spots_on<TEST_EXECSPACE>(p, 5, 10, waves, off);
  EXPECT_LE(test::max_diff_to_reference(p, without, 5, waves, false), spot_tol);
  double differ = 0;
  for (std::size_t i = 0; i < with.v.size(); ++i)
    differ = std::max(differ, std::fabs(with.v[i] - without.v[i]));
  EXPECT_GT(differ, 1e-4) << "the tails changed nothing";
}

TEST(TEST_CATEGORY, wavelengths_outside_the_psf_are_refused) {
  auto const& p = test::synthetic_psf();
  using mem = TEST_EXECSPACE::memory_space;
  TEST_EXECSPACE space;
  auto const d = psf::to_device(space, p);
  psf::Spots<mem> s;
  auto const below = test::to_view<TEST_EXECSPACE>({6000.0, p.wavemin() - 0.01});
  auto const above = test::to_view<TEST_EXECSPACE>({p.wavemax() + 1.0});
  auto const nan = test::to_view<TEST_EXECSPACE>({6000.0, std::nan("")});
  auto const ok = test::to_view<TEST_EXECSPACE>({6000.0});
  EXPECT_THROW(psf::compute_spots(space, p, d, 0, 5, below, s), ParameterError);
  EXPECT_THROW(psf::compute_spots(space, p, d, 0, 5, above, s), ParameterError);
  EXPECT_THROW(psf::compute_spots(space, p, d, 0, 5, nan, s, true), ParameterError);
  EXPECT_THROW(psf::compute_spots(space, p, d, 490, 20, ok, s), ParameterError);
  EXPECT_THROW(psf::compute_spots(space, p, d, -1, 2, ok, s), ParameterError);
  try {
    psf::compute_spots(space, p, d, 0, 5, below, s);
  } catch (ParameterError const& e) {
    EXPECT_NE(std::string(e.what()).find("outside the PSF's range"), std::string::npos) << e.what();
  }
  // Allowed: the series are extrapolated and the spots stay normalised.
  psf::compute_spots(space, p, d, 0, 5, below, s, true);
  space.fence();
  auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), s.values);
  for (int f = 0; f < 5; ++f)
    for (int w = 0; w < 2; ++w) {
      double sum = 0;
      for (int iy = 0; iy < p.spot_ny(); ++iy)
        for (int ix = 0; ix < p.spot_nx(); ++ix) sum += h(f, w, iy, ix);
      EXPECT_NEAR(sum, 1.0, 1e-13);
    }
  // Nothing to do is not an error.
  auto const none = test::to_view<TEST_EXECSPACE>({});
  psf::compute_spots(space, p, d, 0, 5, none, s);
  EXPECT_EQ(s.values.extent(1), 0u);
}

}  // namespace
