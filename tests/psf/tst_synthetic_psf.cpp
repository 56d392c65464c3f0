// The synthetic PSF: deterministic, self-consistent, and shaped like a DESI r camera.
#include <kspecter/core/error.hpp>
#include <kspecter/psf/synthetic_psf.hpp>

#include <gtest/gtest.h>

#include <cmath>

namespace {

using namespace kspecter;

TEST(synthetic_psf, is_deterministic_and_consistent) {
  auto const a = psf::make_synthetic_psf();
  auto const b = psf::make_synthetic_psf();
  EXPECT_EQ(psf::check_psf(a), "");
  EXPECT_EQ(a.xtrace.coeff, b.xtrace.coeff);
  EXPECT_EQ(a.ytrace.coeff, b.ytrace.coeff);
  ASSERT_EQ(a.params.size(), b.params.size());
  for (std::size_t i = 0; i < a.params.size(); ++i) EXPECT_EQ(a.params[i].coeff, b.params[i].coeff);
  // Another seed moves things a little.
  psf::SyntheticPsfOptions o;
  o.seed = 1;
  auto const c = psf::make_synthetic_psf(o);
  EXPECT_NE(a.xtrace.coeff, c.xtrace.coeff);
  EXPECT_EQ(psf::check_psf(c), "");
}

TEST(synthetic_psf, has_desi_r_geometry) {
  auto const p = psf::make_synthetic_psf();
  EXPECT_EQ(p.nfiber, 500);
  EXPECT_EQ(p.npix_x, 4114);
  EXPECT_EQ(p.npix_y, 4128);
  EXPECT_EQ(p.hsizex, 8);
  EXPECT_EQ(p.hsizey, 5);
  EXPECT_LE(p.ghdegx, 6);
  EXPECT_LE(p.ghdegy, 6);
  EXPECT_FALSE(p.has_tails());
  // The range covers r (5760-7620) plus extraction's padding (12 bins below, 62 above).
  EXPECT_LE(p.wavemin(), 5760.0 - 12 * 0.8);
  EXPECT_GE(p.wavemax(), 7620.0 + 62 * 0.8);
  double const wmid = 6690.0;
  for (int f = 0; f + 1 < p.nfiber; ++f) {
    double const gap = p.xtrace.value(f + 1, wmid) - p.xtrace.value(f, wmid);
    if ((f + 1) % 25 == 0)
      EXPECT_NEAR(gap, 19.4, 0.5) << "between bundles at fiber " << f;
    else
      EXPECT_NEAR(gap, 7.28, 0.4) << "within a bundle at fiber " << f;
  }
  for (int f = 0; f < p.nfiber; ++f) {
    // On the CCD over the extraction range, y increasing with wavelength.
    double prev = -1e9;
    for (double w = 5750.0; w <= 7670.0; w += 40.0) {
      double const x = p.xtrace.value(f, w), y = p.ytrace.value(f, w);
      EXPECT_GT(x, 50.0);
      EXPECT_LT(x, 4114.0 - 50.0);
      EXPECT_GT(y, 0.0);
      EXPECT_LT(y, 4128.0);
      EXPECT_GT(y, prev + 40.0 / 0.6) << "dispersion ~0.53 A/px";
      prev = y;
      double const sx = p.params[p.param_index("GHSIGX")].value(f, w);
      double const sy = p.params[p.param_index("GHSIGY")].value(f, w);
      EXPECT_GT(sx, 0.9);
      EXPECT_LT(sx, 1.3);
      EXPECT_GT(sy, 0.95);
      EXPECT_LT(sy, 1.35);
    }
  }
  // Curved traces: edge fibers drift in x along the trace, and the smile in y.
  EXPECT_GT(std::fabs(p.xtrace.value(0, 5760) - p.xtrace.value(0, 7620)), 5.0);
  EXPECT_GT(p.ytrace.value(0, wmid) - p.ytrace.value(250, wmid), 80.0);
  // Widths vary with wavelength.
  int const isy = p.param_index("GHSIGY");
  EXPECT_GT(p.params[isy].value(250, 7620) - p.params[isy].value(250, 5760), 0.05);
}

TEST(synthetic_psf, refuses_nonsense) {
  psf::SyntheticPsfOptions o;
  o.nfiber = 0;
  EXPECT_THROW(psf::make_synthetic_psf(o), ParameterError);
  o = {};
  o.nfiber = 700;  // wider than the CCD
  EXPECT_THROW(psf::make_synthetic_psf(o), ParameterError);
  o = {};
  o.wavemin = o.wavemax;
  EXPECT_THROW(psf::make_synthetic_psf(o), ParameterError);
  o = {};
  o.ghdegx = -1;
  EXPECT_THROW(psf::make_synthetic_psf(o), ParameterError);
  o = {};
  o.hsizey = 0;
  EXPECT_THROW(psf::make_synthetic_psf(o), ParameterError);
}

TEST(synthetic_psf, check_psf_names_problems) {
  auto p = psf::make_synthetic_psf();
  p.params[p.gh_index(2, 3)].coeff[17] = std::nan("");
  EXPECT_NE(psf::check_psf(p).find("GH-2-3"), std::string::npos) << psf::check_psf(p);
  p = psf::make_synthetic_psf();
  p.ghdegx = 7;
  EXPECT_NE(psf::check_psf(p).find("GH-7-0 is missing"), std::string::npos) << psf::check_psf(p);
  p = psf::make_synthetic_psf();
  p.ghdegy = 5;
  EXPECT_NE(psf::check_psf(p).find("exceeds"), std::string::npos) << psf::check_psf(p);
  p = psf::make_synthetic_psf();
  p.params[p.param_index("GHSIGX")].coeff[0] = -1.0;
  EXPECT_NE(psf::check_psf(p).find("not positive"), std::string::npos) << psf::check_psf(p);
  p = psf::make_synthetic_psf();
  p.ytrace.coeff.pop_back();
  EXPECT_NE(psf::check_psf(p).find("YTRACE"), std::string::npos) << psf::check_psf(p);
}

}  // namespace
