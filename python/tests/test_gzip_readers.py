"""The .fits.gz files kspecter writes (frames, model images, simulated preprocs: one gzip member
deflated in pieces on several threads) read by every reader DESI uses: gzip -t, Python's gzip,
astropy (its checksums verified) and fitsio (Debian's python3-fitsio, on CFITSIO). The gzipped
file inflates to the plain file's bytes, so its data are the plain frame's bit for bit.
CFITSIO's own gunzip is checked in tests/io/tst_gzip.cpp."""

import gzip
import os
import shutil
import subprocess
import warnings

import numpy as np
import pytest

from conftest import GRID, run_cli


@pytest.fixture(scope="module")
def written(inputs, tmp_path_factory):
    """Each kind of output written plain and gzipped, with 3 gzip threads."""
    d = str(tmp_path_factory.mktemp("gz"))
    files = {}
    for ext in ("fits", "fits.gz"):
        frame, model = os.path.join(d, f"frame.{ext}"), os.path.join(d, f"model.{ext}")
        pre = os.path.join(d, f"preproc.{ext}")
        run_cli("extract", "-i", inputs.image, "-p", inputs.psf, "-o", frame, "-m", model,
                "-w", GRID, "--bundlesize", "10", "--nsubbundles", "2", "--log-level", "quiet",
                "--no-truth", "--io-threads", "3")
        run_cli("simulate", "-p", inputs.psf, "-o", pre, "-w", GRID, "--seed", "3",
                "--log-level", "quiet", "--io-threads", "3")
        files[ext] = {"frame": frame, "model": model, "preproc": pre}
    return files


KINDS = ("frame", "model", "preproc")


@pytest.mark.parametrize("kind", KINDS)
def test_gzip_t_accepts_it(written, kind):
    gz = shutil.which("gzip")
    assert gz, "gzip is not installed"
    r = subprocess.run([gz, "-t", written["fits.gz"][kind]], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr


@pytest.mark.parametrize("kind", KINDS)
def test_python_gzip_gives_the_plain_file(written, kind):
    with gzip.open(written["fits.gz"][kind], "rb") as f:
        inflated = f.read()
    with open(written["fits"][kind], "rb") as f:
        plain = f.read()
    assert inflated == plain


@pytest.mark.parametrize("kind", KINDS)
def test_astropy_reads_it_and_its_checksums(written, kind):
    fits = pytest.importorskip("astropy.io.fits")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a checksum mismatch is an astropy warning
        with fits.open(written["fits.gz"][kind], checksum=True) as gz, \
                fits.open(written["fits"][kind], checksum=True) as plain:
            assert [h.name for h in gz] == [h.name for h in plain]
            for a, b in zip(gz, plain):
                if a.data is not None and not isinstance(a.data, fits.FITS_rec):
                    assert np.array_equal(a.data, b.data)


@pytest.mark.parametrize("kind", KINDS)
def test_fitsio_reads_it(written, kind):
    fitsio = pytest.importorskip("fitsio")
    with fitsio.FITS(written["fits.gz"][kind]) as gz, fitsio.FITS(written["fits"][kind]) as plain:
        assert len(gz) == len(plain)
        for i in range(len(plain)):
            if plain[i].get_exttype() == "IMAGE_HDU" and plain[i].has_data():
                assert np.array_equal(gz[i].read(), plain[i].read())


def test_gzip_level_is_checked_and_changes_the_bytes_not_the_data(written, inputs, tmp_path):
    r = run_cli("extract", "-i", inputs.image, "-p", inputs.psf, "-o", str(tmp_path / "x.fits.gz"),
                "-w", GRID, "--gzip-level", "7", check=False)
    assert r.returncode != 0 and "gzip level" in r.stderr
    assert not (tmp_path / "x.fits.gz").exists()
    out = str(tmp_path / "level3.fits.gz")
    run_cli("extract", "-i", inputs.image, "-p", inputs.psf, "-o", out, "-w", GRID,
            "--bundlesize", "10", "--nsubbundles", "2", "--log-level", "quiet", "--no-truth",
            "--io-threads", "3", "--gzip-level", "3")
    with gzip.open(out, "rb") as f, open(written["fits"]["frame"], "rb") as p:
        assert f.read() == p.read()
