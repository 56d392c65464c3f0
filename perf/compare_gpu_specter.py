#!/usr/bin/env python3
"""kspecter.extract_frame beside gpu_specter.core.extract_frame on the same inputs.

Both get the same image arrays (kspecter.read_image of a preproc file) and the same PSF dict
(gpu_specter.io.read_psf), and the same options; the script prints, over the bins where both
inverse variances are positive, the pull

    (f1 - f2) / sqrt(1/ivar1 + 1/ivar2)

(its max |pull|, and its spread), the relative differences of ivar and of the resolution
diagonals, and each extraction's time. gpu_specter is not part of kspecter: point
$GPU_SPECTER_PY (or --gpu-specter) at its py/ folder (a checkout of desihub/gpu_specter, tag
0.3.0), from where it is imported; its CPU path
needs numba, scipy, astropy and fitsio (Debian: python3-numba python3-scipy python3-astropy
python3-fitsio).

Example (one bundle of the real r0 PSF, an image simulated from it by kspecter):
    kspecter simulate -p psf-r0-00067784.fits -o img.fits -n 25 -w 6000,6400,0.8
    GPU_SPECTER_PY=/work/ext/gpu_specter/py python3 perf/compare_gpu_specter.py \\
        --psf psf-r0-00067784.fits --image img.fits -w 6000,6400,0.8
"""

import argparse
import os
import sys
import time

import numpy as np


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--gpu-specter", default=os.environ.get("GPU_SPECTER_PY"),
                   help="gpu_specter's py/ folder (default: $GPU_SPECTER_PY)")
    p.add_argument("--psf", required=True)
    p.add_argument("--image", required=True, help="preproc image")
    p.add_argument("-w", "--wavelength", default="6000,6400,0.8")
    p.add_argument("-s", "--specmin", type=int, default=0)
    p.add_argument("-n", "--nspec", type=int, default=25)
    p.add_argument("--bundlesize", type=int, default=25)
    p.add_argument("--nsubbundles", type=int, default=5)
    p.add_argument("--nwavestep", type=int, default=50)
    p.add_argument("--regularize", type=float, default=0.0)
    p.add_argument("--save", help="write both results to this .npz")
    args = p.parse_args()
    if not args.gpu_specter:
        p.error("set GPU_SPECTER_PY (or --gpu-specter) to gpu_specter's py/ folder")

    sys.path.insert(0, args.gpu_specter)
    import gpu_specter
    import gpu_specter.core
    import gpu_specter.io

    import kspecter

    img = kspecter.read_image(args.image)
    inputs = {"image": img["image"], "ivar": img["ivar"]}
    psf = gpu_specter.io.read_psf(args.psf)
    common = dict(bundlesize=args.bundlesize, specmin=args.specmin, nspec=args.nspec,
                  wavelength=args.wavelength, nwavestep=args.nwavestep,
                  nsubbundles=args.nsubbundles, regularize=args.regularize, model=False)

    t0 = time.perf_counter()
    ks = kspecter.extract_frame(inputs, psf, gpu=False, **common)
    t1 = time.perf_counter()
    gs = gpu_specter.core.extract_frame(inputs, psf, gpu=False, **common)
    t2 = time.perf_counter()
    print(f"gpu_specter {gpu_specter.__version__} (CPU): {t2 - t1:.2f} s;  "
          f"kspecter {kspecter.__version__} ({kspecter.default_backend()}, gpu=False): "
          f"{t1 - t0:.2f} s")

    for key in ("wave", "specflux", "specivar", "specmask", "Rdiags", "pixmask_fraction",
                "chi2pix"):
        a, b = ks[key], gs[key]
        print(f"  {key:17s} kspecter {str(a.shape):16s} {a.dtype!s:8s} "
              f"gpu_specter {str(b.shape):16s} {b.dtype}")
    if ks["specflux"].shape != gs["specflux"].shape:
        sys.exit("the shapes differ: nothing to compare")
    dwave = np.abs(ks["wave"] - gs["wave"]).max()
    # numpy.arange steps by (wmin + dw) - wmin, kspecter by dw: a few 1e-10 A apart.
    print(f"wave: max |w1 - w2| {dwave:.3e} A")
    if not np.allclose(ks["wave"], gs["wave"], rtol=0, atol=1e-6):
        sys.exit("the wavelength grids differ")

    f1, f2 = ks["specflux"], gs["specflux"]
    i1, i2 = ks["specivar"], gs["specivar"]
    good = (i1 > 0) & (i2 > 0)
    pull = (f1[good] - f2[good]) / np.sqrt(1 / i1[good] + 1 / i2[good])
    print(f"bins: {good.size}, both ivar > 0: {good.sum()}, ivar = 0 in kspecter only: "
          f"{((i1 == 0) & (i2 > 0)).sum()}, in gpu_specter only: {((i2 == 0) & (i1 > 0)).sum()}")
    print(f"pull (f1 - f2)/sqrt(1/ivar1 + 1/ivar2): max |pull| {np.abs(pull).max():.3e}, "
          f"rms {np.sqrt(np.mean(pull ** 2)):.3e}, median {np.median(pull):+.3e}")
    rel_ivar = np.abs(i1[good] / i2[good] - 1)
    print(f"ivar: max |ivar1/ivar2 - 1| {rel_ivar.max():.3e}, median {np.median(rel_ivar):.3e}")
    print(f"Rdiags: max |R1 - R2| {np.abs(ks['Rdiags'] - gs['Rdiags']).max():.3e} "
          f"(max |R| {np.abs(gs['Rdiags']).max():.3f})")
    both = np.isfinite(ks["chi2pix"]) & np.isfinite(gs["chi2pix"]) & good
    print(f"chi2pix: max |c1 - c2| {np.abs(ks['chi2pix'][both] - gs['chi2pix'][both]).max():.3e}"
          f", median chi2pix {np.median(gs['chi2pix'][both]):.3f}")
    print(f"pixmask_fraction: max |p1 - p2| "
          f"{np.abs(ks['pixmask_fraction'] - gs['pixmask_fraction']).max():.3e}")
    if args.save:
        np.savez(args.save, **{"kspecter_" + k: v for k, v in ks.items() if v is not None},
                 **{"gpu_specter_" + k: v for k, v in gs.items() if v is not None})


if __name__ == "__main__":
    main()
