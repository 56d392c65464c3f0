"""Shared inputs of the Python tests: a small synthetic PSF and image made by the kspecter CLI
(20 fibers, a 400 x 200 CCD, 6000-6200 A), and the CLI's own frame of them, which the Python
module must reproduce bit for bit."""

import os
import shutil
import subprocess
import sys

import numpy as np
import pytest

GRID = "6020,6180,0.8"
LAYOUT = dict(bundlesize=10, nsubbundles=2)


def cli_path():
    """The kspecter executable of this build ($KSPECTER_CLI, else the package's bin/)."""
    import kspecter

    for candidate in (os.environ.get("KSPECTER_CLI"),
                      os.path.join(os.path.dirname(kspecter.__file__), "bin", "kspecter"),
                      shutil.which("kspecter")):
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    pytest.fail("no kspecter executable: set KSPECTER_CLI")


def run_cli(*args, check=True):
    env = dict(os.environ, OMP_PROC_BIND="false")
    r = subprocess.run([cli_path(), *args], capture_output=True, text=True, env=env)
    if check and r.returncode != 0:
        pytest.fail(f"kspecter {' '.join(args)} failed ({r.returncode}):\n{r.stdout}{r.stderr}")
    return r


class Inputs:
    """The files of one test session, and the CLI's frame of them."""

    def __init__(self, folder):
        self.dir = str(folder)
        self.psf = os.path.join(self.dir, "psf.fits")
        self.image = os.path.join(self.dir, "image.fits")
        self.frame = os.path.join(self.dir, "cli-frame.fits")
        self.model = os.path.join(self.dir, "cli-model.fits")
        run_cli("make-psf", "-o", self.psf, "--nfiber", "20", "--ccd", "200,400",
                "-w", "6000,6200")
        run_cli("simulate", "-p", self.psf, "-o", self.image, "-w", GRID, "--seed", "3",
                "--log-level", "quiet")
        run_cli("extract", "-i", self.image, "-p", self.psf, "-o", self.frame, "-m",
                self.model, "-w", GRID, "--bundlesize", "10", "--nsubbundles", "2",
                "--log-level", "quiet", "--no-truth")


@pytest.fixture(scope="session")
def inputs(tmp_path_factory):
    return Inputs(tmp_path_factory.mktemp("kspecter-py"))


@pytest.fixture(scope="session")
def cli_frame(inputs):
    import kspecter

    return kspecter.read_frame(inputs.frame)


def fits_image(path, hdu):
    """One image HDU of a FITS file, read by astropy (an independent reader)."""
    astropy_fits = pytest.importorskip("astropy.io.fits")
    with astropy_fits.open(path) as f:
        return np.array(f[hdu].data)


def host_array(x):
    """x as numpy holds it: a device array (cupy) copied to the host."""
    if not isinstance(x, np.ndarray) and hasattr(x, "__cuda_array_interface__"):
        return x.get()
    return x


def same_bits(a, b):
    """True when two arrays hold the same values bit for bit (NaNs and signed zeros too); a
    device array (cupy) is compared by its copy on the host."""
    # FITS data come big-endian: compare values in native byte order.
    a, b = (np.ascontiguousarray(host_array(x), dtype=x.dtype.newbyteorder("=")) for x in (a, b))
    return a.shape == b.shape and a.dtype == b.dtype and a.tobytes() == b.tobytes()


sys.dont_write_bytecode = True
