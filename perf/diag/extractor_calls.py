#!/usr/bin/env python3
"""Where a warm Extractor's repeat goes from Python (issue 41): the whole call from cupy
arrays, against its parts: the result arrays made, the module's call into them, and what
Python does after it. A GPU diagnostic:

    python3 perf/diag/extractor_calls.py --psf PSF.fits [--nspec 500] [--repeat 10]
"""

import argparse
import os
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from kspecter_perf import import_kspecter, layout, psf_file, simulated_frame  # noqa: E402


def median_ms(times):
    return f"{1e3 * float(np.median(times)):.3f} ms"


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--psf", default="synthetic")
    ap.add_argument("--nspec", type=int, default=500)
    ap.add_argument("--wavelength", default="5760,7620,0.8")
    ap.add_argument("--repeat", type=int, default=10)
    a = ap.parse_args()
    kspecter = import_kspecter()
    import cupy as cp

    tmp = tempfile.mkdtemp(prefix="kspecter-calls-")
    psf = psf_file(a.psf, tmp)
    img = simulated_frame(kspecter, psf, a.nspec, a.wavelength, tmp)
    frame = {"image": cp.asarray(np.asarray(img["image"], dtype=np.float64)),
             "ivar": cp.asarray(np.asarray(img["ivar"], dtype=np.float64))}
    ex = kspecter.Extractor(psf, model=True, **layout(a.nspec, a.wavelength, True))
    ex.extract(frame)

    def timed(call):
        out = []
        for _ in range(a.repeat):
            cp.cuda.Device().synchronize()
            t0 = time.perf_counter()
            call()
            cp.cuda.Device().synchronize()
            out.append(time.perf_counter() - t0)
        return out

    ns, nw, ndiag, ny, nx = ex._ex.sizes

    def arrays():
        return {"specflux": cp.empty((ns, nw)), "specivar": cp.empty((ns, nw)),
                "Rdiags": cp.empty((ns, 2 * ndiag + 1, nw)),
                "pixmask_fraction": cp.empty((ns, nw)), "chi2pix": cp.empty((ns, nw)),
                "specmask": cp.empty((ns, nw), dtype=cp.uint32),
                "modelimage": cp.empty((ny, nx))}

    kept = arrays()
    print(f"Extractor.extract, cupy in and out:      {median_ms(timed(lambda: ex.extract(frame)))}")
    print(f"  the result arrays made (cupy.empty x7):  {median_ms(timed(arrays))}")
    print("  the module's extract_into, arrays kept: "
          f"{median_ms(timed(lambda: ex._ex.extract_into(frame['image'], frame['ivar'], kept)))}")
    print("  specmask to int64:                      "
          f"{median_ms(timed(lambda: kept['specmask'].astype(cp.int64)))}")


if __name__ == "__main__":
    main()
