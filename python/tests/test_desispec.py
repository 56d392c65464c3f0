"""desispec's own desi_extract_spectra with kspecter inside (``python -m kspecter.desispec``),
against ``kspecter extract`` on the same DESI-layout preproc: without MPI and with --mpi on 2
and 4 ranks, desispec reads the file, kspecter extracts, desispec writes the frame, and every
data HDU of that frame is the CLI's bit for bit (WAVELENGTH, FIBERMAP and SCORES included).

desispec and what it imports come from perf/desi_env.sh (outside the tree): the folder it
laid out is $KSPECTER_DESI_ENV, default ~/.cache/kspecter-desi. Without it, and without
desispec importable otherwise, these tests skip and say what is missing."""

import os
import shutil
import subprocess
import sys

import numpy as np
import pytest

from conftest import GRID as CONFTEST_GRID, cli_path, fits_image, run_cli, same_bits

GRID = CONFTEST_GRID
NSPEC = 50
PACKAGES = ("desispec", "desiutil", "desitarget", "desimodel", "specter", "gpu_specter")


def desi_path():
    """PYTHONPATH entries that make desispec importable, or skip saying what is missing."""
    folder = os.environ.get("KSPECTER_DESI_ENV",
                            os.path.expanduser("~/.cache/kspecter-desi"))
    paths = [os.path.join(folder, p, "py") for p in PACKAGES]
    if all(os.path.isdir(p) for p in paths):
        return paths
    probe = subprocess.run([sys.executable, "-c", "import desispec.scripts.extract, gpu_specter"],
                           capture_output=True, text=True)
    if probe.returncode == 0:
        return []
    pytest.skip(f"desispec is not importable ({probe.stderr.strip().splitlines()[-1]}) and "
                f"{folder} holds no layout of it: run `bash perf/desi_env.sh` (needs Debian's "
                f"python3-astropy, -fitsio, -yaml, -scipy, -healpy, -numba)")


@pytest.fixture(scope="module")
def setup(tmp_path_factory):
    extra = desi_path()
    import kspecter

    d = str(tmp_path_factory.mktemp("desispec"))
    psf, preproc = os.path.join(d, "psf.fits"), os.path.join(d, "preproc-r0-00000001.fits.gz")
    run_cli("make-psf", "-o", psf, "--nfiber", str(NSPEC), "--ccd", "420,300", "-w",
            "6000,6200")
    run_cli("simulate", "-p", psf, "-o", preproc, "-w", GRID, "--seed", "3",
            "--log-level", "quiet")
    cli_frame = os.path.join(d, "frame-cli.fits.gz")
    run_cli("extract", "-i", preproc, "-p", psf, "-o", cli_frame, "-w", GRID, "-n", str(NSPEC),
            "--no-truth", "--log-level", "quiet")
    package_root = os.path.dirname(os.path.dirname(os.path.abspath(kspecter.__file__)))
    env = dict(os.environ, OMP_PROC_BIND="false", OMP_NUM_THREADS="1", DESI_LOGLEVEL="WARNING",
               KSPECTER_CLI=cli_path(), OMPI_ALLOW_RUN_AS_ROOT="1",
               OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1", NUMBA_CACHE_DIR=os.path.join(d, "numba"),
               PYTHONPATH=os.pathsep.join(extra + [package_root]))
    return dict(dir=d, psf=psf, preproc=preproc, cli_frame=cli_frame, env=env)


# desi_proc's GPU layout, run on the CPU: its own script lines (desispec.scripts.proc) around
# main_gpu_specter, with gpu_specter's ParallelIOCoordinator on 2 + 5 ranks.
PARALLEL_IO = """
import sys
from mpi4py import MPI
import kspecter.desispec
desi_extract = kspecter.desispec.install()
from gpu_specter.mpi import ParallelIOCoordinator
coordinator = ParallelIOCoordinator(MPI.COMM_WORLD)
desi_extract.main_gpu_specter(desi_extract.parse(sys.argv[1:]), coordinator=coordinator)
"""


def run_desispec(setup, ranks, name, parallel_io=False):
    out = os.path.join(setup["dir"], name)
    args = ["-i", setup["preproc"], "-p", setup["psf"], "-o", out, "-w", GRID, "-n", str(NSPEC)]
    if parallel_io:
        command = [sys.executable, "-c", PARALLEL_IO] + args
    else:
        command = [sys.executable, "-m", "kspecter.desispec"] + args + (["--mpi"] if ranks else [])
    if ranks:
        mpiexec = os.environ.get("KSPECTER_MPIEXEC") or shutil.which("mpiexec")
        if not mpiexec:
            pytest.skip("no mpiexec")
        command = [mpiexec, "-n", str(ranks), "--oversubscribe"] + command
    r = subprocess.run(command, capture_output=True, text=True, env=setup["env"], timeout=900)
    assert r.returncode == 0, r.stdout + r.stderr
    return out


