// Barycentric wavelength correction of a DESI exposure: desispec's
// `barycentric_correction_multiplicative_factor`, the factor by which wavelengths calibrated
// on the lamps are multiplied to bring them to the solar-system barycentre.
//
// The factor is 1 + v/c with v astropy's `SkyCoord.radial_velocity_correction('barycentric')`
// for a target at ICRS (RA, Dec) seen from the site at a UTC time, computed as astropy does
// (Wright & Eastman 2014, eq. 28, without the Shapiro delay and the target's own motion):
//
//   factor = gamma (1 + beta . n) / (1 + phi / c^2),
//
// beta = (Earth's barycentric velocity + the site's GCRS velocity) / c, gamma = 1/sqrt(1 -
// beta^2), n the target's unit vector, phi the gravitational potential of the Earth, Sun,
// Jupiter and Moon at the site. Everything comes from ERFA (astropy's "builtin" ephemeris:
// epv00, plan94, moon98; IAU 2006/2000A precession-nutation; ERFA's leap-second table).
#pragma once

namespace kspecter::astro {

/// An observatory: WGS84 geodetic longitude (east positive), latitude and height.
struct Site {
  double longitude_deg, latitude_deg, height_m;
};

/// The Mayall telescope on Kitt Peak, exactly as desispec's heliocentric.py gives it to astropy.
Site kitt_peak();

/// UT1 - UTC and the polar motion (IERS), which set the Earth's rotation angle and pole.
/// The defaults are what astropy assumes for a time outside its IERS tables (its bundled
/// IERS-B ends in 2022): UT1 = UTC and the 1962-2014 mean pole. UT1 - UTC stays within 0.9 s,
/// which moves the factor by less than 1e-10 (the site turns by 0.9 s x 7.3e-5 rad/s at
/// 0.39 km/s); the pole, by a few 1e-12.
struct EarthOrientation {
  static constexpr double arcsec = 3.14159265358979323846 / 648000.0;  // radians
  double dut1_s = 0.0;                                                 // UT1 - UTC, seconds
  double xp_rad = 0.035 * arcsec;                                      // polar motion x
  double yp_rad = 0.29 * arcsec;                                       // polar motion y
};

/// desispec's barycentric_correction_multiplicative_factor for a target at ICRS (ra, dec),
/// degrees, observed from `site` at `mjd_utc` (UTC; desispec takes MJD-OBS + EXPTIME/2):
/// what astropy's SkyCoord.radial_velocity_correction('barycentric') gives, as 1 + v/c.
/// Agrees with astropy (offline, its bundled IERS-B) to 1e-10.
/// Throws kspecter::ParameterError for a non-finite or out-of-range argument (|dec| > 90, a
/// time before 1960 or after 2200, a site ERFA refuses).
double barycentric_factor(double ra_deg, double dec_deg, double mjd_utc, Site const& site);

/// The same with a given Earth orientation (e.g. the IERS value astropy interpolates).
double barycentric_factor(double ra_deg, double dec_deg, double mjd_utc, Site const& site,
                          EarthOrientation const& orientation);

}  // namespace kspecter::astro
