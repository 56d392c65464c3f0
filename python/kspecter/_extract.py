"""kspecter.extract_frame: gpu_specter.core.extract_frame's call (gpu_specter 0.3.0) on kspecter."""

import logging
import os
import time

import numpy as np

from . import _kspecter
from ._kspecter import ParameterError, Psf, read_psf
from ._psf_dict import psf_from_dict

# The keys of gpu_specter's result dict, in its order.
RESULT_KEYS = ("specflux", "specivar", "specmask", "wave", "Rdiags", "pixmask_fraction",
               "chi2pix", "modelimage")


def extract_frame(img, psf, bundlesize, specmin, nspec, wavelength=None, nwavestep=50,
                  nsubbundles=1, model=None, regularize=0, psferr=None, comm=None, gpu=None,
                  loglevel=None, timing=None, wavepad=10, pixpad_frac=0.8, wavepad_frac=0.2,
                  batch_subbundle=True, ranks_per_bundle=None, reject_sigma=None, reject_iter=3):
    """Extracts 1-D spectra from a 2-D image by spectroperfectionism.

    The call and the result of gpu_specter 0.3.0's ``gpu_specter.core.extract_frame``.

    Args:
        img: dict with 'image' and 'ivar', 2-D [ny][nx] (other keys are ignored): numpy arrays
            (float64 or float32 used in place, anything else converted once to float64) or, in
            a CUDA build, device arrays with ``__cuda_array_interface__`` (cupy; float32 or
            float64), used on the GPU where they are. Pixels with ivar <= 0 or a non-finite
            value are ignored. With ``comm``, ranks other than 0 may pass None.
        psf: a PSF file name, a ``kspecter.Psf`` (``kspecter.read_psf``), or the dict of
            gpu_specter's ``gpu_specter.io.read_psf``. With ``comm``, ranks other than 0 may
            pass None.
        bundlesize: spectra per bundle (25 for DESI). kspecter's bundles start at PSF fiber 0:
            with specmin and nspec multiples of bundlesize (as desispec requires) the patches
            are gpu_specter's.
        specmin: first spectrum (PSF row) to extract.
        nspec: number of spectra; None: every fiber of the PSF from specmin on.

    Options:
        wavelength: 'wmin,wmax,dw', a (wmin, wmax, dw) tuple or list, or an evenly spaced
            numpy array; None: the PSF table's WAVEMIN..WAVEMAX in steps of 0.8 A. The grid is
            ``numpy.arange(wmin, wmax + dw/2, dw)``.
        nwavestep: wavelength bins per patch.
        nsubbundles: a bundle is cut into nsubbundles groups of bundlesize / nsubbundles
            spectra.
        model: true to compute the model image ('modelimage'; None otherwise).
        regularize: regularization of the solution (gpu_specter's meaning).
        psferr: fractional PSF model error for chi2pix; None: the PSF's PSFERR.
        comm: an mpi4py communicator (sub-communicators too), or None for one process. The
            bundles are split over its ranks and gathered on its rank 0, which alone gets the
            result; the others get None. All ranks must call.
        gpu: True: the GPU backend (an error in a build without one); False: the host backend
            (OpenMP, else Serial); None: kspecter's default (``kspecter.initialize(backend=)``
            or $KSPECTER_BACKEND, else the build's default space).
        loglevel: None or a level above INFO: warnings and errors only; 'INFO' /
            logging.INFO: also kspecter's progress lines (rank 0); 'DEBUG': also its stage
            times. The lines are records of the logger 'kspecter' (the logging module).
        timing: a dict to fill: gpu_specter's time stamps ('init-mpi-comm', 'init-mpi-bcast',
            'host-to-device', 'extracted-bundles', 'staged-bundles', 'merged-bundles',
            'assembled-frame'; ``time.time()`` values) and kspecter's stage times in seconds
            under their profiling names ('kspecter::extract::spots', ...; this rank's share).
        wavepad: wavelength bins padded on both sides of a patch.
        pixpad_frac: fraction of the padding's pixel rows kept.
        wavepad_frac: extra padding, as a fraction of wavepad.
        batch_subbundle: accepted, no effect: kspecter always solves patches in device
            batches, on the CPU as on the GPU.
        ranks_per_bundle: accepted, no effect: kspecter deals whole bundles to the ranks of
            ``comm`` in contiguous runs.
        reject_sigma: kspecter's own, off by default (None): pixels whose residual from the
            model exceeds this many sigma (and their neighbours above half as many) get weight
            0 and the frame is extracted again; bins that lost a pixel get specmask COSMIC,
            and the result gets 'rejected' (pixels per spectrum) and 'reject_passes'.
        reject_iter: extractions again after rejection, at most (each finds the outliers left
            by the last).

    Returns:
        On rank 0 (or without comm) a dict with gpu_specter's keys: 'wave' [nwave],
        'specflux', 'specivar' [nspec][nwave] (electron/A and its inverse variance),
        'specmask' [nspec][nwave] int64 (desispec specmask bits: nonzero where ivar == 0, as
        gpu_specter's, plus kspecter's ALLBADPIX and BAD2DFIT), 'Rdiags'
        [nspec][2 ndiag + 1][nwave], 'pixmask_fraction', 'chi2pix' [nspec][nwave], and
        'modelimage' [ny][nx] or None; every float array is float64. Elsewhere None.

    Raises:
        kspecter.ParameterError (a ValueError) for bad arguments, kspecter.InputError (an
        OSError) for an unusable PSF file, kspecter.Error (a RuntimeError) otherwise, with the
        messages the CLI prints. Under MPI every rank raises when any rank fails.
    """
    del batch_subbundle, ranks_per_bundle  # no meaning in kspecter (see above)
    t_start = time.time()
    img, psf = _share_inputs(img, psf, comm)
    t_bcast = time.time()
    if img is None or psf is None:
        raise ParameterError("extract_frame: img and psf are required")
    psf = _as_psf(psf)
    grid = _grid(wavelength)
    opt = _options(bundlesize, specmin, nspec, grid, nwavestep, nsubbundles, model, regularize,
                   psferr, wavepad, pixpad_frac, wavepad_frac, reject_sigma, reject_iter,
                   "extract_frame")
    image, ivar = _image_pair(img, "extract_frame")

    # No grid: the job takes the PSF's, as the CLI's does (one rule, in the library).
    result, stages = _kspecter._extract(image, ivar, psf, opt, grid is None, _comm_address(comm),
                                        gpu, _log_level(loglevel))
    t_end = time.time()
    if isinstance(timing, dict):
        timing.update({"init-mpi-comm": t_start, "init-mpi-bcast": t_bcast,
                       "host-to-device": t_bcast, "extracted-bundles": t_end,
                       "staged-bundles": t_end, "merged-bundles": t_end,
                       "assembled-frame": t_end})
        timing.update(stages)
    if result is None:
        return None
    return _gpu_specter_dict(result)


