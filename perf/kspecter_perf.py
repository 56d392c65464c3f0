"""What the Python perf scripts share: this build's CLI and package, a PSF to work on, and
extract_frame's layout for a number of spectra."""

import os
import subprocess
import sys


def cli():
    """The kspecter executable ($KSPECTER_CLI, else this checkout's build/)."""
    here = os.path.dirname(os.path.abspath(__file__))
    return os.environ.get("KSPECTER_CLI", os.path.join(here, "..", "build", "src", "cli",
                                                        "kspecter"))


def run(*args):
    """kspecter ARGS, quiet; raises when it fails."""
    subprocess.run([cli(), *args, "--log-level", "quiet"], check=True)


def import_kspecter():
    """The kspecter package built beside the CLI."""
    sys.path.insert(0, os.path.join(os.path.dirname(cli()), "..", "..", "python"))
    import kspecter

    return kspecter


def psf_file(psf, folder):
    """`psf`, or for 'synthetic' the built-in PSF written into `folder` by make-psf."""
    if psf != "synthetic":
        return psf
    path = os.path.join(folder, "psf.fits")
    run("make-psf", "-o", path)
    return path


def simulated_frame(kspecter, psf, nspec, wavelength, folder, *extra):
    """A frame of spectra 0..nspec on `psf`'s CCD (seed 4; `extra`: more simulate options),
    made by `kspecter simulate` in `folder`, read back: kspecter.read_image's dict."""
    path = os.path.join(folder, "image.fits")
    run("simulate", "-p", psf, "-o", path, "-w", wavelength, "-n", str(nspec), "--seed", "4",
        *extra)
    return kspecter.read_image(path)


def layout(nspec, wavelength, gpu):
    """extract_frame's arguments for spectra 0..nspec: DESI's bundles of 25 in 5 sub-bundles
    where nspec allows, else one bundle."""
    nb = 25 if nspec % 25 == 0 else nspec
    return dict(bundlesize=nb, specmin=0, nspec=nspec, wavelength=wavelength,
                nsubbundles=5 if nb % 5 == 0 else 1, gpu=True if gpu else None)
