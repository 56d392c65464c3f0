"""extract_frame under MPI through mpi4py: two ranks, the world communicator and
sub-communicators, give the single-process frame bit for bit; a failure on one rank raises on
both."""

import os
import shutil
import subprocess
import sys

import numpy as np
import pytest

import kspecter
from conftest import GRID, same_bits

KEYS = ("wave", "specflux", "specivar", "specmask", "Rdiags", "pixmask_fraction", "chi2pix",
        "modelimage")


def run_mpi_job(nranks, script, *args):
    """`mpiexec -n nranks python script args` (one thread a rank); skips without MPI."""
    pytest.importorskip("mpi4py")
    mpiexec = os.environ.get("KSPECTER_MPIEXEC") or shutil.which("mpiexec")
    if not mpiexec:
        pytest.skip("no mpiexec")
    env = dict(os.environ, OMP_PROC_BIND="false", OMPI_ALLOW_RUN_AS_ROOT="1",
               OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    r = subprocess.run([mpiexec, "-n", str(nranks), "--oversubscribe", "-x", "OMP_NUM_THREADS=1",
                        sys.executable, os.path.join(os.path.dirname(__file__), script), *args],
                       capture_output=True, text=True, env=env, timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr


@pytest.fixture(scope="module")
def ranks(inputs, tmp_path_factory):
    out = str(tmp_path_factory.mktemp("mpi") / "result")
    run_mpi_job(2, "mpi_job.py", inputs.image, inputs.psf, out)
    return [dict(np.load(f"{out}.rank{rank}.npz")) for rank in (0, 1)]


@pytest.fixture(scope="module")
def single(inputs):
    return kspecter.extract_frame(kspecter.read_image(inputs.image), inputs.psf, bundlesize=10,
                                  specmin=0, nspec=20, wavelength=GRID, nsubbundles=2, model=True)


def test_a_group_that_leaves_out_world_rank_0_extracts_the_frame(inputs, single, tmp_path):
    """desi_proc's GPU layout: the first kspecter call, which starts Kokkos, comes from some
    ranks of the world only (it hung in a collective over the whole world before)."""
    out = str(tmp_path / "group")
    run_mpi_job(3, "mpi_group_job.py", inputs.image, inputs.psf, out)
    got = dict(np.load(out + ".npz"))
    for key in KEYS[:-1]:  # no model asked for
        assert same_bits(got[key], single[key]), key


def test_two_ranks_give_the_single_process_frame(ranks, single):
    root, other = ranks
    assert not root["whole_is_none"] and other["whole_is_none"]
    for key in KEYS[:-1]:
        assert same_bits(root["whole_" + key], single[key]), key
    # The model image is summed over the ranks, whose fibers share pixels: the same sum in
    # another order.
    assert np.allclose(root["whole_modelimage"], single["modelimage"], rtol=1e-12, atol=0)
    assert np.count_nonzero(single["modelimage"]) > 0


def test_sub_communicators_of_one_rank_each_extract_the_whole_frame(ranks, single):
    for rank in ranks:
        for key in KEYS:
            assert same_bits(rank["alone_" + key], single[key]), key


def test_a_failure_on_one_rank_raises_on_every_rank(ranks):
    messages = [str(rank["error"]) for rank in ranks]
    assert messages[1].startswith("ParameterError: ")
    assert "nspec 1000 from specmin 0 exceeds the PSF's 20 fibers" in messages[1]
    # Rank 0 had nothing wrong: it learns rank 1's failure and raises kspecter.Error with it.
    assert messages[0].startswith("Error: ")
    assert "nspec 1000 from specmin 0 exceeds" in messages[0]
