"""kspecter.Extractor against extract_frame (bit for bit, call after call) and the CLI, and
outlier rejection from Python and the CLI on a frame with cosmic rays left out of its mask."""

import os

import numpy as np
import pytest

import kspecter
from conftest import GRID, LAYOUT, fits_image, run_cli, same_bits

ARGS = dict(specmin=0, nspec=20, wavelength=GRID, **LAYOUT)


@pytest.fixture(scope="module")
def image(inputs):
    return kspecter.read_image(inputs.image)


def noisy(image, seed):
    """The image with fresh noise of its own variance (a noise realisation)."""
    rng = np.random.default_rng(seed)
    ivar = np.asarray(image["ivar"], dtype=np.float64)
    sigma = np.where(ivar > 0, 1 / np.sqrt(np.where(ivar > 0, ivar, 1)), 0)
    return {"image": np.asarray(image["image"], dtype=np.float64) + sigma * rng.normal(size=ivar.shape),
            "ivar": image["ivar"]}


def assert_same(a, b):
    for key in ("specflux", "specivar", "specmask", "wave", "Rdiags", "pixmask_fraction",
                "chi2pix"):
        assert same_bits(a[key], b[key]), key


def test_every_call_is_extract_frame_s_frame_bit_for_bit(inputs, image):
    ex = kspecter.Extractor(inputs.psf, model=True, **ARGS)
    for seed in (1, 2, 3):
        img = noisy(image, seed)
        want = kspecter.extract_frame(img, inputs.psf, model=True, **ARGS)
        got = ex.extract(img)
        assert_same(got, want)
        assert same_bits(got["modelimage"], want["modelimage"])
        assert same_bits(ex.model(), want["modelimage"])
    # The first image again: its frame again, though three others came between.
    assert_same(ex.extract(image), kspecter.extract_frame(image, inputs.psf, **ARGS))


def test_stage_times_come_when_asked_and_change_no_bit(inputs, image):
    """Stage times fence the backend between stages (the quality stage's window kernels then
    run after the decorrelation, not beside it): the same frame with them and without."""
    ex = kspecter.Extractor(inputs.psf, model=True, **ARGS)
    for results in ("host", "device"):
        img = noisy(image, 11)
        timing = {}
        timed = ex.extract(img, timing=timing, results=results)
        assert timing["kspecter::extract::quality"] > 0, results
        assert timing["kspecter::extract::decorrelation"] > 0, results
        untimed = ex.extract(img, results=results)
        assert_same(timed, untimed)
        assert same_bits(timed["modelimage"], untimed["modelimage"])


def test_weights_changed_in_a_few_pixels_rework_only_their_patches(inputs, image):
    args = dict(ARGS, nspec=10)  # one bundle: one batch, whose solve is kept, on a host too
    ex = kspecter.Extractor(inputs.psf, **args)
    assert ex.last_reuse is None
    ex.extract(image)
    first = ex.last_reuse
    assert not first["factor_reused"] and first["patches_reworked"] == 0
    # Two pixels at the brightest spot lose their weight, as rejected pixels do.
    y, x = np.unravel_index(np.argmax(ex.model()), image["image"].shape)
    ivar = np.array(image["ivar"], dtype=np.float64)
    ivar[y:y + 2, x] = 0
    for seed, reworked in ((4, True), (5, False)):  # the same weights again: nothing to redo
        img = {"image": noisy(image, seed)["image"], "ivar": ivar}
        assert_same(ex.extract(img), kspecter.extract_frame(img, inputs.psf, **args))
        r = ex.last_reuse
        assert r["factor_reused"] and r["patches"] == first["patches"]
        if reworked:
            assert 0 < r["patches_reworked"] < r["patches"]
        else:
            assert r["patches_reworked"] == 0


def test_results_written_in_the_backend_s_memory_are_the_host_s_bits(inputs, image):
    # results='device': the arrays the extraction writes where the backend runs (cupy on a
    # GPU; numpy on a host backend, whose memory that is), BAD2DFIT's medians and the model's
    # float32 limits taken there, against the host form, call after call.
    host = kspecter.Extractor(inputs.psf, model=True, **ARGS)
    into = kspecter.Extractor(inputs.psf, model=True, **ARGS)
    for seed in (1, 2):
        img = noisy(image, seed)
        want = host.extract(img, results="host")
        got = into.extract(img, results="device")
        assert_same(got, want)
        assert got["specmask"].dtype == np.int64
        assert same_bits(got["modelimage"], want["modelimage"])
        assert into.model() is got["modelimage"]
        assert into.last_reuse == host.last_reuse
    with pytest.raises(kspecter.ParameterError, match="results"):
        into.extract(image, results="gpu")


def test_the_model_is_there_without_asking_and_read_only(inputs, image):
    with kspecter.Extractor(inputs.psf, **ARGS) as ex:
        assert ex.model() is None
        result = ex.extract(image)
        assert result["modelimage"] is None
        model = ex.model()
        assert model.shape == image["image"].shape and model.dtype == np.float64
        assert same_bits(model.astype(np.float32), fits_image(inputs.model, "MODEL"))
        with pytest.raises(ValueError):
            model[0, 0] = 1
        ex.extract(noisy(image, 9))
        assert same_bits(model.astype(np.float32), fits_image(inputs.model, "MODEL")), \
            "an earlier model stays as it was"
    # Closed, it extracts again, allocating anew.
    assert_same(ex.extract(image), kspecter.extract_frame(image, inputs.psf, **ARGS))


