"""kspecter: spectroperfectionism extraction of fiber spectrographs on Kokkos, from Python.

``extract_frame`` takes gpu_specter's arguments and returns gpu_specter's dict, so that
``from kspecter import extract_frame`` can replace ``gpu_specter.core.extract_frame``.
``read_psf``, ``read_image``, ``write_frame``, ``write_model`` and ``read_frame`` work on
kspecter's files; ``python -m kspecter`` runs the ``kspecter`` command line.

Kokkos is started once per process, by ``initialize()`` or by the first extraction, and ended
at exit.

kspecter's log lines (progress, stage times) and warnings go to Python's ``logging``, to the
logger ``kspecter`` (``set_logger`` picks another, such as desiutil's ``get_logger()``), with
the C++ file, line and function as the record's, so that desiutil's format
``LEVEL:file:line:function: message`` shows where they come from. Where no handler is
configured anywhere, they are written to stderr as ``kspecter: LEVEL: message``.
"""

import atexit
import logging
import sys

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
    write_model,
)
from ._kspecter import _set_log_function
from ._extract import Extractor, extract_frame
from ._frames import write_frame

_logger = None


def set_logger(logger=None):
    """Sends kspecter's log lines and warnings to ``logger`` (a ``logging.Logger``, e.g.
    ``desiutil.log.get_logger()``); None: the logger named ``kspecter``."""
    global _logger
    if logger is not None and not isinstance(logger, logging.Logger):
        raise TypeError("set_logger: expected a logging.Logger or None, got "
                        + type(logger).__name__)
    _logger = logger


def _log_record(levelno, message, filename, lineno, function):
    logger = _logger if _logger is not None else logging.getLogger("kspecter")
    if not logger.hasHandlers():
        # No logging set up at all: kspecter's lines stay visible, as the CLI writes them.
        sys.stderr.write(f"kspecter: {logging.getLevelName(levelno)}: {message}\n")
        return
    if logger.isEnabledFor(levelno):
        logger.handle(logger.makeRecord(logger.name, levelno, filename, lineno, message, None,
                                        None, func=function))


# atexit runs the last registered first: Kokkos ends, then the lines go back to stderr.
atexit.register(_set_log_function, None)
_set_log_function(_log_record)
atexit.register(finalize)

__all__ = [
    "Error",
    "Extractor",
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
    "set_logger",
    "write_frame",
    "write_model",
]
