"""``python -m kspecter.desispec ARGS``: desispec's ``desi_extract_spectra`` with kspecter.

ARGS are desi_extract_spectra's (``desispec.scripts.extract.parse``). desispec's own code runs:
it reads the preproc, sets up its MPI layout and gpu_specter's I/O coordinator, and writes the
frame. Only ``gpu_specter.core.extract_frame`` is replaced, by ``kspecter.extract_frame``, the
same call with the same result dict. desispec (with desiutil, desitarget, desimodel, specter
and gpu_specter, which it imports) must be importable: ``perf/desi_env.sh`` lays them out.

``install()`` serves a script that drives desispec itself, e.g. with desi_proc's
``ParallelIOCoordinator``: after it, every call desispec makes to gpu_specter's extract_frame
is kspecter's.
"""

import inspect
import sys

from ._extract import extract_frame

_WHAT = ("desispec's desi_extract_spectra (desispec.scripts.extract) and gpu_specter, which "
         "it imports")


class NotImportable(ImportError):
    """desispec or a package it needs is missing; the message says which."""


def gpu_specter_extract_frame(*args, **kwargs):
    """kspecter.extract_frame with gpu_specter's choice of GPU around it.

    gpu_specter's extract_frame makes rank r of `comm` use GPU r // (ranks per GPU) itself
    (``cupy.cuda.Device(...).use()``), and desispec's GPU layout relies on it: its worker
    ranks never choose one. kspecter.extract_frame runs on the caller's device, so this
    wrapper makes that choice first, as gpu_specter does, then calls it."""
    bound = inspect.signature(extract_frame).bind(*args, **kwargs)
    comm, gpu = bound.arguments.get("comm"), bound.arguments.get("gpu")
    if gpu and comm is not None and comm.size > 1:
        import cupy

        ngpu = min(comm.size, cupy.cuda.runtime.getDeviceCount())
        per_device, rest = divmod(comm.size, max(ngpu, 1))
        if ngpu > 0 and rest == 0:
            cupy.cuda.Device(comm.rank // per_device).use()
    return extract_frame(*args, **kwargs)


def install():
    """Puts gpu_specter_extract_frame (kspecter's extract_frame) in
    gpu_specter.core.extract_frame's place; returns desispec.scripts.extract. Raises
    NotImportable, naming what is missing."""
    try:
        import gpu_specter.core
        import desispec.scripts.extract as desi_extract
    except ImportError as e:
        missing = getattr(e, "name", None) or str(e)
        raise NotImportable(
            f"kspecter.desispec needs {_WHAT}; '{missing}' is not importable ({e}). "
            f"perf/desi_env.sh in kspecter's source lays them out; then "
            f"`source <its folder>/env.sh`") from e
    gpu_specter.core.extract_frame = gpu_specter_extract_frame
    return desi_extract


def main(argv=None):
    """Runs desi_extract_spectra with ARGS (default: sys.argv[1:]); returns its status."""
    try:
        desi_extract = install()
    except NotImportable as e:
        print(f"kspecter.desispec: {e}", file=sys.stderr)
        return 2
    args = desi_extract.parse(sys.argv[1:] if argv is None else list(argv))
    if args.use_specter:
        print("kspecter.desispec: --use-specter asks for specter's extraction, which does not "
              "go through extract_frame; run desi_extract_spectra itself for that",
              file=sys.stderr)
        return 2
    status = desi_extract.main(args)
    return 0 if status is None else int(status)


if __name__ == "__main__":
    sys.exit(main())
