// The barycentric factor against astropy (a table made by make_barycentric_table.py) and
// against closed forms: the annual cycle of the Earth's orbit, the Earth's rotation at the
// site, and the exact structure gamma (1 + beta . n) / (1 + phi/c^2) of the factor.
#include <kspecter/astro/barycentric.hpp>
#include <kspecter/core/error.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

#include "barycentric_astropy_table.hpp"

namespace {

using kspecter::astro::barycentric_factor;
using kspecter::astro::EarthOrientation;
using kspecter::astro::kitt_peak;
using kspecter::astro::Site;
using kspecter::astro::testing::astropy_cases;

constexpr double pi = 3.14159265358979323846;
constexpr double c_km_s = 299792.458;
constexpr double mjd_2024 = 60310.0;  // 2024-01-01
constexpr double obliquity_deg = 23.4392911;

/// The unit vector's (RA, Dec) in degrees, for tests that build targets from vectors.
void to_radec(double x, double y, double z, double& ra_deg, double& dec_deg) {
  ra_deg = std::atan2(y, x) * 180.0 / pi;
  if (ra_deg < 0) ra_deg += 360.0;
  dec_deg = std::asin(z / std::sqrt(x * x + y * y + z * z)) * 180.0 / pi;
}

double factor_along(double x, double y, double z, double mjd) {
  double ra = 0, dec = 0;
  to_radec(x, y, z, ra, dec);
  return barycentric_factor(ra, dec, mjd, kitt_peak());
}

TEST(Barycentric, KittPeakIsDesispecsMayall) {
  Site const kp = kitt_peak();
  EXPECT_EQ(kp.longitude_deg, -111.59989);
  EXPECT_EQ(kp.latitude_deg, 31.96403);
  EXPECT_EQ(kp.height_m, 2097.0);
}

// Given the UT1-UTC and pole astropy interpolated from its IERS-B table, the factor is
// astropy's up to rounding: every term is the same ERFA routine on the same numbers.
TEST(Barycentric, AgreesWithAstropyGivenItsEarthOrientation) {
  double worst = 0;
  for (auto const& c : astropy_cases) {
    EarthOrientation const eop{c.dut1_s, c.xp_rad, c.yp_rad};
    double const f = barycentric_factor(c.ra_deg, c.dec_deg, c.mjd_utc, kitt_peak(), eop);
    EXPECT_NEAR(f, c.factor, 1e-14) << c.utc << " RA " << c.ra_deg << " Dec " << c.dec_deg;
    worst = std::max(worst, std::fabs(f - c.factor));
  }
  std::printf("max |factor - astropy| with astropy's Earth orientation: %.2e\n", worst);
}

// With the defaults (UT1 = UTC, the mean pole: astropy's own choice outside its tables) the
// factor differs from astropy's only by the site's rotation through UT1-UTC: at most
// omega_earth^2 * (distance from the axis) * |UT1-UTC| / c, below 1e-10 as |UT1-UTC| < 0.9 s.
TEST(Barycentric, AgreesWithAstropyByDefault) {
  double const omega = 2 * pi * 1.00273781191135448 / 86400.0;
  double const axis_distance_m = 5.42e6;  // Kitt Peak, see SiteRotationMatchesClosedForm
  double const per_second = omega * omega * axis_distance_m / (c_km_s * 1e3);
  double worst = 0;
  std::printf("%-20s %8s %8s %20s %20s %10s\n", "UTC", "RA", "Dec", "kspecter", "astropy", "diff");
  for (auto const& c : astropy_cases) {
    double const f = barycentric_factor(c.ra_deg, c.dec_deg, c.mjd_utc, kitt_peak());
    double const diff = f - c.factor;
    std::printf("%-20s %8.3f %8.3f %20.17f %20.17f %10.2e\n", c.utc, c.ra_deg, c.dec_deg, f,
                c.factor, diff);
    EXPECT_NEAR(f, c.factor, 1e-9) << c.utc;
    EXPECT_LE(std::fabs(diff), per_second * std::fabs(c.dut1_s) + 1e-11) << c.utc;
    worst = std::max(worst, std::fabs(diff));
  }
  std::printf("max |factor - astropy| by default: %.2e\n", worst);
  EXPECT_LT(worst, 1e-10);
}

// factor(n) + factor(-n) = 2 gamma / (1 + phi/c^2) for every direction n: about v^2/2c^2
// (5e-9) plus GM_sun/(c^2 au) (9.9e-9) plus the Earth's potential at the site (7e-10).
TEST(Barycentric, AntipodalMeanIsTheSameEverywhere) {
  for (double mjd : {mjd_2024, mjd_2024 + 91.3, mjd_2024 + 182.6, mjd_2024 + 273.9}) {
    double const reference = (factor_along(1, 0, 0, mjd) + factor_along(-1, 0, 0, mjd)) / 2;
    EXPECT_GT(reference - 1, 1.45e-8);
    EXPECT_LT(reference - 1, 1.65e-8);
    for (double ra = 7; ra < 360; ra += 47) {
      for (double dec : {-80.0, -33.0, 0.0, 12.5, 61.0}) {
        double const ra2 = std::fmod(ra + 180.0, 360.0);
        double const mean = (barycentric_factor(ra, dec, mjd, kitt_peak()) +
                             barycentric_factor(ra2, -dec, mjd, kitt_peak())) /
                            2;
        EXPECT_NEAR(mean, reference, 6e-16) << "RA " << ra << " Dec " << dec;
      }
    }
  }
}

// factor(n) - mean is gamma beta . n / (1 + phi/c^2): linear in n.
TEST(Barycentric, DipoleIsLinearInTheDirection) {
  double const mjd = mjd_2024 + 40.25;
  double const mean = (factor_along(1, 0, 0, mjd) + factor_along(-1, 0, 0, mjd)) / 2;
  double const dx = factor_along(1, 0, 0, mjd) - mean;
  double const dy = factor_along(0, 1, 0, mjd) - mean;
  double const dz = factor_along(0, 0, 1, mjd) - mean;
  double const speed = std::sqrt(dx * dx + dy * dy + dz * dz) * c_km_s;
  EXPECT_GT(speed, 29.29 - 0.42);  // the Earth's orbital speed, plus or minus the site's
  EXPECT_LT(speed, 30.29 + 0.42);
  for (double ra = 3; ra < 360; ra += 31) {
    for (double dec = -85; dec < 90; dec += 17) {
      double const r = ra * pi / 180, d = dec * pi / 180;
      double const expected =
          mean + std::cos(d) * std::cos(r) * dx + std::cos(d) * std::sin(r) * dy + std::sin(d) * dz;
      EXPECT_NEAR(barycentric_factor(ra, dec, mjd, kitt_peak()), expected, 1e-15)
          << "RA " << ra << " Dec " << dec;
    }
  }
}

// Over a year a target in the ecliptic plane swings by the orbital speed, 29.3 to 30.3 km/s
// (plus or minus the site's 0.4 km/s): an amplitude of about 1e-4. Toward the equinox point
// (RA 0, Dec 0) the Earth runs fastest at the June solstice, when the Sun is at longitude 90.
// At the ecliptic pole only the site's rotation (0.39 km/s x sin(obliquity)) and the Sun's
// wobble about the barycentre (0.013 km/s) remain.
TEST(Barycentric, AnnualCycleInThePlaneNotAtThePole) {
  double const eps = obliquity_deg * pi / 180;
  double plane_min = 1, plane_max = 1, pole_worst = 0, mjd_of_max = 0;
  for (double day = 0; day < 366; day += 0.5) {
    double const mjd = mjd_2024 + day;
    double const mean = (factor_along(1, 0, 0, mjd) + factor_along(-1, 0, 0, mjd)) / 2;
    double const plane = barycentric_factor(0.0, 0.0, mjd, kitt_peak());
    if (plane > plane_max) mjd_of_max = mjd;
    plane_max = std::max(plane_max, plane);
    plane_min = std::min(plane_min, plane);
    double const pole = factor_along(0, -std::sin(eps), std::cos(eps), mjd);
    pole_worst = std::max(pole_worst, std::fabs(pole - mean));
  }
  double const amplitude = (plane_max - plane_min) / 2;
  EXPECT_GT(amplitude, (29.29 - 0.42) / c_km_s);
  EXPECT_LT(amplitude, (30.29 + 0.42) / c_km_s);
  EXPECT_NEAR(mjd_of_max, 60482.0, 10.0);  // 2024-06-20
  EXPECT_LT(pole_worst, (0.392 * std::sin(eps) + 0.02) / c_km_s);
  EXPECT_GT(pole_worst, 0.0);
}

// Two sites at the same latitude and height, 180 degrees apart, move at opposite rotation
// velocities omega * rho, rho = (N + h) cos(lat) on the WGS84 ellipsoid. The dipole
// (factor(n) - factor(-n)) / 2 = gamma beta . n / (1 + phi/c^2) of one site minus the other's
// is largest along the CIP's equator (0.13 degree from the celestial equator by 2024): there
// it is 2 omega rho / c. (The factors themselves also differ by gamma's cross term
// beta_orbit . beta_site, 1e-4 of this.)
TEST(Barycentric, SiteRotationMatchesClosedForm) {
  Site const kp = kitt_peak();
  Site const other{kp.longitude_deg + 180.0, kp.latitude_deg, kp.height_m};
  double const a = 6378137.0, f = 1 / 298.257223563, e2 = f * (2 - f);
  double const lat = kp.latitude_deg * pi / 180;
  double const n = a / std::sqrt(1 - e2 * std::sin(lat) * std::sin(lat));
  double const rho = (n + kp.height_m) * std::cos(lat);
  double const omega = 2 * pi * 1.00273781191135448 / 86400.0;
  double const expected = 2 * omega * rho / (c_km_s * 1e3);
  double const mjd = mjd_2024 + 123.4;
  auto dipole = [mjd](double ra, Site const& site) {
    return (barycentric_factor(ra, 0.0, mjd, site) -
            barycentric_factor(std::fmod(ra + 180.0, 360.0), 0.0, mjd, site)) /
           2;
  };
  double largest = 0;
  for (double ra = 0; ra < 360; ra += 0.25) {
    largest = std::max(largest, std::fabs(dipole(ra, kp) - dipole(ra, other)));
  }
  std::printf("rotation dipole / closed form - 1 = %.2e\n", largest / expected - 1);
  EXPECT_NEAR(largest / expected, 1.0, 1e-5);
}

TEST(Barycentric, RefusesArgumentsOutsideTheirRange) {
  double const nan = std::numeric_limits<double>::quiet_NaN();
  Site const kp = kitt_peak();
  EXPECT_THROW(barycentric_factor(nan, 0, mjd_2024, kp), kspecter::ParameterError);
  EXPECT_THROW(barycentric_factor(0, 90.5, mjd_2024, kp), kspecter::ParameterError);
  EXPECT_THROW(barycentric_factor(0, nan, mjd_2024, kp), kspecter::ParameterError);
  EXPECT_THROW(barycentric_factor(0, 0, nan, kp), kspecter::ParameterError);
  EXPECT_THROW(barycentric_factor(0, 0, 0.0, kp), kspecter::ParameterError);
  EXPECT_THROW(barycentric_factor(0, 0, 1e300, kp), kspecter::ParameterError);
  EXPECT_THROW(barycentric_factor(0, 0, mjd_2024, Site{0, 91, 0}), kspecter::ParameterError);
  EXPECT_THROW(barycentric_factor(0, 0, mjd_2024, Site{0, 0, nan}), kspecter::ParameterError);
  EXPECT_NO_THROW(barycentric_factor(0, 90, mjd_2024, kp));
}

}  // namespace
