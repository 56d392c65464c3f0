#!/usr/bin/env python3
"""gpu_specter's PSF dict, read here by gpu_specter.io.read_psf, saved as one small .npz.

The device machine has numpy, cupy and numba but neither astropy nor fitsio, so it cannot run
gpu_specter.io. This script runs on the CPU machine (Debian's /usr/bin/python3 has
python3-astropy, python3-fitsio, python3-numba, python3-scipy), reads the PSF with
gpu_specter's own read_psf and writes every column of its PSF, XTRACE and YTRACE tables, with
their meta (all scalar header keys, PSFERR included), to an .npz that
perf/device/gpu_specter_run.py turns back into the same dict on the device. The image does not
travel (a 4k x 4k f8 pair is ~270 MB, over the 64 MiB carry limit): the device makes its own
preproc with `kspecter simulate` and the driver reads it with numpy alone.

How the lead stages it (gpu_specter is never committed; RULES.md), from /work/main, whose
.git/info/exclude already ignores /.gpu-*/:
    rm -rf .gpu-specter && mkdir -p .gpu-specter
    git --git-dir=/work/.mirror/desihub+gpu_specter/repo archive HEAD py | tar -x -C .gpu-specter
    /usr/bin/python3 perf/gpu_specter_inputs.py --gpu-specter .gpu-specter/py \\
        --psf /work/shared/data/psf-r0-00067784.fits -o .gpu-specter/psf-r0.npz
then carry ".gpu-specter" in the device call (about 2.3 MB in all) and run
perf/device/gpu_specter_run.py there (perf/device/before_after.sh with KSPECTER_GPU_SPECTER=1,
and perf/device/desispec_gpu.sh, call it).

--reference-image PREPROC --reference-out REF.npz additionally runs gpu_specter itself here,
with the real astropy/fitsio (read_img, read_psf, extract_frame on the CPU), and saves its
specflux/specivar: the reference the stand-in driver must reproduce exactly, e.g.
    kspecter simulate -p PSF -o /tmp/pre.fits -n 5 -w 6000,6040,0.8 --seed 1 --defects
    nice /usr/bin/python3 perf/gpu_specter_inputs.py --gpu-specter GS/py --psf PSF \\
        -o /tmp/psf.npz --reference-image /tmp/pre.fits --reference-out /tmp/ref.npz \\
        -n 5 -w 6000,6040,0.8
    nice /usr/bin/python3 perf/device/gpu_specter_run.py --gpu-specter GS/py --stand-ins \\
        --gpu no --psf-npz /tmp/psf.npz --image /tmp/pre.fits -n 5 -w 6000,6040,0.8 \\
        --warmup-nspec 0 -o /tmp/gs.npz --reference /tmp/ref.npz
"""

import argparse
import json
import os
import sys
import time

import numpy as np

TABLES = ("PSF", "XTRACE", "YTRACE")


def scalar_meta(meta):
    """The header keys of an astropy Table's meta whose values are plain scalars."""
    out = {}
    for key, value in meta.items():
        if isinstance(value, (bool, np.bool_)):
            out[key] = bool(value)
        elif isinstance(value, (int, np.integer)):
            out[key] = int(value)
        elif isinstance(value, (float, np.floating)):
            out[key] = float(value)
        elif isinstance(value, str):
            out[key] = value
    return out


def save_psf(psf, path):
    arrays, layout = {}, {}
    for name in TABLES:
        table = psf[name]
        columns = list(table.colnames)
        for col in columns:
            # np.asarray keeps the dtype read_psf gives (byte order included): the device
            # sees the very arrays gpu_specter sees here.
            arrays[f"{name}/{col}"] = np.asarray(table[col])
        layout[name] = {"columns": columns, "meta": scalar_meta(table.meta)}
    arrays["layout"] = np.array(json.dumps(layout))
    tmp = path + ".tmp.npz"
    np.savez(tmp, **arrays)
    os.replace(tmp, path)
    return layout


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--gpu-specter", default=os.environ.get("GPU_SPECTER_PY"),
                   help="gpu_specter's py/ folder (default: $GPU_SPECTER_PY)")
    p.add_argument("--psf", required=True, help="the PSF FITS file (GaussHermite)")
    p.add_argument("-o", "--output", required=True, help="the .npz to write")
    p.add_argument("--reference-image", help="a preproc file: also run gpu_specter here")
    p.add_argument("--reference-out", help="where the reference flux/ivar go (.npz)")
    p.add_argument("-w", "--wavelength", default="5760.0,7620.0,0.8")
    p.add_argument("-s", "--specmin", type=int, default=0)
    p.add_argument("-n", "--nspec", type=int, default=500)
    p.add_argument("--bundlesize", type=int, default=25)
    p.add_argument("--nsubbundles", type=int, default=5)
    p.add_argument("--nwavestep", type=int, default=50)
    args = p.parse_args()
    if not args.gpu_specter:
        p.error("set GPU_SPECTER_PY (or --gpu-specter) to gpu_specter's py/ folder")
    if bool(args.reference_image) != bool(args.reference_out):
        p.error("--reference-image and --reference-out go together")

    sys.path.insert(0, args.gpu_specter)
    import gpu_specter.io

    psf = gpu_specter.io.read_psf(args.psf)
    layout = save_psf(psf, args.output)
    for name in TABLES:
        cols = ", ".join(f"{c} {psf[name][c].shape} {psf[name][c].dtype}"
                         for c in layout[name]["columns"])
        print(f"{name}: {cols}; {len(layout[name]['meta'])} meta keys")
    print(f"wrote {args.output} ({os.path.getsize(args.output)} bytes)")

    if args.reference_image:
        import gpu_specter.core
        img = gpu_specter.io.read_img(args.reference_image)
        t0 = time.perf_counter()
        frame = gpu_specter.core.extract_frame(
            img, psf, args.bundlesize, args.specmin, args.nspec, args.wavelength,
            args.nwavestep, args.nsubbundles, model=None, regularize=0.0, psferr=None,
            comm=None, gpu=False)
        t1 = time.perf_counter()
        np.savez(args.reference_out, specflux=frame["specflux"], specivar=frame["specivar"],
                 wave=frame["wave"])
        print(f"reference: gpu_specter {gpu_specter.__version__} (real astropy/fitsio, CPU) "
              f"{frame['specflux'].shape} in {t1 - t0:.2f} s -> {args.reference_out}")


if __name__ == "__main__":
    main()