def _gpu_specter_dict(result):
    """gpu_specter's keys in its order, then kspecter's rejection counts when it ran."""
    out = {key: result[key] for key in RESULT_KEYS}
    for key in ("rejected", "reject_passes"):
        if key in result:
            out[key] = result[key]
    return out


def _options(bundlesize, specmin, nspec, grid, nwavestep, nsubbundles, model, regularize, psferr,
             wavepad, pixpad_frac, wavepad_frac, reject_sigma, reject_iter, caller):
    """The library's options from gpu_specter's arguments (and kspecter's rejection)."""
    opt = _kspecter._Options()
    opt.specmin = _integer(specmin, "specmin", caller)
    if nspec is not None and _integer(nspec, "nspec", caller) < 1:
        raise ParameterError(f"{caller}: nspec must be 1 or more (None: every fiber), "
                             f"not {nspec}")
    opt.nspec = -1 if nspec is None else _integer(nspec, "nspec", caller)
    opt.bundlesize = _integer(bundlesize, "bundlesize", caller)
    opt.nsubbundles = _integer(nsubbundles, "nsubbundles", caller)
    opt.nwavestep = _integer(nwavestep, "nwavestep", caller)
    opt.wavepad = _integer(wavepad, "wavepad", caller)
    opt.wavepad_frac = float(wavepad_frac)
    opt.pixpad_frac = float(pixpad_frac)
    opt.regularize = float(regularize)
    if psferr is not None and not float(psferr) >= 0:
        raise ParameterError(f"{caller}: psferr must be 0 or more (None: the PSF's "
                             f"PSFERR), not {psferr}")
    opt.psferr = -1.0 if psferr is None else float(psferr)
    if grid is not None:
        opt.wmin, opt.wmax, opt.dw = grid
    opt.model = bool(model)
    if reject_sigma is not None:
        if not float(reject_sigma) > 0 or not np.isfinite(float(reject_sigma)):
            raise ParameterError(f"{caller}: reject_sigma must be a number > 0 (None: no "
                                 f"rejection), not {reject_sigma}")
        opt.reject_sigma = float(reject_sigma)
    opt.reject_iter = _integer(reject_iter, "reject_iter", caller)
    return opt