def test_it_refuses_what_extract_frame_refuses(inputs):
    with pytest.raises(kspecter.ParameterError, match="reject_sigma"):
        kspecter.Extractor(inputs.psf, reject_sigma=-1, **ARGS)
    with pytest.raises(kspecter.ParameterError, match="outside the PSF"):
        kspecter.Extractor(inputs.psf, 10, 0, 20, wavelength="5000,6100,0.8")
    with pytest.raises(kspecter.ParameterError, match="reject_iter"):
        kspecter.extract_frame({"image": np.zeros((400, 200)), "ivar": np.ones((400, 200))},
                               inputs.psf, reject_sigma=5, reject_iter=0, **ARGS)


@pytest.fixture(scope="module")
def cosmic_files(inputs, tmp_path_factory):
    """The session's frame again with cosmic rays: left out of the mask, and masked."""
    folder = tmp_path_factory.mktemp("cosmics")
    files = {}
    for name, extra in (("raw", ["--unmasked-cosmics"]), ("masked", [])):
        files[name] = str(folder / f"{name}.fits")
        run_cli("simulate", "-p", inputs.psf, "-o", files[name], "-w", GRID, "--seed", "3",
                "--defects", *extra, "--log-level", "quiet")
    return files


def test_rejection_from_python_and_the_cli_agree_and_are_recorded(inputs, cosmic_files,
                                                                   tmp_path):
    raw = kspecter.read_image(cosmic_files["raw"])
    masked = kspecter.read_image(cosmic_files["masked"])
    hits = (masked["ivar"] == 0) & (raw["ivar"] > 0)
    assert hits.sum() > 20
    plain = kspecter.extract_frame(raw, inputs.psf, **ARGS)
    assert "rejected" not in plain
    result = kspecter.extract_frame(raw, inputs.psf, reject_sigma=5, **ARGS)
    assert result["rejected"].shape == (20,) and result["reject_passes"] >= 1
    assert 0 < result["rejected"].sum() <= 1.5 * hits.sum() + 10
    cosmic = (result["specmask"] & 4) != 0  # specmask COSMIC
    assert cosmic.any() and not ((plain["specmask"] & 4) != 0).any()
    # The Extractor gives the same frame.
    assert_same(kspecter.Extractor(inputs.psf, reject_sigma=5, **ARGS).extract(raw), result)
    # The CLI writes it, with what rejection did in the FLUX header and SCORES.
    out = str(tmp_path / "frame.fits")
    run_cli("extract", "-i", cosmic_files["raw"], "-p", inputs.psf, "-o", out, "-w", GRID,
            "--bundlesize", "10", "--nsubbundles", "2", "--reject-sigma", "5",
            "--log-level", "quiet", "--no-truth")
    astropy_fits = pytest.importorskip("astropy.io.fits")
    with astropy_fits.open(out) as f:
        header = f["FLUX"].header
        assert header["REJSIGMA"] == 5 and header["REJITER"] == 3
        assert header["REJPIX"] == result["rejected"].sum()
        assert header["REJPASS"] == result["reject_passes"]
        assert np.array_equal(f["SCORES"].data["NREJECT"], result["rejected"])
    back = kspecter.read_frame(out)
    assert same_bits(back["flux"], result["specflux"].astype(np.float32))
    assert same_bits(back["mask"], result["specmask"].astype(np.uint32))
    assert os.path.exists(out)


def test_rejection_keeps_each_frame_on_one_rank(inputs, cosmic_files, tmp_path):
    """Two ranks on one frame would judge pixels at a share's edge against a model without
    the next bundle's light: refused before any work. Two frames on two ranks: each rank's
    frame is the single process's."""
    import shutil
    import subprocess

    pytest.importorskip("mpi4py")
    mpiexec = os.environ.get("KSPECTER_MPIEXEC") or shutil.which("mpiexec")
    if not mpiexec:
        pytest.skip("no mpiexec")
    env = dict(os.environ, OMP_PROC_BIND="false", OMPI_ALLOW_RUN_AS_ROOT="1",
               OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1", OMP_NUM_THREADS="1")
    from conftest import cli_path

    info = subprocess.run([cli_path(), "info"], capture_output=True, text=True, env=env)
    if "built without MPI" in info.stdout:
        pytest.skip("the CLI was built without MPI (two launched processes are two jobs)")
    layout = ["-w", GRID, "--bundlesize", "10", "--nsubbundles", "2", "--reject-sigma", "5",
              "--no-truth", "--log-level", "quiet"]
    shared = str(tmp_path / "shared.fits")
    r = subprocess.run([mpiexec, "-n", "2", "--oversubscribe", cli_path(), "extract", "-i",
                        cosmic_files["raw"], "-p", inputs.psf, "-o", shared, *layout],
                       capture_output=True, text=True, env=env, timeout=300)
    assert r.returncode != 0 and "needs each frame on one rank" in r.stderr
    assert not os.path.exists(shared)
    batch = tmp_path / "list.txt"
    outs = [str(tmp_path / f"b{i}.fits") for i in range(2)]
    batch.write_text("".join(f"{cosmic_files['raw']} {inputs.psf} {o}\n" for o in outs))
    r = subprocess.run([mpiexec, "-n", "2", "--oversubscribe", cli_path(), "extract",
                        "--batch", str(batch), *layout],
                       capture_output=True, text=True, env=env, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    one = str(tmp_path / "one.fits")
    run_cli("extract", "-i", cosmic_files["raw"], "-p", inputs.psf, "-o", one, *layout)
    for o in outs:
        for hdu in ("FLUX", "IVAR", "MASK"):
            assert same_bits(fits_image(o, hdu), fits_image(one, hdu)), (o, hdu)
