"""kspecter.extract_frame against the CLI (bit for bit) and against gpu_specter's contract
(keys, shapes, dtypes, argument forms)."""

import numpy as np
import pytest

import kspecter
from conftest import GRID, LAYOUT, fits_image, same_bits

GPU_SPECTER_KEYS = {"specflux", "specivar", "specmask", "wave", "Rdiags", "pixmask_fraction",
                    "chi2pix", "modelimage"}


@pytest.fixture(scope="module")
def image(inputs):
    return kspecter.read_image(inputs.image)


@pytest.fixture(scope="module")
def frame(inputs, image):
    """The whole small frame from Python, model included, as the CLI extracted it."""
    timing = {}
    result = kspecter.extract_frame(image, inputs.psf, specmin=0, nspec=20, wavelength=GRID,
                                    model=True, timing=timing, **LAYOUT)
    return result, timing


def assert_same_as_cli(result, cli_frame):
    """The frame file holds float32 casts of the double results; the mask as uint32."""
    assert same_bits(result["specflux"].astype(np.float32), cli_frame["flux"])
    assert same_bits(result["specivar"].astype(np.float32), cli_frame["ivar"])
    assert same_bits(result["Rdiags"].astype(np.float32), cli_frame["resolution"])
    assert same_bits(result["chi2pix"].astype(np.float32), cli_frame["chi2pix"])
    assert same_bits(result["specmask"].astype(np.uint32), cli_frame["mask"])
    assert same_bits(result["wave"], cli_frame["wave"])


def test_frame_equals_the_cli_frame_bit_for_bit(inputs, frame, cli_frame):
    result, _ = frame
    assert_same_as_cli(result, cli_frame)
    assert np.count_nonzero(result["specivar"]) > 0.9 * result["specivar"].size
    cli_model = fits_image(inputs.model, "MODEL")
    assert same_bits(result["modelimage"].astype(np.float32), cli_model)


def test_write_frame_writes_the_cli_frame(inputs, frame, cli_frame, tmp_path):
    result, _ = frame
    path = str(tmp_path / "py-frame.fits")
    kspecter.write_frame(path, result, specmin=0,
                         header={"IN_PSF": inputs.psf, "IN_IMG": inputs.image},
                         fibermap_from=inputs.image)
    back = kspecter.read_frame(path)
    for key in ("flux", "ivar", "resolution", "chi2pix", "mask", "wave"):
        assert same_bits(back[key], cli_frame[key]), key
    # Every HDU's data, read by astropy, as in the CLI's file (headers differ only in the
    # time stamps of the CHECKSUM comments).
    for hdu in ("FLUX", "IVAR", "MASK", "WAVELENGTH", "RESOLUTION", "CHI2PIX"):
        assert same_bits(fits_image(path, hdu), fits_image(inputs.frame, hdu)), hdu
    fibermap = fits_image(path, "FIBERMAP")
    assert fibermap.tobytes() == fits_image(inputs.frame, "FIBERMAP").tobytes()


def test_write_frame_with_the_preproc_writes_the_cli_file(inputs, frame, tmp_path):
    """preproc= and psf= give the CLI's header, FIBERMAP rows and SCORES: every HDU's data and
    every FLUX header card but the checksums, as `kspecter extract` wrote them."""
    fits = pytest.importorskip("astropy.io.fits")
    result, _ = frame
    path = str(tmp_path / "py-desi-frame.fits")
    kspecter.write_frame(path, result, preproc=inputs.image, psf=inputs.psf, wavelength=GRID)
    with fits.open(path) as ours, fits.open(inputs.frame) as cli:
        assert [h.name for h in ours] == [h.name for h in cli]
        assert "SCORES" in cli and "FIBERMAP" in cli
        for h in cli:
            if h.data is not None:
                assert ours[h.name].data.tobytes() == h.data.tobytes(), h.name
        mine, theirs = ([(c.keyword, c.value) for c in f["FLUX"].header.cards
                         if c.keyword not in ("CHECKSUM", "DATASUM")] for f in (ours, cli))
        assert mine == theirs
        assert ours["FLUX"].header["WAVEMAX"] == float(GRID.split(",")[1])
    # The grid read back from frame['wave'] when not given: the same WAVEMIN/MAX/STEP.
    again = str(tmp_path / "py-desi-frame-2.fits")
    kspecter.write_frame(again, result, preproc=inputs.image, psf=inputs.psf)
    for key in ("WAVEMIN", "WAVEMAX", "WAVESTEP"):
        assert fits.getheader(again, "FLUX")[key] == fits.getheader(inputs.frame, "FLUX")[key]


