#!/usr/bin/python3
"""Writes tests/astro/barycentric_astropy_table.hpp: astropy's barycentric factors for
tst_barycentric.cpp.

Made with Debian 12's python3-astropy 5.2.1 (python3-erfa 2.0.0.1; astropy's bundled IERS-B
table, which ends at MJD 59912 = 2022-11-29). Regenerate from the repository root with

    /usr/bin/python3 tests/astro/make_barycentric_table.py \
        > tests/astro/barycentric_astropy_table.hpp
    clang-format-14 -i tests/astro/barycentric_astropy_table.hpp

Each factor is what desispec's `barycentric_correction_multiplicative_factor` returns for a
header at (RA, Dec, MJD): 1 + v/c with v = SkyCoord(ra, dec, frame='icrs')
.radial_velocity_correction('barycentric', obstime=Time(mjd, format='mjd'), location=kpno),
kpno = EarthLocation.from_geodetic(lon=-111.59989 deg, lat=31.96403 deg, height=2097 m), both
in km/s as desispec does. Beside it, the Earth orientation astropy used for that time (UT1-UTC
and polar motion), so that the C++ can be checked with the same numbers as well as with its
default (astropy's own choice outside its tables).

IERS: the download of IERS-A is turned off, so astropy uses its bundled IERS-B as it does on a
machine without a network (the result of a failed download is the same). Inside IERS-B's range
it interpolates UT1-UTC and polar motion from it; outside, it takes UT1-UTC = 0 and the 50-year
mean polar motion (0.035", 0.29"), and warns (the warnings are silenced here).
"""
import warnings

import numpy as np

import astropy
import astropy.constants as const
import astropy.units as u
import erfa
from astropy.coordinates import EarthLocation, SkyCoord
from astropy.coordinates.builtin_frames.utils import get_polar_motion
from astropy.time import Time
from astropy.utils import iers

# (RA deg, Dec deg, UTC). Spread over the sky (both hemispheres, the ecliptic poles, the
# celestial poles, targets Kitt Peak never sees), over the year and the hours of the night,
# DESI's survey years 2019-2026, the end of the bundled IERS-B table, the leap second of
# 2016-12-31, and years before and after the survey (2035 is past ERFA's "dubious year").
CASES = [
    (0.0, 0.0, "2019-06-21T00:00:00"),
    (10.684, 41.269, "2019-12-14T06:00:00"),
    (150.1, 2.2, "2020-01-15T03:30:00"),
    (180.0, 30.0, "2020-03-20T07:00:00"),
    (270.0, 66.5607, "2020-06-21T05:00:00"),
    (90.0, -66.5607, "2020-09-22T04:00:00"),
    (210.802, 54.349, "2020-12-21T08:00:00"),
    (36.0, -5.0, "2021-02-10T11:00:00"),
    (330.0, 15.0, "2021-04-05T03:00:00"),
    (255.0, -25.0, "2021-07-04T09:30:00"),
    (120.0, 60.0, "2021-10-31T02:00:00"),
    (200.0, -45.0, "2022-01-01T00:00:00"),
    (300.0, 80.0, "2022-05-15T06:15:00"),
    (45.0, 25.0, "2022-08-08T08:08:08"),
    (60.0, -30.0, "2022-11-28T12:00:00"),
    (135.0, 10.0, "2022-12-15T04:00:00"),
    (225.0, 45.0, "2023-03-01T07:45:00"),
    (315.0, -15.0, "2023-06-30T05:30:00"),
    (5.0, 89.9, "2023-09-15T10:00:00"),
    (100.0, -89.5, "2024-02-29T03:00:00"),
    (165.0, 35.0, "2024-06-01T06:00:00"),
    (240.0, -60.0, "2024-10-10T11:11:00"),
    (20.0, -20.0, "2025-01-20T12:30:00"),
    (285.0, 5.0, "2025-04-25T04:40:00"),
    (350.0, 50.0, "2025-08-18T03:15:00"),
    (75.0, 70.0, "2025-12-31T23:59:00"),
    (190.0, -10.0, "2026-03-21T06:00:00"),
    (359.9, -40.0, "2026-07-15T05:00:00"),
    (30.0, 20.0, "1995-05-05T05:00:00"),
    (250.0, 40.0, "2010-10-10T10:00:00"),
    (160.0, -75.0, "2016-12-31T23:59:30"),
    (95.0, 15.0, "2030-06-15T06:00:00"),
    (300.0, -35.0, "2035-01-01T09:00:00"),
]


def factor(ra, dec, mjd, location):
    """desispec's multiplicative factor, computed with the same astropy calls."""
    coord = SkyCoord(ra=ra * u.deg, dec=dec * u.deg, frame="icrs")
    obstime = Time(mjd, format="mjd")
    v_kms = coord.radial_velocity_correction(obstime=obstime, location=location)
    return 1.0 + v_kms.to(u.km / u.s).value / const.c.to(u.km / u.s).value


def earth_orientation(mjd):
    """UT1-UTC (s) and polar motion (rad) as astropy's coordinate transforms take them."""
    obstime = Time(mjd, format="mjd")
    try:
        dut1 = float(obstime.delta_ut1_utc)
    except iers.IERSRangeError:
        dut1 = 0.0  # what astropy.coordinates assumes outside the table
    xp, yp = get_polar_motion(obstime)
    return dut1, float(xp), float(yp)


def main():
    iers.conf.auto_download = False
    warnings.simplefilter("ignore")
    kpno = EarthLocation.from_geodetic(lat=31.96403 * u.deg, lon=-111.59989 * u.deg,
                                       height=2097 * u.m)
    print("// Made by tests/astro/make_barycentric_table.py (read its header before editing):")
    print(f"// astropy {astropy.__version__}, pyerfa {erfa.__version__}, numpy {np.__version__}.")
    print("#pragma once")
    print()
    print("namespace kspecter::astro::testing {")
    print()
    print("struct AstropyCase {")
    print("  double ra_deg, dec_deg, mjd_utc;")
    print("  double dut1_s, xp_rad, yp_rad;  // the Earth orientation astropy used")
    print("  double factor;                  // 1 + v/c, desispec's factor")
    print("  char const* utc;")
    print("};")
    print()
    print("inline constexpr AstropyCase astropy_cases[] = {")
    for ra, dec, utc in CASES:
        mjd = Time(utc, format="isot", scale="utc").mjd
        dut1, xp, yp = earth_orientation(mjd)
        f = factor(ra, dec, mjd, kpno)
        print(f'    {{{ra!r}, {dec!r}, {mjd!r}, {dut1!r}, {xp!r}, {yp!r}, {f!r}, "{utc}"}},')
    print("};")
    print()
    print("}  // namespace kspecter::astro::testing")


if __name__ == "__main__":
    main()
