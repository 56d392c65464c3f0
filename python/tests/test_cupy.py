"""cupy arrays in a CUDA build: used on the device where they are (no host round trip), the
same frame as from numpy. Runs where cupy, a GPU and kspecter's CUDA backend are present."""

import numpy as np
import pytest

import kspecter
from conftest import GRID, LAYOUT, same_bits

cp = pytest.importorskip("cupy")
if "cuda" not in kspecter.backends():
    pytest.skip("this kspecter build has no CUDA backend", allow_module_level=True)

KEYS = ("wave", "specflux", "specivar", "specmask", "Rdiags", "pixmask_fraction", "chi2pix",
        "modelimage")


def run(img, psf, **extra):
    timing = {}
    result = kspecter.extract_frame(img, psf, specmin=0, nspec=20, wavelength=GRID, model=True,
                                    gpu=True, timing=timing, **LAYOUT, **extra)
    return result, timing


def test_cupy_arrays_are_used_in_place_and_give_the_numpy_frame(inputs):
    host = kspecter.read_image(inputs.image)
    device = {"image": cp.asarray(host["image"]), "ivar": cp.asarray(host["ivar"])}
    from_numpy, t_numpy = run(host, inputs.psf)
    from_cupy, t_cupy = run(device, inputs.psf)
    for key in KEYS:
        assert same_bits(from_cupy[key], from_numpy[key]), key
        assert isinstance(from_cupy[key], np.ndarray), key  # results on the host, as gpu_specter
    assert "kspecter::extract::upload" in t_numpy  # numpy to the GPU: one copy
    assert "kspecter::extract::upload" not in t_cupy  # float64 cupy: none


def test_float32_and_strided_cupy_arrays_are_converted_on_the_device(inputs):
    host = kspecter.read_image(inputs.image)
    ref, _ = run(host, inputs.psf)
    variants = {
        "float32": {"image": cp.asarray(host["image"], dtype=cp.float32),
                    "ivar": cp.asarray(host["ivar"], dtype=cp.float32)},
        "fortran": {"image": cp.asfortranarray(cp.asarray(host["image"])),
                    "ivar": cp.asarray(host["ivar"])},
    }
    for name, img in variants.items():
        got, timing = run(img, inputs.psf)
        for key in KEYS:
            assert same_bits(got[key], ref[key]), (name, key)
        assert "kspecter::extract::upload" in timing, name


def test_cupy_on_a_stream_is_waited_for(inputs):
    host = kspecter.read_image(inputs.image)
    ref, _ = run(host, inputs.psf)
    stream = cp.cuda.Stream(non_blocking=True)
    with stream:  # the arrays are written on `stream`, which __cuda_array_interface__ names
        image = cp.asarray(host["image"]) * 1.0
        ivar = cp.asarray(host["ivar"]) * 1.0
        got, _ = run({"image": image, "ivar": ivar}, inputs.psf)
    for key in KEYS:
        assert same_bits(got[key], ref[key]), key


def test_the_extractor_keeps_a_cupy_image_s_frame_on_the_gpu(inputs):
    host = kspecter.read_image(inputs.image)
    ivar = cp.asarray(host["ivar"], dtype=cp.float64)
    sigma = cp.where(ivar > 0, 1 / cp.sqrt(cp.where(ivar > 0, ivar, 1)), 0)
    args = dict(specmin=0, nspec=20, wavelength=GRID, model=True, gpu=True, **LAYOUT)
    on_gpu, reference = kspecter.Extractor(inputs.psf, **args), kspecter.Extractor(inputs.psf, **args)
    rng = cp.random.default_rng(5)
    for call in range(3):  # noise realisations, made on the device; the same weights
        img = {"image": cp.asarray(host["image"], dtype=cp.float64)
               + sigma * rng.standard_normal(ivar.shape), "ivar": ivar}
        got = on_gpu.extract(img)  # cupy in: cupy out
        want = reference.extract(img, results="host")
        for key in KEYS:
            assert isinstance(got[key], cp.ndarray), key
            assert same_bits(got[key], want[key]), (call, key)
        assert on_gpu.model() is got["modelimage"]
        assert on_gpu.last_reuse["factor_reused"] == (call > 0)
    # numpy in, results='device': the frame made and kept on the GPU all the same.
    got = on_gpu.extract(host, results="device")
    want = reference.extract(host)
    for key in KEYS:
        assert isinstance(got[key], cp.ndarray) and isinstance(want[key], np.ndarray), key
        assert same_bits(got[key], want[key]), key