def _image_pair(img, caller):
    try:
        return img["image"], img["ivar"]
    except (KeyError, TypeError):
        raise ParameterError(f"{caller}: img must be a dict with 'image' and 'ivar'") from None


class Extractor:
    """Repeated extractions with one PSF, grid and set of options, kept warm.

    The constructor takes ``extract_frame``'s arguments less the image (and less ``comm``:
    an Extractor runs in one process), with the same names and defaults. It keeps the PSF's
    tables and the device buffers from call to call, so that an iterative loop (a correction
    of the image, noise realisations, outlier rejection) pays for neither again.

    ``extract(img)`` takes ``extract_frame``'s image dict and returns its dict, bit for bit
    what ``extract_frame`` returns for the same image. Given cupy arrays on a GPU backend, the
    result's arrays are cupy arrays too (``results=``): the frame never leaves the GPU.
    ``model()`` returns the model image of the last extraction, [ny][nx] float64 electrons
    (the next extraction makes a new one). ``close()`` frees its device memory; so does
    Python's collector, and kspecter's finalize at exit.
    """

    def __init__(self, psf, bundlesize, specmin, nspec, wavelength=None, nwavestep=50,
                 nsubbundles=1, model=None, regularize=0, psferr=None, gpu=None, wavepad=10,
                 pixpad_frac=0.8, wavepad_frac=0.2, reject_sigma=None, reject_iter=3):
        grid = _grid(wavelength)
        opt = _options(bundlesize, specmin, nspec, grid, nwavestep, nsubbundles, model,
                       regularize, psferr, wavepad, pixpad_frac, wavepad_frac, reject_sigma,
                       reject_iter, "Extractor")
        self._model = bool(model)
        self._reuse = None
        self._device_model = None  # the last model, when it stayed in the backend's memory
        self._device_wave = None  # the grid in the backend's memory, copied for each result
        self._ex = _kspecter._Extractor(_as_psf(psf), opt, grid is None, gpu)

    def extract(self, img, timing=None, results=None):
        """The frame of ``img`` (a dict with 'image' and 'ivar', as ``extract_frame``'s),
        as ``extract_frame``'s dict; ``timing`` (a dict) gets the stage times in seconds.

        ``results``: where the arrays come back. 'host': numpy arrays. 'device': arrays in
        the backend's memory, made by the extraction there (cupy arrays on a GPU, numpy on a
        host backend); the same bits. None (the default): 'device' when ``img['image']`` is a
        device array (cupy) and the extractor runs on a GPU, else 'host'.
        """
        image, ivar = _image_pair(img, "Extractor.extract")
        if self._results_on_backend(results, image):
            out = self._extract_into(image, ivar, timing)
        else:
            result, stages, self._reuse = self._ex.extract(image, ivar,
                                                           isinstance(timing, dict))
            self._device_model = None
            if isinstance(timing, dict):
                timing.update(stages)
            out = _gpu_specter_dict(result)
            out["modelimage"] = self._ex.model()
        if not self._model:
            out["modelimage"] = None
        return out

    def _results_on_backend(self, results, image):
        on_gpu = not self._ex.on_host
        if results is None:
            return on_gpu and not isinstance(image, np.ndarray) and hasattr(
                image, "__cuda_array_interface__")
        if results not in ("host", "device"):
            raise ParameterError(f"Extractor.extract: results must be 'host', 'device' or "
                                 f"None, not {results!r}")
        return results == "device"

    def _extract_into(self, image, ivar, timing):
        """The frame written by the extraction into arrays of the backend's memory."""
        if not self._ex.on_host:
            import cupy as xp
        else:
            xp = np
        ns, nw, ndiag, ny, nx = self._ex.sizes
        arrays = {"specflux": xp.empty((ns, nw)), "specivar": xp.empty((ns, nw)),
                  "Rdiags": xp.empty((ns, 2 * ndiag + 1, nw)),
                  "pixmask_fraction": xp.empty((ns, nw)), "chi2pix": xp.empty((ns, nw)),
                  "specmask": xp.empty((ns, nw), dtype=xp.uint32),
                  "modelimage": xp.empty((ny, nx))}
        meta, stages, self._reuse = self._ex.extract_into(image, ivar, arrays,
                                                          isinstance(timing, dict))
        if isinstance(timing, dict):
            timing.update(stages)
        # gpu_specter's specmask is int64, kspecter's bits uint32.
        arrays["specmask"] = arrays["specmask"].astype(xp.int64)
        # The grid is the same every call: one upload (from pageable memory, which waits for
        # the copy), then a copy on the device for each result.
        if self._device_wave is None:
            self._device_wave = xp.asarray(meta["wave"])
        arrays["wave"] = self._device_wave.copy()
        out = {key: arrays[key] for key in RESULT_KEYS}
        for key in ("rejected", "reject_passes"):
            if key in meta:
                out[key] = meta[key]
        self._device_model = out["modelimage"]
        return out

    def model(self):
        """The model image of the last extraction (None before the first): a read-only numpy
        array, or the result's own array when the last call's results stayed in the
        backend's memory."""
        if self._device_model is not None:
            return self._device_model
        return self._ex.model()

    @property
    def last_reuse(self):
        """What the last extraction reused (None before the first): a dict with
        'factor_reused' (the solve of the call before served), 'patches' and
        'patches_reworked' (assembled and factorised again: their weights had changed)."""
        return dict(self._reuse) if self._reuse is not None else None

    @property
    def backend(self):
        """The backend it extracts on ('openmp', 'cuda', ...)."""
        return self._ex.backend

    def close(self):
        """Frees the device memory it keeps (the next extraction allocates it again)."""
        self._ex.release()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def _integer(value, name, caller="extract_frame"):
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise ParameterError(f"{caller}: {name} must be an integer, got {value!r}")
    return int(value)


