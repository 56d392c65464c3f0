#!/usr/bin/env python3
"""desispec's frame-level quality rules restated in numpy, run side by side with kspecter's
(tests/extract/tst_desi_quality.cpp):

  - BAD2DFIT: desispec.scripts.extract.get_chi2pix_mask(chi2pix, scale=5.0);
  - SCORES:   desispec.specscore.compute_frame_scores(frame, suffix='RAW',
              flux_per_angstrom=False), the call compute_and_append_frame_scores makes.

usage: desi_quality_reference.py DIR NSPEC NWAVE
Reads DIR/{wave,flux,ivar,chi2pix}.f8 (float64, little-endian, row-major [nspec][nwave]);
writes DIR/bad2dfit.u1 ([nspec][nwave] 0/1) and DIR/scores.txt (one column per line:
name, then the nspec values as repr floats, tab-separated; then a line with its comment).
"""
import sys

import numpy as np


def chi2pix_mask(chi2pix, scale=5.0):
    median_chi2pix_wavelength = np.median(chi2pix, axis=0)
    median_chi2pix_fibers = np.median(chi2pix, axis=1)
    bad2d = chi2pix > scale * median_chi2pix_wavelength
    bad2d &= chi2pix > scale * median_chi2pix_fibers[:, None]
    return bad2d


TOPHAT = {"b": [4000, 5800], "r": [5800, 7600], "z": [7600, 9800]}


def frame_scores(wave, flux, ivar, suffix="RAW"):
    mwave = np.mean(wave)
    band = "b" if mwave <= TOPHAT["b"][1] else ("z" if mwave >= TOPHAT["z"][0] else "r")
    lo, hi = TOPHAT[band]
    mask = (wave >= lo) * (wave < hi)
    if np.sum(mask) == 0:
        raise ValueError("no intersection")
    ivar = ivar.copy()
    ivar[ivar < 0] *= 0.0
    dwave = np.gradient(wave)
    s = "_%s_" % suffix
    rng = "{},{}A".format(lo, hi)
    b = band.upper()
    return [
        ("SUM%sCOUNT_%s" % (s, b), "sum counts in wave. range " + rng,
         np.sum(flux[:, mask], axis=1)),
        ("MEDIAN%sCOUNT_%s" % (s, b), "median counts/A in wave. range " + rng,
         np.median(flux[:, mask] / dwave[mask], axis=1)),
        ("MEDIAN%sSNR_%s" % (s, b), "median SNR/sqrt(A) in wave. range " + rng,
         np.median(np.sqrt(ivar[:, mask]) * flux[:, mask] / np.sqrt(dwave[mask]), axis=1)),
    ]


def main():
    d, nspec, nwave = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])

    def load(name, shape):
        return np.fromfile("%s/%s.f8" % (d, name), dtype="<f8").reshape(shape)

    wave = load("wave", (nwave,))
    flux, ivar, chi2pix = (load(n, (nspec, nwave)) for n in ("flux", "ivar", "chi2pix"))
    with np.errstate(invalid="ignore"):
        chi2pix_mask(chi2pix).astype(np.uint8).tofile("%s/bad2dfit.u1" % d)
    with open("%s/scores.txt" % d, "w") as out:
        for name, comment, values in frame_scores(wave, flux, ivar):
            out.write(name + "\t" + "\t".join(repr(float(v)) for v in values) + "\n")
            out.write(comment + "\n")


if __name__ == "__main__":
    main()