def test_write_frame_takes_the_preproc_header_as_a_dict(inputs, frame, tmp_path):
    fits = pytest.importorskip("astropy.io.fits")
    result, _ = frame
    path = str(tmp_path / "py-header-frame.fits")
    header = fits.getheader(inputs.image, "IMAGE")
    kspecter.write_frame(path, result, preproc=header, fibermap_from=inputs.image,
                         psf=inputs.psf, header={"IN_IMG": inputs.image, "EXPID": 7})
    got, cli = fits.getheader(path, "FLUX"), fits.getheader(inputs.frame, "FLUX")
    for key in ("CAMERA", "FLAVOR", "NIGHT", "EXPTIME", "MJD-OBS", "NSPEC", "WAVESTEP",
                "IN_PSF", "IN_IMG", "FIBERMIN", "BUNIT"):
        assert got[key] == cli[key], key
        assert type(got[key]) is type(cli[key]), key
    assert got["EXPID"] == 7 and isinstance(got["EXPID"], int)
    assert fits.getdata(path, "FIBERMAP").tobytes() == fits.getdata(inputs.frame,
                                                                     "FIBERMAP").tobytes()


def test_write_model_writes_the_cli_model(inputs, frame, tmp_path):
    result, _ = frame
    path = str(tmp_path / "py-model.fits")
    kspecter.write_model(path, result)
    assert same_bits(fits_image(path, "MODEL"), fits_image(inputs.model, "MODEL"))


def test_keys_shapes_and_dtypes_are_gpu_specter_s(inputs, frame):
    result, _ = frame
    psf = kspecter.read_psf(inputs.psf)
    wmin, wmax, dw = map(float, GRID.split(","))
    nwave = len(np.arange(wmin, wmax + 0.5 * dw, dw))  # gpu_specter's grid
    nspec, ndiag = 20, psf.meta["HSIZEY"]
    assert set(result) == GPU_SPECTER_KEYS
    assert result["wave"].shape == (nwave,)
    for key in ("specflux", "specivar", "pixmask_fraction", "chi2pix"):
        assert result[key].shape == (nspec, nwave), key
        assert result[key].dtype == np.float64, key
    assert result["Rdiags"].shape == (nspec, 2 * ndiag + 1, nwave)
    assert result["Rdiags"].dtype == np.float64
    assert result["wave"].dtype == np.float64
    # gpu_specter: (specivar == 0).astype(int)
    assert result["specmask"].dtype == np.array([True]).astype(int).dtype
    assert result["specmask"].shape == (nspec, nwave)
    # gpu_specter's 1 where ivar == 0 is desispec's SOMEBADPIX bit, set there by kspecter too.
    assert np.all(result["specmask"][result["specivar"] == 0] & 1)
    assert result["modelimage"].shape == (psf.npix_y, psf.npix_x)
    assert result["modelimage"].dtype == np.float64
    # numpy's own grid, value for value (desispec writes it and compares grids with ==)
    assert np.array_equal(result["wave"], np.arange(wmin, wmax + 0.5 * dw, dw))


def test_no_model_gives_none(inputs, image):
    result = kspecter.extract_frame(image, inputs.psf, 10, 0, 10, GRID, nsubbundles=2)
    assert result["modelimage"] is None


def test_timing_holds_gpu_specter_stamps_and_kspecter_stages(frame):
    _, timing = frame
    stamps = ["init-mpi-comm", "init-mpi-bcast", "host-to-device", "extracted-bundles",
              "staged-bundles", "merged-bundles", "assembled-frame"]
    values = [timing[k] for k in stamps]
    assert values == sorted(values)  # time stamps, in order
    for stage in ("spots", "assembly", "factorisation", "decorrelation", "quality"):
        assert timing["kspecter::extract::" + stage] >= 0
    assert sum(v for k, v in timing.items() if k.startswith("kspecter::")) > 0
    # Row-major float64 numpy arrays are read where they are: no upload stage, no copy (on
    # a GPU backend, host arrays are always uploaded).
    assert ("kspecter::extract::upload" in timing) == ("cuda" in kspecter.backends())