def _as_psf(psf):
    if isinstance(psf, Psf):
        return psf
    if isinstance(psf, (str, os.PathLike)):
        return read_psf(psf)
    if hasattr(psf, "keys") and "PSF" in psf:
        return psf_from_dict(psf)
    raise ParameterError("extract_frame: psf must be a file name, a kspecter.Psf or "
                         "gpu_specter's read_psf dict, got " + type(psf).__name__)


def _grid(wavelength):
    """(wmin, wmax, dw) as gpu_specter derives them from its `wavelength` argument; None for
    the PSF's own grid (its WAVEMIN..WAVEMAX at 0.8 A), which the library's job sets."""
    if isinstance(wavelength, np.ndarray):
        wave = np.asarray(wavelength, dtype=np.float64)
        if wave.ndim != 1 or wave.size < 2:
            raise ParameterError("extract_frame: a wavelength array must be 1-D with >= 2 bins")
        wmin, wmax, step = float(wave[0]), float(wave[-1]), float(np.gradient(wave)[0])
        # The step of numpy.arange that made the array (0.8, not the 0.7999999999997272 its
        # differences give), so that kspecter's grid is the array bit for bit; else the
        # difference itself, as gpu_specter takes it.
        for dw in [round(step, digits) for digits in (12, 10, 8, 6)] + [step]:
            grid = np.arange(wmin, wmax + 0.5 * dw, dw)
            if grid.shape == wave.shape and np.array_equal(grid, wave):
                return wmin, wmax, dw
        if grid.shape != wave.shape or not np.allclose(grid, wave, rtol=0, atol=1e-6 * step):
            raise ParameterError("extract_frame: the wavelength array must be evenly spaced, "
                                 "numpy.arange(wmin, wmax + dw/2, dw)")
        return wmin, wmax, step
    if isinstance(wavelength, str):
        parts = wavelength.split(",")
        try:
            values = [float(p) for p in parts]
        except ValueError:
            values = []
        if len(values) != 3:
            raise ParameterError(f"extract_frame: wavelength '{wavelength}' is not 'wmin,wmax,dw'")
        return tuple(values)
    if isinstance(wavelength, (tuple, list)):
        if len(wavelength) != 3:
            raise ParameterError("extract_frame: wavelength must be (wmin, wmax, dw)")
        return tuple(float(v) for v in wavelength)
    if wavelength is None:
        return None
    raise ParameterError("extract_frame: wavelength must be 'wmin,wmax,dw', a tuple, an array "
                         "or None, got " + type(wavelength).__name__)