def assert_same_hdus(a_path, b_path):
    fits = pytest.importorskip("astropy.io.fits")
    with fits.open(a_path) as a, fits.open(b_path) as b:
        names = [h.name for h in a]
        assert names == [h.name for h in b]
        assert names == ["FLUX", "IVAR", "MASK", "WAVELENGTH", "RESOLUTION", "FIBERMAP",
                         "CHI2PIX", "SCORES"]
        for h in a:
            x, y = h.data, b[h.name].data
            if isinstance(h, fits.BinTableHDU):
                assert x.columns.names == y.columns.names, h.name
                for c in x.columns.names:
                    u, v = np.asarray(x[c]), np.asarray(y[c])
                    if u.dtype.kind in "US":
                        assert np.array_equal(u, v), (h.name, c)
                    else:
                        assert same_bits(u, v), (h.name, c)
            else:
                assert same_bits(np.asarray(x), np.asarray(y)), h.name


@pytest.mark.parametrize("ranks", [0, 2, 4])
def test_desispec_writes_the_cli_frame(setup, ranks):
    frame = run_desispec(setup, ranks, f"frame-desispec-{ranks}.fits.gz")
    assert_same_hdus(frame, setup["cli_frame"])


def test_desi_proc_parallel_io_layout_writes_the_cli_frame(setup):
    """desi_proc's GPU layout (reader, writer and 5 workers) with desispec's own code, on the
    CPU: the ranks, the coordinator and the calls are the GPU node's; only use_gpu is False."""
    frame = run_desispec(setup, 7, "frame-desispec-parallel-io.fits.gz", parallel_io=True)
    assert_same_hdus(frame, setup["cli_frame"])


def test_the_cli_grid_is_numpy_arange(inputs):
    """Needs no desispec: the CLI's WAVELENGTH is the grid desispec writes, value for value."""
    wmin, wmax, dw = (float(v) for v in GRID.split(","))
    wave = fits_image(inputs.frame, "WAVELENGTH")
    assert same_bits(wave.astype("=f8"), np.arange(wmin, wmax + dw / 2, dw))


def readme_example():
    """The Python example of the README's "From Python", as written there."""
    readme = os.path.join(os.path.dirname(__file__), "..", "..", "README.md")
    text = open(readme, encoding="utf-8").read()
    section = text[text.index("## From Python"):]
    start = section.index("```python\n") + len("```python\n")
    return section[start:section.index("```", start)]


def test_the_readme_example_writes_a_frame_desispec_vets(setup, tmp_path):
    """The README's example, run as written on a full synthetic r frame (preproc.fits and
    psf.fits in its folder), writes a frame that desispec's read_frame reads and vet() passes."""
    d = str(tmp_path)
    run_cli("make-psf", "-o", os.path.join(d, "psf.fits"))
    run_cli("simulate", "-p", os.path.join(d, "psf.fits"), "-o", os.path.join(d, "preproc.fits"),
            "-w", "5760,7620,0.8", "--seed", "5", "--log-level", "quiet")
    example = readme_example()
    check = ("\nimport desispec.io\n"
             "f = desispec.io.read_frame('frame.fits')\n"
             "print('VET', f.vet(), f.meta['CAMERA'], f.meta['FLAVOR'], len(f.fibers))\n")
    r = subprocess.run([sys.executable, "-c", example + check], capture_output=True, text=True,
                       cwd=d, env=dict(setup["env"], OMP_NUM_THREADS="2"), timeout=900)
    assert r.returncode == 0, r.stdout + r.stderr
    vet = [line for line in r.stdout.splitlines() if line.startswith("VET")]
    assert vet and vet[0].split()[1:4] == ["0", "r0", "science"], r.stdout
    assert vet[0].split()[4] == "500"


def test_missing_desispec_is_named(tmp_path):
    import kspecter

    package_root = os.path.dirname(os.path.dirname(os.path.abspath(kspecter.__file__)))
    env = dict(os.environ, PYTHONPATH=package_root)
    r = subprocess.run([sys.executable, "-I", "-c",
                        f"import sys; sys.path[:0] = [{package_root!r}]; "
                        "sys.modules['desispec'] = None; "
                        "import kspecter.desispec as d; sys.exit(d.main(['-h']))"],
                       capture_output=True, text=True, env=env)
    assert r.returncode == 2, r.stdout + r.stderr
    assert "desispec" in r.stderr and "perf/desi_env.sh" in r.stderr, r.stderr
