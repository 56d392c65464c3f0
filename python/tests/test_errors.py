"""Bad arguments raise Python exceptions carrying the CLI's messages."""

import numpy as np
import pytest

import kspecter
from conftest import GRID, run_cli


@pytest.fixture(scope="module")
def image(inputs):
    return kspecter.read_image(inputs.image)


def extract(inputs, image, **changes):
    args = dict(img=image, psf=inputs.psf, bundlesize=10, specmin=0, nspec=10,
                wavelength=GRID, nsubbundles=2)
    args.update(changes)
    return kspecter.extract_frame(**args)


@pytest.mark.parametrize("changes, cli_args, words", [
    (dict(nspec=1000), ["-n", "1000"], "nspec 1000 from specmin 0 exceeds"),
    (dict(specmin=-5), ["-s", "-5"], "specmin -5 outside"),
    (dict(nsubbundles=11), ["--nsubbundles", "11"], "nsubbundles must be in 1..bundlesize"),
    (dict(wavelength="6020,6180,-1"), ["-w", "6020,6180,-1"], "dw must be > 0"),
    (dict(pixpad_frac=2.0), ["--pixpad-frac", "2"], "pixpad_frac must be in [0, 1]"),
    (dict(regularize=-1.0), ["-r", "-1"], "regularize must be >= 0"),
])
def test_bad_options_raise_value_errors_with_the_cli_message(inputs, image, tmp_path, changes,
                                                             cli_args, words):
    with pytest.raises(kspecter.ParameterError) as err:
        extract(inputs, image, **changes)
    assert isinstance(err.value, ValueError) and isinstance(err.value, kspecter.Error)
    message = str(err.value)
    assert words in message
    base = ["-w", GRID, "--bundlesize", "10", "--nsubbundles", "2", "-n", "10"]
    r = run_cli("extract", "-i", inputs.image, "-p", inputs.psf, "-o",
                str(tmp_path / "never.fits"), *base, *cli_args, "--log-level", "quiet",
                check=False)
    assert r.returncode != 0
    assert message in r.stderr  # the CLI adds only the frame it was extracting
    assert not (tmp_path / "never.fits").exists()


def test_unreadable_psf_is_an_input_error_naming_the_file(inputs, image, tmp_path):
    missing = str(tmp_path / "nowhere.fits")
    with pytest.raises(kspecter.InputError) as err:
        extract(inputs, image, psf=missing)
    assert isinstance(err.value, OSError)
    assert missing in str(err.value)
    broken = tmp_path / "broken.fits"
    broken.write_bytes(b"SIMPLE  =                    T" + b" " * 50)
    with pytest.raises(kspecter.InputError) as err:
        kspecter.read_psf(str(broken))
    assert str(broken) in str(err.value)


def test_arrays_of_the_wrong_shape_or_kind(inputs, image):
    cut = {"image": image["image"][:, :-1], "ivar": image["ivar"][:, :-1]}
    with pytest.raises(ValueError, match="image is 199 x 400 pixels but the PSF describes a 200 x 400 CCD"):
        extract(inputs, image, img=cut)
    with pytest.raises(ValueError, match="inverse variance"):
        extract(inputs, image, img={"image": image["image"], "ivar": image["ivar"][:-1]})
    with pytest.raises(ValueError, match="2-D"):
        extract(inputs, image, img={"image": image["image"][0], "ivar": image["ivar"]})
    with pytest.raises(ValueError, match="'image' and 'ivar'"):
        extract(inputs, image, img={"pixels": image["image"]})
    with pytest.raises(TypeError):
        extract(inputs, image, img={"image": np.array([["a", "b"]]), "ivar": image["ivar"]})


def test_bad_argument_types(inputs, image):
    with pytest.raises(ValueError, match="specmin must be an integer"):
        extract(inputs, image, specmin=1.5)
    with pytest.raises(ValueError, match="wmin,wmax,dw"):
        extract(inputs, image, wavelength="6020,6180")
    with pytest.raises(ValueError, match="evenly spaced"):
        extract(inputs, image, wavelength=np.array([6020.0, 6021.0, 6023.0]))
    with pytest.raises(ValueError, match="psf must be"):
        extract(inputs, image, psf=42)
    with pytest.raises(ValueError, match="unknown loglevel"):
        extract(inputs, image, loglevel="LOUD")
    with pytest.raises(ValueError, match="the PSF table has no column COEFF"):
        extract(inputs, image, psf={"PSF": {"PARAM": []}, "XTRACE": {}, "YTRACE": {}})


def test_gpu_true_without_a_gpu_backend(inputs, image):
    if "cuda" in kspecter.backends():
        pytest.skip("this build has a GPU backend (test_cupy covers it)")
    with pytest.raises(ValueError, match="no GPU backend"):
        extract(inputs, image, gpu=True)


def test_every_keyword_of_gpu_specter_is_accepted(inputs, image):
    """gpu_specter 0.3.0's signature, keyword by keyword (those without meaning included), in
    its order, then kspecter's own (outlier rejection, off by default)."""
    import inspect

    parameters = inspect.signature(kspecter.extract_frame).parameters
    names = list(parameters)
    assert names == ["img", "psf", "bundlesize", "specmin", "nspec", "wavelength", "nwavestep",
                     "nsubbundles", "model", "regularize", "psferr", "comm", "gpu", "loglevel",
                     "timing", "wavepad", "pixpad_frac", "wavepad_frac", "batch_subbundle",
                     "ranks_per_bundle", "reject_sigma", "reject_iter"]
    assert parameters["reject_sigma"].default is None
    base = extract(inputs, image)
    same = extract(inputs, image, nwavestep=50, model=None, regularize=0, psferr=None,
                   comm=None, gpu=None, loglevel="WARNING", timing=None, wavepad=10,
                   pixpad_frac=0.8, wavepad_frac=0.2, batch_subbundle=False,
                   ranks_per_bundle=3)
    for key in ("specflux", "specivar", "Rdiags", "chi2pix"):
        assert np.array_equal(base[key], same[key]), key
    other = extract(inputs, image, psferr=0.2)
    assert not np.array_equal(other["chi2pix"], base["chi2pix"])
    assert np.array_equal(other["specflux"], base["specflux"])
