#!/usr/bin/env python3
"""desi_proc's GPU extraction layout with kspecter in gpu_specter's place (issue 37).

On a GPU node desi_proc (desispec.scripts.proc) extracts on 2 + 5 * ngpu ranks with
gpu_specter's ParallelIOCoordinator, calling desispec.scripts.extract.main_gpu_specter(args,
coordinator=...):
  * rank 0 reads the preproc (io.read_image), multiplies IVAR by (MASK & extractmaskval) == 0,
    cupy.asarray()s image and ivar, reads the PSF with gpu_specter.io.read_psf and sends all of
    it, pickled, to the worker root, rank 2;
  * ranks 2.. call gpu_specter.core.extract_frame(image, psf, bundlesize, specmin, nspec,
    (wmin, wmax, dw), nwavestep, nsubbundles, model, regularize, psferr, work_comm, use_gpu,
    loglevel=None, timing=..., wavepad_frac=..., pixpad_frac=...);
  * the worker root sends the result to rank 1, which writes the frame.

desispec imports astropy, which the GPU machine lacks and cannot install, so this script makes
the same calls itself, with gpu_specter's own ParallelIOCoordinator and gpu_specter.core's
extract_frame replaced by kspecter.desispec.gpu_specter_extract_frame (what
kspecter.desispec.install() puts there). Rank 0 reads IMAGE and IVAR with the numpy FITS
reader of perf/device/gpu_specter_run.py, as float64 like io.read_image; MASK is
tile-compressed, which numpy cannot decode, and `kspecter simulate`'s preprocs hold IVAR = 0
on every masked pixel, so the product with the mask changes nothing here. The PSF is gpu_specter's
read_psf dict from the .npz perf/gpu_specter_inputs.py wrote.

Rank 1 then checks the result against the frame `kspecter extract` wrote from the same files
on this machine: FLUX, IVAR, CHI2PIX and RESOLUTION as desispec's writer rounds them (float32)
bit for bit, WAVELENGTH against numpy.arange, and MASK against desispec's mask rule
(SOMEBADPIX where pixmask_fraction > 0.5, ALLBADPIX where it is 1, BAD2DFIT where chi2pix
exceeds 5 times both its medians; docs/algorithm.md) applied to the result. Every rank reports
the GPU it ran on (the CUDA current device after the call, which Kokkos set) and its PID.
The report is one JSON file; the exit status is 0 when every check holds.

    mpiexec -n 7 python3 desispec_gpu_layout.py --gpu-specter GS/py --psf-npz PSF.npz \\
        --preproc PRE.fits --cli-frame FRAME.fits --report OUT.json
"""

import argparse
import json
import os
import socket
import sys
import time

import numpy as np
from mpi4py import MPI

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gpu_specter_run  # noqa: E402  (numpy FITS reader, PSF dict, gpu_specter stand-ins)

# desispec.maskbits.specmask bits used by desispec's get_spectrum_mask
SOMEBADPIX, ALLBADPIX, BAD2DFIT = 1 << 0, 1 << 1, 1 << 7


def desispec_mask(chi2pix, pixmask_fraction, scale=5.0):
    mask = np.zeros(chi2pix.shape, dtype=np.uint32)
    mask[pixmask_fraction > 0.5] |= SOMEBADPIX
    mask[pixmask_fraction == 1.0] |= ALLBADPIX
    bad = (chi2pix > scale * np.median(chi2pix, axis=0)) & \
        (chi2pix > scale * np.median(chi2pix, axis=1)[:, None])
    mask[bad] |= BAD2DFIT
    return mask


