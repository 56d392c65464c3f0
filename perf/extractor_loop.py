#!/usr/bin/env python3
"""The warm extractor in an iterative loop (issue 41): its timing table and a worked example.

1. Timing: N extractions of one frame, each with a new noise realisation of the image and the
   same weights, by N independent ``kspecter.extract_frame`` calls and by one
   ``kspecter.Extractor``; then the same with a few hundred pixels' weights changed between
   calls, with a stretch of a bad column masked, and with so many changed that the full
   path runs (what any change cost before partial reassembly). Every Extractor frame with the same
   weights, and the first three of each kind of change, are checked bit for bit against
   extract_frame's.
2. A worked example: a toy CTE-like correction. Readout leaves a fraction ``eps`` of each
   pixel's charge behind, to be read with the next row: observed[y] = (1 - eps) true[y] +
   eps true[y - 1]. Each iteration predicts that trail from the last extraction's model image,
   subtracts it from the observed image and extracts again, as desispec's CTE correction
   re-extracts a frame 5-10 times (desispec PR #2144).

    python3 perf/extractor_loop.py [--psf FILE] [--nspec 25] [--repeat 10] [--gpu [--cupy]]

Prints the per-call times; time is wall time around each call (the extraction has finished
on the device when the call returns). With --cupy the images are cupy arrays, and so are the
Extractor's results (they stay on the GPU); extract_frame returns numpy arrays.
"""

import argparse
import hashlib
import sys
import tempfile
import time

import numpy as np

from kspecter_perf import import_kspecter, layout, psf_file, simulated_frame


KEYS = ("specflux", "specivar", "specmask", "Rdiags", "pixmask_fraction", "chi2pix",
        "modelimage")


def host(x):
    """x as a numpy array (a cupy array copied to the host)."""
    return x if isinstance(x, np.ndarray) else x.get()


def digest(frame):
    """Each array's dtype and bytes, hashed: the frames compared without keeping them (a kept
    frame keeps its model image's pages, and new pages each call would be timed)."""
    return {k: (host(frame[k]).dtype.str,
                hashlib.sha1(np.ascontiguousarray(host(frame[k]))).hexdigest()) for k in KEYS}


def differ(a, b):
    """The arrays whose bits differ between two frames' digests."""
    return [k for k in KEYS if a[k] != b[k]]


