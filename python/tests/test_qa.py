"""QA plots (``python -m kspecter.qa``) of the session's small frame: every plot is a PNG,
the pulls against the simulation's truth are finite and agree with the CLI's, the banded
product is desispec's resolution matrix, and bad arguments exit with status 2."""

import os
import re
import subprocess
import sys

import numpy as np
import pytest

from conftest import LAYOUT, run_cli

pytest.importorskip("astropy.io.fits")
pytest.importorskip("matplotlib")
from kspecter import qa  # noqa: E402  (after the skips: qa needs astropy and matplotlib)

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def assert_pngs(paths):
    """Each file starts with PNG's signature and holds more than a blank picture."""
    for path in paths:
        with open(path, "rb") as f:
            assert f.read(8) == PNG_MAGIC, path
        assert os.path.getsize(path) > 10_000, path


def test_every_plot_is_written_with_finite_pulls(inputs, tmp_path):
    out = tmp_path / "qa"
    result = qa.make_qa(inputs.frame, str(out), image=inputs.image, model=inputs.model,
                        truth=inputs.image)
    assert sorted(os.path.basename(p) for p in result["files"]) == [
        "chi2pix.png", "pulls.png", "region.png", "spectra.png"]
    assert_pngs(result["files"])
    stats = result["pulls"]
    assert stats["n"] > 1000
    assert all(np.isfinite(v) for v in stats.values())
    assert abs(stats["mean"]) < 0.2 and 0.7 < stats["std"] < 1.5


def test_pulls_on_another_grid_agree_with_the_cli(inputs, tmp_path):
    """The truth (on the simulation's 0.8 A grid) is interpolated onto a frame of 1 A bins
    that starts at fiber 3: the statistics equal those the CLI prints for the same frame."""
    frame = str(tmp_path / "frame.fits")
    r = run_cli("extract", "-i", inputs.image, "-p", inputs.psf, "-o", frame,
                "-w", "6030.3,6170,1.0", "-s", "3", "-n", "7",
                "--bundlesize", str(LAYOUT["bundlesize"]), "--nsubbundles",
                str(LAYOUT["nsubbundles"]), "--log-level", "quiet")
    cli = re.search(r"over (\d+) bins: .* mean ([-+.\d]+), std ([.\d]+)", r.stdout)
    assert cli, r.stdout
    stats = qa.make_qa(frame, str(tmp_path / "qa"), truth=inputs.image)["pulls"]
    assert stats["n"] == int(cli.group(1))
    assert stats["mean"] == pytest.approx(float(cli.group(2)), abs=6e-5)
    assert stats["std"] == pytest.approx(float(cli.group(3)), abs=6e-5)


def test_banded_product_is_desispecs_resolution_matrix():
    """R[r, r + offset] = diagonals[k, r + offset], offset = ndiag//2 - k (scipy's
    dia_matrix with desispec's offsets); rows reaching past the grid are NaN."""
    rng = np.random.default_rng(1)
    nspec, ndiag, nwave = 2, 5, 13
    half = ndiag // 2
    diagonals = rng.normal(size=(nspec, ndiag, nwave))
    x = rng.normal(size=(nspec, nwave))
    got = qa.apply_resolution(diagonals, x)
    for i in range(nspec):
        dense = np.zeros((nwave, nwave))
        for k in range(ndiag):
            offset = half - k
            for r in range(max(0, -offset), min(nwave, nwave - offset)):
                dense[r, r + offset] = diagonals[i, k, r + offset]
        np.testing.assert_allclose(got[i, half:-half], (dense @ x[i])[half:-half])
        assert np.isnan(got[i, :half]).all() and np.isnan(got[i, -half:]).all()


def test_command_line_with_region_and_fibers(inputs, tmp_path):
    out = tmp_path / "cli"
    r = subprocess.run([sys.executable, "-m", "kspecter.qa", inputs.frame, "-o", str(out),
                        "--image", inputs.image, "--model", inputs.model,
                        "--truth", inputs.image, "--region", "100:260,20:180",
                        "--fibers", "3,12", "--zoom", "6080,6120"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert "pull against truth" in r.stdout
    assert_pngs(str(out / name) for name in
                ("spectra.png", "chi2pix.png", "region.png", "pulls.png"))


@pytest.mark.parametrize("extra, words", [
    (["--region", "100:50,0:10"], "not a non-empty box inside the CCD"),
    (["--region", "0:10,0:10000"], "not a non-empty box inside the CCD"),
    (["--region", "rows"], "expected Y0:Y1,X0:X1"),
    (["--fibers", "3,99"], "no fiber 99"),
    (["--image", "MISSING"], "--image and --model go together"),
])
def test_bad_arguments_exit_2_with_a_message(inputs, tmp_path, capsys, extra, words):
    args = [inputs.frame, "-o", str(tmp_path / "never")]
    if "--region" in extra:
        args += ["--image", inputs.image, "--model", inputs.model]
    with pytest.raises(SystemExit) as stop:
        qa.main(args + extra)
    assert stop.value.code == 2
    assert words in capsys.readouterr().err
    assert not (tmp_path / "never").exists()


def test_missing_or_unreadable_files_exit_2(inputs, tmp_path, capsys):
    missing = str(tmp_path / "nowhere.fits")
    with pytest.raises(SystemExit) as stop:
        qa.main([missing, "-o", str(tmp_path / "never")])
    assert stop.value.code == 2 and f"{missing}: no such file" in capsys.readouterr().err
    with pytest.raises(SystemExit) as stop:
        qa.main([inputs.frame, "-o", str(tmp_path / "never"), "--truth", inputs.frame])
    assert stop.value.code == 2 and "no TRUTH_FLUX HDU" in capsys.readouterr().err
    assert not (tmp_path / "never").exists()