def same32(a, b):
    a = np.ascontiguousarray(np.asarray(a, dtype=np.float32))
    b = np.ascontiguousarray(np.asarray(b, dtype=np.float32))
    return bool(a.shape == b.shape and a.tobytes() == b.tobytes())


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--gpu-specter", required=True, help="gpu_specter's py/ folder")
    p.add_argument("--psf-npz", required=True)
    p.add_argument("--preproc", required=True)
    p.add_argument("--cli-frame", required=True)
    p.add_argument("--report", required=True)
    p.add_argument("-w", "--wavelength", default="5760.0,7620.0,0.8")
    p.add_argument("--nspec", type=int, default=500)
    args = p.parse_args()

    comm = MPI.COMM_WORLD
    gpu_specter_run.install_stand_ins(False)
    sys.path.insert(0, args.gpu_specter)
    import cupy as cp
    import gpu_specter.core
    import gpu_specter.mpi
    import kspecter.desispec

    gpu_specter.core.extract_frame = kspecter.desispec.gpu_specter_extract_frame
    coordinator = gpu_specter.mpi.ParallelIOCoordinator(comm)
    wmin, wmax, dw = map(float, args.wavelength.split(","))

    def read_and_prepare_inputs():
        pre = gpu_specter_run.read_preproc(args.preproc)
        image = {"image": cp.asarray(pre["image"]), "ivar": cp.asarray(pre["ivar"])}
        psf = gpu_specter_run.load_psf(args.psf_npz)
        image["wave"] = np.arange(wmin, wmax + 0.5 * dw, dw)
        return image, psf, (wmin, wmax, dw)

    image, psf, corrected = coordinator.read(read_and_prepare_inputs, (None, None, None))
    t_read = time.time()
    timing = {}

    def extract_frame():
        nonlocal corrected
        if coordinator.work_comm is not None:
            corrected = coordinator.work_comm.bcast(corrected, root=0)
        result = gpu_specter.core.extract_frame(
            image, psf, 25, 0, args.nspec, corrected, 50, 5, None, 0.0, None,
            coordinator.work_comm, True, loglevel=None, timing=timing, wavepad_frac=0.2,
            pixpad_frac=0.8)
        if coordinator.is_worker_root(coordinator.rank):
            result["wave"] = image["wave"]
            result["image_device"] = int(image["image"].device.id)
            result["extract_s"] = time.time() - t_read  # the worker root's, from its receive
        return result

    result = coordinator.process(extract_frame, None)
    me = {"rank": comm.rank, "pid": os.getpid(), "host": socket.gethostname(),
          "role": "reader" if comm.rank == 0 else "writer" if comm.rank == 1 else "worker",
          "current_device": int(cp.cuda.runtime.getDevice()),
          "kspecter_started": bool(kspecter.is_initialized())}
    ranks = comm.gather(me, root=1)

    def check_and_report(result):
        frame = kspecter.read_frame(args.cli_frame)
        checks = {
            "FLUX": same32(result["specflux"], frame["flux"]),
            "IVAR": same32(result["specivar"], frame["ivar"]),
            "CHI2PIX": same32(result["chi2pix"], frame["chi2pix"]),
            "RESOLUTION": same32(result["Rdiags"], frame["resolution"]),
            "WAVELENGTH": bool(np.array_equal(frame["wave"], result["wave"]) and
                               np.array_equal(result["wave"],
                                              np.arange(wmin, wmax + 0.5 * dw, dw))),
            "MASK": bool(np.array_equal(
                desispec_mask(result["chi2pix"], result["pixmask_fraction"]),
                np.asarray(frame["mask"], dtype=np.uint32))),
        }
        report = {"ranks": ranks, "checks": checks, "image_device": result["image_device"],
                  "world": comm.size, "workers": comm.size - 2,
                  "gpus_seen": int(cp.cuda.runtime.getDeviceCount()),
                  "extract_s": round(result["extract_s"], 3),
                  "nspec": int(result["specflux"].shape[0]),
                  "nwave": int(result["specflux"].shape[1])}
        with open(args.report, "w") as f:
            json.dump(report, f, indent=1)
        return all(checks.values())

    ok = coordinator.write(check_and_report, result)
    ok = comm.bcast(ok, root=1)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
