"""Run by test_mpi.py under `mpiexec -n 2`: extract_frame over mpi4py communicators.

Writes OUT.rank<r>.npz with what each rank got: the frame over the whole communicator (rank 0
only passes the inputs, as desispec's I/O coordinator does), the frame over a
sub-communicator of that rank alone, and the message every rank raised when one rank asked
for too many spectra."""

import sys

import numpy as np
from mpi4py import MPI

import kspecter

image_path, psf_path, out = sys.argv[1:4]
comm = MPI.COMM_WORLD
rank = comm.rank
args = dict(bundlesize=10, specmin=0, nspec=20, wavelength="6020,6180,0.8", nsubbundles=2,
            model=True)
saved = {}

img = kspecter.read_image(image_path) if rank == 0 else None
psf = kspecter.read_psf(psf_path) if rank == 0 else None
whole = kspecter.extract_frame(img, psf, comm=comm, **args)
saved["whole_is_none"] = whole is None
if whole is not None:
    saved.update({"whole_" + k: v for k, v in whole.items()})

alone_comm = comm.Split(color=rank, key=0)
alone = kspecter.extract_frame(kspecter.read_image(image_path), psf_path, comm=alone_comm, **args)
saved.update({"alone_" + k: v for k, v in alone.items()})
alone_comm.Free()

try:
    bad = dict(args, nspec=1000 if rank == 1 else 20)
    kspecter.extract_frame(kspecter.read_image(image_path), psf_path, comm=comm, **bad)
    saved["error"] = ""
except kspecter.Error as e:
    saved["error"] = f"{type(e).__name__}: {e}"

np.savez(f"{out}.rank{rank}.npz", **saved)
