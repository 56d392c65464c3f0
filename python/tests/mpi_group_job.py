"""Run by test_mpi.py under `mpiexec -n 3`: desi_proc's GPU layout in small. World rank 0 never
calls kspecter (desi_proc's reader and writer ranks never do); ranks 1 and 2 extract over a
group communicator of their own, with only its rank 0 holding the inputs. Kokkos starts in
that first call, so kspecter must not need every rank of the world there. Writes
OUT.npz with the frame the group's rank 0 got."""

import sys

import numpy as np
from mpi4py import MPI

image_path, psf_path, out = sys.argv[1:4]
world = MPI.COMM_WORLD
if world.rank == 0:
    world.Barrier()  # idle until the workers are done, as a reader or writer rank would be
    sys.exit(0)
import kspecter  # noqa: E402  (only the workers load it)

comm = world.Create_group(world.group.Excl([0]))
img = kspecter.read_image(image_path) if comm.rank == 0 else None
psf = psf_path if comm.rank == 0 else None
frame = kspecter.extract_frame(img, psf, 10, 0, 20, "6020,6180,0.8", nsubbundles=2, comm=comm)
if comm.rank == 0:
    np.savez(out + ".npz", **{k: v for k, v in frame.items() if v is not None})
world.Barrier()
