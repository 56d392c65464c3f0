"""gpu_specter's PSF dict (``gpu_specter.io.read_psf``: astropy Tables 'PSF', 'XTRACE' and
'YTRACE' with their ``meta``) as a kspecter.Psf."""

import numpy as np

from ._kspecter import ParameterError, Psf


def _meta(table, key, default=None):
    meta = getattr(table, "meta", {})
    if key in meta:
        return meta[key]
    if default is None:
        raise ParameterError(f"psf dict: the PSF table's meta has no {key}")
    return default


def _column(table, table_name, column):
    try:
        return table[column]
    except (KeyError, IndexError, ValueError):
        raise ParameterError(f"psf dict: the {table_name} table has no column {column}") from None


def _name(value):
    if isinstance(value, bytes):
        value = value.decode("ascii")
    return str(value).strip()


def psf_from_dict(psf):
    """Builds a kspecter.Psf from gpu_specter's read_psf dict (checked like a PSF file)."""
    for key in ("PSF", "XTRACE", "YTRACE"):
        if key not in psf:
            raise ParameterError(f"psf dict: no '{key}' (gpu_specter.io.read_psf makes one)")
    table, xt, yt = psf["PSF"], psf["XTRACE"], psf["YTRACE"]
    names = [_name(n) for n in _column(table, "PSF", "PARAM")]
    coeff = np.asarray(_column(table, "PSF", "COEFF"), dtype=np.float64)
    return Psf._from_arrays(
        np.asarray(_column(xt, "XTRACE", "X"), dtype=np.float64),
        (float(_meta(xt, "WAVEMIN")), float(_meta(xt, "WAVEMAX"))),
        np.asarray(_column(yt, "YTRACE", "Y"), dtype=np.float64),
        (float(_meta(yt, "WAVEMIN")), float(_meta(yt, "WAVEMAX"))),
        names,
        coeff,
        (float(_meta(table, "WAVEMIN")), float(_meta(table, "WAVEMAX"))),
        int(_meta(table, "GHDEGX")),
        int(_meta(table, "GHDEGY")),
        int(_meta(table, "HSIZEX")),
        int(_meta(table, "HSIZEY")),
        int(_meta(table, "NPIX_X")),
        int(_meta(table, "NPIX_Y")),
        int(_meta(table, "FIBERMIN", 0)),
        float(_meta(table, "PSFERR", 0.01)),
    )