def test_inputs_in_any_form_give_the_same_frame(inputs, image):
    """float32 and float64 images, any strides, the PSF as a file, a kspecter.Psf or
    gpu_specter's dict, the grid as a string, tuple, list or array: the same numbers."""
    args = dict(specmin=10, nspec=10, **LAYOUT)
    ref = kspecter.extract_frame(image, inputs.psf, wavelength=GRID, **args)
    wmin, wmax, dw = map(float, GRID.split(","))
    psf = kspecter.read_psf(inputs.psf)
    variants = {
        "float32": ({"image": image["image"].astype(np.float32),
                     "ivar": image["ivar"].astype(np.float32)}, psf, (wmin, wmax, dw)),
        "fortran": ({"image": np.asfortranarray(image["image"]),
                     "ivar": np.asfortranarray(image["ivar"])}, psf, [wmin, wmax, dw]),
        "negative-strides": ({"image": np.ascontiguousarray(image["image"][::-1, ::-1])[::-1, ::-1],
                              "ivar": image["ivar"]},
                     inputs.psf, np.arange(wmin, wmax + dw / 2, dw)),
        "big-endian": ({"image": image["image"].astype(">f8"), "ivar": image["ivar"]},
                       psf, GRID),
    }
    # The image holds float32 values (read from an f4 file): float32 loses nothing.
    assert np.array_equal(image["image"].astype(np.float32), image["image"])
    for name, (img, p, grid) in variants.items():
        timing = {}
        got = kspecter.extract_frame(img, p, wavelength=grid, timing=timing, **args)
        for key in GPU_SPECTER_KEYS - {"modelimage"}:
            assert same_bits(got[key], ref[key]), (name, key)
        # The library converts what is not row-major float64 once (an upload stage); a
        # big-endian array is converted by numpy as it is handed over. A GPU backend uploads
        # every host array.
        uploaded = name != "big-endian" or "cuda" in kspecter.backends()
        assert ("kspecter::extract::upload" in timing) == uploaded, name


def test_psf_as_gpu_specter_dict(inputs, image):
    """The dict gpu_specter.io.read_psf returns (astropy Tables), built here as it builds it."""
    table = pytest.importorskip("astropy.table")
    fits = pytest.importorskip("astropy.io.fits")
    psfdata = {"PSF": table.Table.read(inputs.psf, "PSF")}
    if "PSFERR" not in psfdata["PSF"].meta:
        psfdata["PSF"].meta["PSFERR"] = 0.01
    with fits.open(inputs.psf) as fx:
        for extname in ("XTRACE", "YTRACE"):
            t = table.Table()
            t[extname[0]] = fx[extname].data
            for key in ("WAVEMIN", "WAVEMAX"):
                t.meta[key] = fx[extname].header[key]
            psfdata[extname] = t
    args = dict(specmin=0, nspec=10, wavelength=GRID, **LAYOUT)
    from_dict = kspecter.extract_frame(image, psfdata, **args)
    from_file = kspecter.extract_frame(image, inputs.psf, **args)
    for key in GPU_SPECTER_KEYS - {"modelimage"}:
        assert same_bits(from_dict[key], from_file[key]), key


def test_wavelength_none_is_the_psf_range_at_0_8(inputs, image):
    result = kspecter.extract_frame(image, inputs.psf, 10, 0, 10, nsubbundles=2)
    meta = kspecter.read_psf(inputs.psf).meta
    expected = np.arange(meta["WAVEMIN"], meta["WAVEMAX"] + 0.4, 0.8)
    assert np.allclose(result["wave"], expected, rtol=0, atol=1e-9)
    assert result["specflux"].shape == (10, len(expected))


def test_read_image_is_gpu_specter_s_read_img(inputs, image):
    pixels = fits_image(inputs.image, "IMAGE").astype(np.float64)
    ivar = fits_image(inputs.image, "IVAR").astype(np.float64)
    mask = fits_image(inputs.image, "MASK")
    ivar[mask != 0] = 0.0
    assert image["image"].dtype == np.float64 and image["ivar"].dtype == np.float64
    assert np.array_equal(image["image"], pixels)
    assert np.array_equal(image["ivar"], ivar)
    assert np.array_equal(image["mask"], mask)


def test_the_gil_is_released_while_extracting(inputs, image):
    """Another Python thread keeps running while this thread extracts a frame."""
    import threading
    import time

    done = threading.Event()
    gaps = []

    def tick():
        last = time.perf_counter()
        while not done.is_set():
            now = time.perf_counter()
            gaps.append(now - last)
            last = now

    ticker = threading.Thread(target=tick)
    start = time.perf_counter()
    ticker.start()
    try:
        kspecter.extract_frame(image, inputs.psf, 10, 0, 20, GRID, nsubbundles=2)
    finally:
        done.set()
        ticker.join()
    total = time.perf_counter() - start
    # With the GIL held the ticker would stop for the whole extraction.
    assert len(gaps) > 100
    assert max(gaps) < 0.5 * total, (max(gaps), total)


def test_extractions_stay_on_kokkos_thread(inputs, image):
    """Kokkos' host backend belongs to the thread that started it: elsewhere a clear error."""
    import threading

    errors = []

    def other():
        try:
            kspecter.extract_frame(image, inputs.psf, 10, 0, 10, GRID, nsubbundles=2)
        except kspecter.Error as e:
            errors.append(str(e))

    kspecter.initialize()  # no-op when this thread already started it
    t = threading.Thread(target=other)
    t.start()
    t.join()
    assert errors and "thread that started it" in errors[0]
