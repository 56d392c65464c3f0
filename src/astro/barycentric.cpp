// desispec's barycentric factor, following astropy's radial_velocity_correction step by step
// (astropy 5.2: coordinates/sky_coordinate.py, earth.py, solar_system.py, with the builtin
// ephemeris), each step with the ERFA routine astropy calls. ERFA 2.0's prototypes take
// non-const arrays, hence the mutable vectors below.
#include <kspecter/astro/barycentric.hpp>
#include <kspecter/core/error.hpp>

#include <erfa.h>
#include <erfam.h>

#include <cmath>
#include <string>

namespace kspecter::astro {
namespace {

constexpr double c_m_s = ERFA_CMPS;
constexpr double au_m = ERFA_DAU;
constexpr double au_per_day_m_s = ERFA_DAU / ERFA_DAYSEC;
// astropy's OMEGA_EARTH: 1.002737811911354 turns per UT1 day, in rad/s.
constexpr double omega_earth = ERFA_D2PI * 1.00273781191135448 / ERFA_DAYSEC;
// Gravitational parameters (m^3/s^2) as astropy's EarthLocation.gravitational_redshift takes
// them: IAU 2015 nominal values, and the Moon's mass times CODATA 2018's G.
constexpr double gm_sun = 1.3271244e20;
constexpr double gm_jupiter = 1.2668653e17;
constexpr double gm_earth = 3.986004e14;
constexpr double gm_moon = 6.6743e-11 * 7.34767309e22;
constexpr int jupiter = 5;  // plan94's planet number
// UTC as ERFA defines it (1960 on); the upper end only keeps garbage out of ERFA.
constexpr double mjd_first = 36934.0;  // 1960-01-01
constexpr double mjd_last = 124593.0;  // 2200-01-01

void require(bool ok, std::string const& what) {
  if (!ok) throw ParameterError("barycentric correction: " + what);
}

void check_arguments(double ra_deg, double dec_deg, double mjd_utc, Site const& site) {
  require(std::isfinite(ra_deg), "RA is not a finite number");
  require(std::isfinite(dec_deg) && std::fabs(dec_deg) <= 90.0,
          "Dec " + std::to_string(dec_deg) + " is not within [-90, 90] degrees");
  require(std::isfinite(mjd_utc) && mjd_utc >= mjd_first && mjd_utc <= mjd_last,
          "MJD " + std::to_string(mjd_utc) + " is not a UTC date between 1960 and 2200");
  require(std::isfinite(site.longitude_deg) && std::isfinite(site.latitude_deg) &&
              std::fabs(site.latitude_deg) <= 90.0 && std::isfinite(site.height_m),
          "the site is not a geodetic longitude, latitude and height");
}

/// The time scales astropy derives from a UTC Time, as two-part Julian dates.
struct Epochs {
  double tt1, tt2;    // Terrestrial Time: precession-nutation, the pole
  double tdb1, tdb2;  // Barycentric Dynamical Time: the ephemerides
  double ut1, ut2;    // UT1: the Earth's rotation angle
};

Epochs epochs_of(double mjd_utc, double dut1_s) {
  Epochs e{};
  double tai1 = 0, tai2 = 0;
  // Status +1 is ERFA's "dubious year" (beyond its leap-second table's horizon): astropy warns
  // and goes on with the last known TAI-UTC, as ERFA does.
  require(eraUtctai(ERFA_DJM0, mjd_utc, &tai1, &tai2) >= 0, "ERFA refuses the UTC date");
  eraTaitt(tai1, tai2, &e.tt1, &e.tt2);
  // astropy calls dtdb for a Time without a location: at the geocentre, where the UT argument
  // multiplies only topocentric terms that vanish.
  eraTttdb(e.tt1, e.tt2, eraDtdb(e.tt1, e.tt2, 0.0, 0.0, 0.0, 0.0), &e.tdb1, &e.tdb2);
  require(eraUtcut1(ERFA_DJM0, mjd_utc, dut1_s, &e.ut1, &e.ut2) >= 0, "ERFA refuses UT1");
  return e;
}

/// Barycentric positions (au) of the bodies astropy's gravitational redshift uses, and the
/// Earth's barycentric velocity (au/day).
struct Bodies {
  double earth[3], earth_velocity[3], sun[3], jupiter[3], moon[3];
};

Bodies bodies_at(Epochs const& e) {
  Bodies b{};
  double earth_helio[2][3], earth_bary[2][3], jupiter_helio[2][3], moon_geo[2][3];
  eraEpv00(e.tdb1, e.tdb2, earth_helio, earth_bary);  // status +1: outside 1900-2100, fine
  eraCp(earth_bary[0], b.earth);
  eraCp(earth_bary[1], b.earth_velocity);
  eraPmp(earth_bary[0], earth_helio[0], b.sun);
  eraPlan94(e.tdb1, e.tdb2, jupiter, jupiter_helio);
  eraPpp(jupiter_helio[0], b.sun, b.jupiter);
  eraMoon98(e.tdb1, e.tdb2, moon_geo);
  eraPpp(moon_geo[0], b.earth, b.moon);
  return b;
}

double distance_m(double body[3], double earth[3]) {
  double d[3];
  eraPmp(body, earth, d);
  return eraPm(d) * au_m;
}

/// astropy's EarthLocation.gravitational_redshift (m/s): -sum GM / (c r) over the Sun,
/// Jupiter and the Moon (from the geocentre) and the Earth (from the site), summed as
/// astropy sums them, smallest first.
double gravitational_redshift_m_s(Bodies b, double site_itrs_m[3]) {
  double z = -gm_earth / c_m_s / eraPm(site_itrs_m);
  z += -gm_moon / c_m_s / distance_m(b.moon, b.earth);
  z += -gm_jupiter / c_m_s / distance_m(b.jupiter, b.earth);
  z += -gm_sun / c_m_s / distance_m(b.sun, b.earth);
  return z;
}

/// The site's GCRS velocity (m/s), as astropy's EarthLocation.get_gcrs_posvel: the ITRS
/// position taken to GCRS through CIRS (IAU 2006/2000A, CIO based), turned about the CIP.
void site_gcrs_velocity(double site_itrs_m[3], Epochs const& e, EarthOrientation const& eop,
                        double velocity[3]) {
  double gcrs_to_cirs[3][3], polar_motion[3][3], cirs_to_itrs[3][3], identity[3][3];
  eraC2i06a(e.tt1, e.tt2, gcrs_to_cirs);
  eraPom00(eop.xp_rad, eop.yp_rad, eraSp00(e.tt1, e.tt2), polar_motion);
  eraIr(identity);
  eraC2tcio(identity, eraEra00(e.ut1, e.ut2), polar_motion, cirs_to_itrs);
  double cirs[3], gcrs[3], axis[3];
  eraTrxp(cirs_to_itrs, site_itrs_m, cirs);
  eraTrxp(gcrs_to_cirs, cirs, gcrs);
  eraSxp(omega_earth, gcrs_to_cirs[2], axis);  // the CIP in GCRS, times the spin rate
  eraPxp(axis, gcrs, velocity);
}

}  // namespace

Site kitt_peak() { return Site{-111.59989, 31.96403, 2097.0}; }

double barycentric_factor(double ra_deg, double dec_deg, double mjd_utc, Site const& site) {
  return barycentric_factor(ra_deg, dec_deg, mjd_utc, site, EarthOrientation{});
}

double barycentric_factor(double ra_deg, double dec_deg, double mjd_utc, Site const& site,
                          EarthOrientation const& orientation) {
  check_arguments(ra_deg, dec_deg, mjd_utc, site);
  double site_itrs_m[3];
  require(eraGd2gc(ERFA_WGS84, site.longitude_deg * ERFA_DD2R, site.latitude_deg * ERFA_DD2R,
                   site.height_m, site_itrs_m) == 0,
          "ERFA refuses the site's geodetic coordinates");
  Epochs const epochs = epochs_of(mjd_utc, orientation.dut1_s);
  Bodies bodies = bodies_at(epochs);

  double site_velocity[3], beta[3], target[3];
  site_gcrs_velocity(site_itrs_m, epochs, orientation, site_velocity);
  for (int i = 0; i < 3; ++i) {
    beta[i] = (bodies.earth_velocity[i] * au_per_day_m_s + site_velocity[i]) / c_m_s;
  }
  eraS2c(ra_deg * ERFA_DD2R, dec_deg * ERFA_DD2R, target);  // the ICRS unit vector

  // Wright & Eastman (2014) eq. 28 as astropy writes it; desispec's 1 + v/c is this ratio.
  double const gamma = 1.0 / std::sqrt(1.0 - eraPdp(beta, beta));
  double const potential = gravitational_redshift_m_s(bodies, site_itrs_m) / c_m_s;
  return gamma * (1.0 + eraPdp(beta, target)) / (1.0 + potential);
}

}  // namespace kspecter::astro