def _log_level(loglevel):
    if loglevel is None:
        return "quiet"
    if isinstance(loglevel, str):
        name = loglevel.lower()
        if name in ("quiet", "info", "debug"):
            return name
        level = logging.getLevelName(loglevel.upper())
        if not isinstance(level, int):
            raise ParameterError(f"extract_frame: unknown loglevel '{loglevel}'")
    else:
        level = int(loglevel)
    return "debug" if level <= logging.DEBUG else "info" if level <= logging.INFO else "quiet"


def _comm_address(comm):
    if comm is None:
        return None
    from mpi4py import MPI  # only when a communicator is given

    if not isinstance(comm, MPI.Intracomm):
        raise ParameterError("extract_frame: comm must be an mpi4py intracommunicator")
    return MPI._addressof(comm)


def _host_copy(array):
    """A C-contiguous numpy copy of a numpy or device array (to broadcast it)."""
    if not isinstance(array, np.ndarray) and hasattr(array, "__cuda_array_interface__"):
        array = array.get()  # cupy
    return np.ascontiguousarray(array)


def _share_inputs(img, psf, comm):
    """gpu_specter's broadcast: where a rank of `comm` lacks the image or PSF, rank 0's go to
    every rank (the PSF as a kspecter.Psf or file name, the pixels as numpy arrays)."""
    if comm is None or comm.size == 1:
        return img, psf
    from mpi4py import MPI

    missing = comm.allreduce(int(img is None or psf is None), op=MPI.MAX)
    if not missing:
        return img, psf
    rank = comm.rank
    if rank == 0:
        share_psf = psf if isinstance(psf, (str, os.PathLike)) else _as_psf(psf)
        arrays = [_host_copy(img["image"]), _host_copy(img["ivar"])]
        meta = (share_psf, [(a.shape, a.dtype.str) for a in arrays])
    else:
        meta = None
    share_psf, layout = comm.bcast(meta, root=0)
    if rank != 0:
        arrays = [np.empty(shape, dtype=dtype) for shape, dtype in layout]
    for a in arrays:
        comm.Bcast(a, root=0)
    if rank == 0:
        return img, psf  # rank 0 keeps its own (device arrays stay on the device)
    return {"image": arrays[0], "ivar": arrays[1]}, share_psf
