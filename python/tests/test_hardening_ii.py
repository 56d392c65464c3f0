"""Issue 36 (Hardening II) in the Python module: complex images, file names with NUL bytes
and negative counts are refused, naming the argument, instead of being half-used."""

import os

import numpy as np
import pytest

import kspecter
from conftest import GRID


@pytest.fixture(scope="module")
def image(inputs):
    return kspecter.read_image(inputs.image)


def extract(inputs, image, **changes):
    args = dict(img=image, psf=inputs.psf, bundlesize=10, specmin=0, nspec=10,
                wavelength=GRID, nsubbundles=2)
    args.update(changes)
    return kspecter.extract_frame(**args)


@pytest.mark.parametrize("which", ["image", "ivar"])
def test_complex_images_are_refused_naming_the_argument(inputs, image, which):
    img = dict(image)
    img[which] = image[which].astype(np.complex128) + 1j
    with pytest.raises(TypeError) as err:
        extract(inputs, img)
    assert f"img['{which}']" in str(err.value) and "complex" in str(err.value)


def test_non_numeric_images_are_refused(inputs, image):
    img = dict(image)
    img["image"] = image["image"].astype(object)
    with pytest.raises(TypeError):
        extract(inputs, img)


def test_file_names_with_nul_bytes_are_refused(inputs, image, tmp_path):
    # The C library would stop at the NUL and read (or write) another file.
    with pytest.raises(ValueError, match="null byte"):
        kspecter.read_psf(inputs.psf + "\0.bak")
    with pytest.raises(ValueError, match="null byte"):
        extract(inputs, image, psf=inputs.psf + "\0.bak")
    with pytest.raises(ValueError, match="null byte"):
        kspecter.read_image(inputs.image + "\0.bak")
    with pytest.raises(ValueError, match="null byte"):
        kspecter.read_frame(inputs.frame + "\0.bak")
    frame = extract(inputs, image)
    target = str(tmp_path / "frame.fits")
    with pytest.raises(ValueError, match="null byte"):
        kspecter.write_frame(target + "\0.bak", frame)
    assert not os.path.exists(target)


@pytest.mark.parametrize("changes, words", [
    (dict(nspec=-5), "nspec must be 1 or more"),
    (dict(psferr=-0.5), "psferr must be 0 or more"),
    (dict(psferr=-2.0), "psferr must be 0 or more"),
    (dict(nspec=-1), "nspec must be 1 or more"),
    (dict(nspec=0), "nspec must be 1 or more"),
    (dict(psferr=-1.0), "psferr must be 0 or more"),
])
def test_negative_counts_are_refused(inputs, image, changes, words):
    # The library's -1 ("every fiber", "the PSF's") is reached only through None.
    with pytest.raises(kspecter.ParameterError, match=words):
        extract(inputs, image, **changes)
