"""``python -m kspecter ARGS``: the ``kspecter`` command line with ARGS (the same program,
with its exit status, signals and MPI behaviour)."""

import os
import shutil
import sys


def _executable():
    here = os.path.dirname(os.path.abspath(__file__))
    for candidate in (os.environ.get("KSPECTER_CLI"), os.path.join(here, "bin", "kspecter"),
                      shutil.which("kspecter")):
        if candidate and os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    sys.exit("kspecter: the kspecter executable was not found beside the package, "
             "on PATH or in $KSPECTER_CLI")


if __name__ == "__main__":
    exe = _executable()
    sys.stdout.flush()
    sys.stderr.flush()
    os.execv(exe, [exe] + sys.argv[1:])
