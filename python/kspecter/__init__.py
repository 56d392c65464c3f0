"""kspecter: spectroperfectionism extraction of fiber spectrographs on Kokkos, from Python.

``extract_frame`` takes gpu_specter's arguments and returns gpu_specter's dict, so that
``from kspecter import extract_frame`` can replace ``gpu_specter.core.extract_frame``.
``read_psf``, ``read_image``, ``write_frame``, ``write_model`` and ``read_frame`` work on
kspecter's files; ``python -m kspecter`` runs the ``kspecter`` command line.

Kokkos is started once per process, by ``initialize()`` or by the first extraction, and ended
at exit.
"""

import atexit

from ._kspecter import (
    Error,
    InputError,
    ParameterError,
    Psf,
    __version__,
    backends,
    default_backend,
    finalize,
    initialize,
    is_initialized,
    read_frame,
    read_image,
    read_psf,
    set_gzip,
    write_frame,
    write_model,
)
from ._extract import extract_frame

atexit.register(finalize)

__all__ = [
    "Error",
    "InputError",
    "ParameterError",
    "Psf",
    "__version__",
    "backends",
    "default_backend",
    "extract_frame",
    "finalize",
    "initialize",
    "is_initialized",
    "read_frame",
    "read_image",
    "read_psf",
    "set_gzip",
    "write_frame",
    "write_model",
]
