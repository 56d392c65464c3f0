"""kspecter's log lines and warnings in Python go through the `logging` module (logger
`kspecter`, or the one set_logger names, such as desiutil's), with the C++ file, line and
function as the record's; the CLI's --timing-json is JSON with the stage times; the CLI warns
about fibers with many masked bins."""

import gzip
import json
import logging
import os
import re
import shutil
import subprocess
import sys

import pytest

import kspecter
import kspecter._kspecter
from conftest import GRID, LAYOUT, run_cli

# desiutil's log format (desiutil/log.py, _configure_root_logger, no timestamp).
DESIUTIL_FORMAT = "%(levelname)s:%(filename)s:%(lineno)s:%(funcName)s: %(message)s"


def test_warn_goes_to_the_kspecter_logger(caplog):
    with caplog.at_level(logging.DEBUG, logger="kspecter"):
        kspecter._kspecter._log(30, "a library warning")
        kspecter._kspecter._log(20, "an info line")
        kspecter._kspecter._log(10, "a debug line")
        kspecter._kspecter._log(40, "an error line")
    records = [r for r in caplog.records if r.name == "kspecter"]
    assert [(r.levelname, r.getMessage()) for r in records] == [
        ("WARNING", "a library warning"), ("INFO", "an info line"), ("DEBUG", "a debug line"),
        ("ERROR", "an error line")]
    assert all(r.filename == "runtime.cpp" and r.lineno > 0 for r in records)


def test_the_logger_level_filters(caplog):
    with caplog.at_level(logging.WARNING, logger="kspecter"):
        kspecter._kspecter._log(20, "not shown")
        kspecter._kspecter._log(30, "shown")
    assert [r.getMessage() for r in caplog.records if r.name == "kspecter"] == ["shown"]


def test_a_gzip_warning_reaches_logging(inputs, tmp_path, caplog):
    path = tmp_path / "image.fits.gz"
    with open(inputs.image, "rb") as src, gzip.open(path, "wb") as dst:
        shutil.copyfileobj(src, dst)
    with open(path, "ab") as f:
        f.write(b"garbage")
    with caplog.at_level(logging.WARNING, logger="kspecter"):
        kspecter.read_image(str(path))
    messages = [r for r in caplog.records if r.name == "kspecter" and r.levelno == logging.WARNING]
    assert any("trailing garbage" in r.getMessage() and r.filename == "gzip_file.cpp"
               for r in messages), [r.getMessage() for r in caplog.records]


def test_extraction_lines_in_desiutils_format(inputs):
    image = kspecter.read_image(inputs.image)
    logger = logging.getLogger("kspecter.test.desiutil")
    logger.setLevel(logging.DEBUG)
    logger.propagate = False
    lines = []

    class Collect(logging.Handler):
        def emit(self, record):
            lines.append(self.format(record))

    handler = Collect()
    handler.setFormatter(logging.Formatter(DESIUTIL_FORMAT))
    logger.addHandler(handler)
    kspecter.set_logger(logger)
    try:
        kspecter.extract_frame(image, inputs.psf, specmin=0, nspec=10, wavelength=GRID,
                               loglevel="DEBUG", **LAYOUT)
    finally:
        kspecter.set_logger(None)
        logger.removeHandler(handler)
    text = "\n".join(lines)
    assert re.search(r"^INFO:log_progress\.cpp:\d+:started: extracting 1 frame on 1 rank$", text,
                     re.M), text
    assert re.search(r"^DEBUG:log_progress\.cpp:\d+:frame_extracted: +kspecter::extract::assembly",
                     text, re.M), text


def test_set_logger_takes_loggers_only():
    with pytest.raises(TypeError):
        kspecter.set_logger("kspecter")


def test_without_logging_configured_lines_go_to_stderr():
    code = "import kspecter; kspecter._kspecter._log(30, 'hello'); kspecter._kspecter._log(20, 'info too')"
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       env=dict(os.environ, OMP_PROC_BIND="false"))
    assert r.returncode == 0, r.stderr
    assert "kspecter: WARNING: hello" in r.stderr
    assert "kspecter: INFO: info too" in r.stderr


def test_timing_json_is_json_with_the_stages(inputs, tmp_path):
    out = tmp_path / "timing.json"
    run_cli("extract", "-i", inputs.image, "-p", inputs.psf, "-o", str(tmp_path / "f.fits"),
            "-w", GRID, "--bundlesize", "10", "--nsubbundles", "2", "--no-truth",
            "--log-level", "warning", "--timing-json", str(out))
    t = json.loads(out.read_text())
    assert t["ok"] is True and t["frames"] == 1 and t["frames_done"] == 1 and t["ranks"] == 1
    for key in ("startup_seconds", "job_wall_seconds", "busiest_rank_seconds", "total_seconds"):
        assert isinstance(t[key], float) and t[key] >= 0, key
    assert t["total_seconds"] >= t["startup_seconds"]
    for stage in ("spots", "assembly", "factorisation", "decorrelation"):
        assert t["stages"]["kspecter::extract::" + stage] >= 0


def test_masked_fibers_are_warned_about_with_their_wavelengths(inputs, tmp_path):
    fits = pytest.importorskip("astropy.io.fits")
    path = tmp_path / "masked.fits"
    with fits.open(inputs.image) as f:
        f["IVAR"].data[150:230, :] = 0  # CCD rows: a band of wavelengths of every fiber
        f.writeto(path)
    r = run_cli("extract", "-i", str(path), "-p", inputs.psf, "-o", str(tmp_path / "m.fits"),
                "-w", GRID, "--bundlesize", "10", "--nsubbundles", "2", "--no-truth",
                "--log-level", "warning", "--warn-masked", "0.05")
    warnings = [line for line in r.stderr.splitlines() if "WARNING: " in line]
    assert len(warnings) == 20, r.stderr
    assert re.search(r"fiber 0: \d+\.\d% of its bins \(\d+\) have ivar = 0, at \d+\.\d-\d+\.\d A",
                     r.stderr), r.stderr
    quiet = run_cli("extract", "-i", str(path), "-p", inputs.psf, "-o", str(tmp_path / "q.fits"),
                    "-w", GRID, "--bundlesize", "10", "--nsubbundles", "2", "--no-truth",
                    "--log-level", "error", "--warn-masked", "0.05")
    assert "WARNING" not in quiet.stderr


def test_a_batch_warns_about_each_frame_from_the_rank_that_writes_it(inputs, tmp_path):
    fits = pytest.importorskip("astropy.io.fits")
    path = tmp_path / "masked.fits"
    with fits.open(inputs.image) as f:
        f["IVAR"].data[150:230, :] = 0
        f.writeto(path)
    batch = tmp_path / "batch.txt"
    batch.write_text(f"{path} {inputs.psf} {tmp_path / 'a.fits'} {GRID}\n"
                     f"{inputs.image} {inputs.psf} {tmp_path / 'b.fits'} {GRID}\n")
    r = run_cli("extract", "--batch", str(batch), "--bundlesize", "10", "--nsubbundles", "2",
                "--no-truth", "--log-level", "warning", "--warn-masked", "0.05")
    warnings = [line for line in r.stderr.splitlines() if "WARNING: " in line]
    assert len(warnings) == 20, r.stderr  # every fiber of the masked frame, none of the other
    assert all(str(tmp_path / "a.fits") in line for line in warnings), r.stderr
