"""kspecter.write_frame: extract_frame's dict as a desispec frame file, as the CLI writes it."""

import os

import numpy as np

from . import _kspecter
from ._extract import _grid

# Records a FITS writer makes itself, and commentary cards: never copied from a preproc header.
_NOT_COPIED = {"", "SIMPLE", "XTENSION", "BITPIX", "NAXIS", "EXTEND", "PCOUNT", "GCOUNT",
               "EXTNAME", "BSCALE", "BZERO", "CHECKSUM", "DATASUM", "COMMENT", "HISTORY", "END"}


def write_frame(filename, frame, specmin=0, header=None, fibermap_from=None, preproc=None,
                psf=None, wavelength=None, scores=None):
    """Writes extract_frame's dict as a desispec frame (FITS, or HDF5 for .h5).

    The arrays as the CLI writes them: float32 FLUX, IVAR, RESOLUTION, CHI2PIX; MASK;
    WAVELENGTH; SPECMIN. Written under a temporary name and renamed.

    Args:
        filename: the frame to write.
        frame: extract_frame's result.
        specmin: the first spectrum extracted (extract_frame's specmin).
        header: a dict of header cards to set last (bool, int, float or str values).
        fibermap_from: a file whose FIBERMAP rows of these spectra the frame gets (-f).
        preproc: the preproc the frame was extracted from, as a file name or its IMAGE
            header (a dict or an astropy Header). The frame then gets what the CLI gives it:
            desispec's FLUX header (the preproc's header, NSPEC, WAVEMIN/WAVEMAX/WAVESTEP,
            IN_IMG, IN_PSF, ORIG_PSF, FIBERMIN, DEPNAM/DEPVER, BUNIT), the FIBERMAP rows of
            its spectra (from the file, unless fibermap_from names another) and SCORES.
        psf: the PSF file (IN_PSF, ORIG_PSF, and FIBERMIN when there is no FIBERMAP).
        wavelength: the grid asked for, 'wmin,wmax,dw' or a tuple, for WAVEMIN, WAVEMAX and
            WAVESTEP; None: read back from frame['wave'].
        scores: whether to add SCORES (desispec's compute_and_append_frame_scores); None:
            when preproc or psf is given.
    """
    desi = preproc is not None or psf is not None
    if scores is None:
        scores = desi
    grid = _asked_grid(wavelength, frame["wave"]) if desi or scores else None
    preproc_file = preproc_header = None
    if isinstance(preproc, (str, bytes, os.PathLike)):
        preproc_file = preproc
    elif preproc is not None:
        preproc_header = {str(k): v for k, v in dict(preproc).items()
                          if str(k).upper() not in _NOT_COPIED
                          and not str(k).upper().startswith("NAXIS")}
    _kspecter._write_frame(filename, frame, specmin, header, fibermap_from, preproc_file,
                           preproc_header, psf, grid, bool(scores))


def _asked_grid(wavelength, wave):
    """(wmin, wmax, dw) of the grid asked for: `wavelength`, else recovered from the
    numpy.arange grid `wave`, with wmax rounded as it was most likely written."""
    if wavelength is not None:
        return _grid(wavelength)
    wmin, wmax, dw = _grid(np.asarray(wave, dtype=np.float64))
    for digits in (6, 8, 10):
        rounded = round(wmax, digits)
        if np.array_equal(np.arange(wmin, rounded + 0.5 * dw, dw), wave):
            return wmin, rounded, dw
    return wmin, wmax, dw