def stats(times):
    t = np.array(times)
    return f"median {np.median(t):.4f} s, min {t.min():.4f} s, max {t.max():.4f} s"


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--psf", default="synthetic", help="PSF file, or 'synthetic'")
    ap.add_argument("--nspec", type=int, default=25)
    ap.add_argument("--wavelength", default="5760,7620,0.8")
    ap.add_argument("--repeat", type=int, default=10)
    ap.add_argument("--changed-pixels", type=int, default=300)
    ap.add_argument("--column-rows", type=int, default=200)
    ap.add_argument("--many-pixels", type=int, default=100000)
    ap.add_argument("--cte-eps", type=float, default=0.02)
    ap.add_argument("--cte-iterations", type=int, default=5)
    ap.add_argument("--gpu", action="store_true", help="extract on the GPU backend")
    ap.add_argument("--cupy", action="store_true", help="with --gpu: images as cupy arrays")
    a = ap.parse_args()
    kspecter = import_kspecter()

    tmp = tempfile.mkdtemp(prefix="kspecter-loop-")
    psf = psf_file(a.psf, tmp)
    img = simulated_frame(kspecter, psf, a.nspec, a.wavelength, tmp, "--noiseless")
    expected = np.asarray(img["image"], dtype=np.float64)
    ivar = np.asarray(img["ivar"], dtype=np.float64)
    sigma = np.where(ivar > 0, 1 / np.sqrt(np.where(ivar > 0, ivar, 1)), 0)
    rng = np.random.default_rng(1)
    xp = np
    if a.cupy:
        import cupy as xp  # noqa: F811

    def realisation(weights=ivar):
        noisy = expected + sigma * rng.normal(size=expected.shape)
        return {"image": xp.asarray(noisy), "ivar": xp.asarray(weights)}

    args = layout(a.nspec, a.wavelength, a.gpu)
    frames = [realisation() for _ in range(a.repeat)]
    kspecter.extract_frame(frames[0], psf, **args)  # Kokkos up, pages touched

    def timed(call, keep=False):
        """The call's frame (its digest unless `keep`) and its wall time."""
        t0 = time.perf_counter()
        r = call()
        t = time.perf_counter() - t0
        return (r if keep else digest(r)), t

    print(f"frame: {a.nspec} spectra, grid {a.wavelength}, backend "
          f"{kspecter.Extractor(psf, **args).backend}, {a.repeat} noise realisations")
    # model=True: the Extractor always makes the model image, so the independent calls do too.
    independent = [timed(lambda f=f: kspecter.extract_frame(f, psf, model=True, **args))
                   for f in frames]
    print(f"  independent extract_frame calls:  {stats([t for _, t in independent])}")
    ex = kspecter.Extractor(psf, model=True, **args)
    # The timed calls take no stage times: those fence the backend between stages, and so
    # would undo the overlap of the quality stage's kernels with the decorrelation's. The
    # stage times come from one more pass over the frames.
    warm = [timed(lambda f=f: ex.extract(f)) for f in frames]
    stages = [{} for _ in frames]
    for f, st in zip(frames, stages):
        ex.extract(f, timing=st)
    ok = all(not differ(w, i) for (w, _), (i, _) in zip(warm, independent))
    print(f"  Extractor, first call:            {warm[0][1]:.4f} s")
    print(f"  Extractor, calls 2..{a.repeat}:           {stats([t for _, t in warm[1:]])}")
    print(f"  bit for bit the same frames: {'yes' if ok else 'NO'}")
    for k, ((w, _), (i, _)) in enumerate(zip(warm, independent)):
        if differ(w, i):
            print(f"    call {k + 1} differs: {', '.join(differ(w, i))}")
    medians = {k: np.median([d.get(k, 0) for d in stages[1:]])
               for k in {k for d in stages[1:] for k in d}}
    print("  Extractor, calls 2..N again with stage times, their medians: " + ", ".join(
        f"{k.split('::')[-1]} {t:.4f}"
        for k, t in sorted(medians.items(), key=lambda kt: -kt[1]) if t >= 1e-4))
    # Weights changed between calls: a few hundred pixels anywhere on the CCD (rejected
    # pixels), then a stretch of a bad column on the middle trace. The patches whose windows
    # hold a changed weight are assembled again (last_reuse says how many).
    model = host(ex.model())
    y0, x0 = np.unravel_index(np.argmax(model), model.shape)
    rows = np.flatnonzero(model[:, x0] > 0)

    def scattered(k):
        w = ivar.copy()
        w.flat[rng.choice(w.size, a.changed_pixels, replace=False)] = 0
        return w

    def column(k):
        w = ivar.copy()
        start = rows[(k * 397) % max(1, len(rows) - a.column_rows)]
        w[start:start + a.column_rows, x0 + (k % 3) - 1] = 0
        return w

    def many(k):  # more than half the patches: the full path
        w = ivar.copy()
        w.flat[rng.choice(w.size, a.many_pixels, replace=False)] = 0
        return w

    for name, weights in ((f"{a.changed_pixels} weights changed", scattered),
                          (f"a column's {a.column_rows} rows masked", column),
                          (f"{a.many_pixels} weights changed", many)):
        changed = [{"image": f["image"], "ivar": xp.asarray(weights(k))}
                   for k, f in enumerate(frames)]
        reworked = []

        def extract_changed(f):
            r = ex.extract(f)
            reworked.append(getattr(ex, "last_reuse", None))  # None in a tree before it
            return r

        warm_changed = [timed(lambda f=f: extract_changed(f)) for f in changed]
        cold = [timed(lambda f=f: kspecter.extract_frame(f, psf, model=True, **args))
                for f in changed[:3]]
        same = all(not differ(w, c) for (w, _), (c, _) in zip(warm_changed, cold))
        redone = [r["patches_reworked"] if r["factor_reused"] else r["patches"]
                  for r in reworked[1:] if r]
        of = (f"median {int(np.median(redone))} of {reworked[-1]['patches']}" if redone
              else "not reported")
        print(f"  Extractor, {name}: {stats([t for _, t in warm_changed[1:]])}; "
              f"patches assembled again: {of}; the first 3 bit for bit extract_frame's: "
              f"{'yes' if same else 'NO'}")
        ok = ok and same
    if not ok:
        sys.exit("the Extractor's frames differ from extract_frame's")

    # The worked example: a toy CTE-like correction, one extraction per iteration; with
    # --cupy every step stays on the GPU (xp is cupy, and so are the results).
    eps = a.cte_eps
    truth = frames[0]["image"]
    weights = xp.asarray(ivar)
    observed = (1 - eps) * truth
    observed[1:] += eps * truth[:-1]
    reference = ex.extract(frames[0])["specflux"]  # the frame of the image without the trail
    print(f"toy CTE correction, eps = {eps}: flux against the untrailed image's frame")
    corrected = observed.copy()
    for k in range(a.cte_iterations + 1):
        result, t = timed(lambda: ex.extract({"image": corrected, "ivar": weights}), keep=True)
        good = result["specivar"] > 0
        diff = (result["specflux"] - reference)[good]
        err, rms = float(abs(diff).max()), float((diff ** 2).mean() ** 0.5)
        print(f"  iteration {k}: extract {t:.4f} s, max |dflux| {err:.3e}, rms {rms:.3e}")
        model = ex.model()
        trail = -eps * model
        trail[1:] += eps * model[:-1]
        corrected = observed - trail


if __name__ == "__main__":
    main()
