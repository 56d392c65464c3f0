#!/usr/bin/env python3
"""kspecter as desi_extract_spectra, checked with desispec's own code.

1. `kspecter simulate` makes a frame's pixels from a real DESI PSF (default: the r0 PSF of
   ../shared/data);
2. desispec's io.image.write_image writes them as the pipeline's preproc-r0-EXPID.fits.gz
   (IMAGE primary, IVAR, MASK tile-compressed int16, READNOISE, FIBERMAP, gzip, checksums),
   with the header keywords of a science exposure (CAMERA, FLAVOR, NIGHT, EXPID, EXPTIME,
   MJD-OBS, TARGTRA, TARGTDEC);
3. `kspecter extract` takes it as desi_proc calls desi_extract_spectra, into frame-r0-EXPID.fits
   and, as desi_proc names it, frame-r0-EXPID.fits.gz;
4. desispec's io.frame.read_frame reads the frame into its Frame; the script prints
   Frame.vet() (0: the frame passes), len(frame.fibers) against nspec, what frame[0:2] gives,
   and the header, FIBERMAP, MASK and SCORES desispec sees.

desispec is not installable here (desiutil and desitarget are missing): point --desispec at a
checkout's py/ folder (e.g. `git archive` of desihub/desispec into /work/ext/desispec-check).
This script stands in for the few desiutil / desitarget names desispec imports when it loads
io.frame and io.image (a plain logger, desiutil.depend's header keywords, empty placeholders
for what those imports never use here), and loads desispec.io's modules without its
__init__, which would import the whole pipeline. Everything else is desispec's own code.

usage: desispec_read_frame.py --kspecter BUILD/src/cli/kspecter [--desispec DESISPEC]
                         [--psf PSF] [--workdir DIR] [--nspec N] [--extra "ARGS"]
DESISPEC is a checkout (or its py/ folder); default: $KSPECTER_DESISPEC. Without it, or
without the Python packages desispec needs, the script says why and exits with status 77,
which CTest reports as "not run" (never as a pass). Without --psf it makes a small synthetic
PSF (20 fibers, 200 x 400 pixels) so that the check takes seconds; --psf takes a real one.
Exit status 0: desispec accepts the frame; 1: it does not.
Needs Debian's python3-numpy, python3-scipy, python3-astropy, python3-fitsio, python3-yaml.
"""
import argparse
import importlib.util
import logging
import os
import subprocess
import sys
import types

import numpy as np

def install_standins(desispec_py):
    """The desiutil / desitarget names desispec's io.frame and io.image import."""
    logging.basicConfig(level=logging.INFO, format="%(levelname)s:desispec: %(message)s")

    def module(name, **attrs):
        m = types.ModuleType(name)
        m.__dict__.update(attrs)
        sys.modules[name] = m
        return m

    def setdep(header, name, version):  # desiutil.depend's keyword convention
        for i in range(100):
            nam, ver = "DEPNAM%02d" % i, "DEPVER%02d" % i
            if nam not in header:
                header[nam], header[ver] = name, version
                return
            if header[nam] == name:
                header[ver] = version
                return
        raise IndexError("DEPNAM00..99 all taken")

    def add_dependencies(header, module_names=None, long_python=False):
        setdep(header, "python", ".".join(map(str, sys.version_info[:3])))
        for name in ("numpy", "scipy", "astropy", "fitsio", "desispec"):
            if name in sys.modules and hasattr(sys.modules[name], "__version__"):
                setdep(header, name, sys.modules[name].__version__)

    class NoBitMask:  # desispec.maskbits falls back to placeholders on TypeError
        def __init__(self, *args, **kwargs):
            raise TypeError("desiutil.bitmask stand-in")

    module("desiutil").__path__ = []
    module("desiutil.log", get_logger=lambda *a, **k: logging.getLogger("desispec"),
           DEBUG=logging.DEBUG, INFO=logging.INFO, WARNING=logging.WARNING,
           ERROR=logging.ERROR, CRITICAL=logging.CRITICAL)
    module("desiutil.depend", setdep=setdep, add_dependencies=add_dependencies,
           mergedep=lambda *a, **k: None)
    module("desiutil.names", radec_to_desiname=None)
    module("desiutil.healpix")
    module("desiutil.bitmask", BitMask=NoBitMask)
    module("desiutil.iers", freeze_iers=lambda *a, **k: None)
    module("desitarget").__path__ = []
    module("desitarget.targetmask", desi_mask=None)
    module("desitarget.skybricks", Skybricks=None)

    sys.path.insert(0, desispec_py)
    import desispec  # noqa: F401  (its own __init__: the version only)
    io = types.ModuleType("desispec.io")  # the package without its __init__
    io.__path__ = [os.path.join(desispec_py, "desispec", "io")]
    sys.modules["desispec.io"] = io
    desispec.io = io


def not_run(why):
    print("NOT RUN: " + why, flush=True)
    sys.exit(77)


def find_desispec(path):
    """desispec's py/ folder from a checkout or the folder itself; not run without one."""
    if not path:
        not_run("no desispec checkout: set KSPECTER_DESISPEC (or --desispec) to one, e.g. "
                "`git archive` of desihub/desispec")
    for py in (os.path.join(path, "py"), path):
        if os.path.isfile(os.path.join(py, "desispec", "io", "frame.py")):
            return os.path.abspath(py)
    not_run("%s holds no desispec (no py/desispec/io/frame.py)" % path)


def run(cmd):
    print("$ " + " ".join(cmd), flush=True)
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    print(r.stdout, end="", flush=True)
    if r.returncode != 0:
        sys.exit("command failed with status %d" % r.returncode)


def make_desi_preproc(simulated, preproc, nspec):
    """Rewrites kspecter's simulated preproc with desispec's write_image, as the pipeline's."""
    from astropy.io import fits
    from astropy.table import Table
    from desispec.image import Image
    from desispec.io.image import write_image

    with fits.open(simulated) as fx:
        pix = fx["IMAGE"].data.astype(np.float64)
        ivar = fx["IVAR"].data.astype(np.float64)
        mask = fx["MASK"].data.astype(np.int16)
        fm = Table(fx["FIBERMAP"].data)
    meta = fits.Header()
    for key, value in (("CAMERA", "r0"), ("FLAVOR", "science"), ("NIGHT", 20201214),
                       ("EXPID", 67784), ("EXPTIME", 900.0), ("MJD-OBS", 59198.4452),
                       ("TARGTRA", 150.1), ("TARGTDEC", 2.2), ("TILEID", 80605),
                       ("PROGRAM", "dark")):
        meta[key] = value
    fibermap = Table()
    fibermap["FIBER"] = np.asarray(fm["FIBER"], dtype=np.int32)
    fibermap["TARGETID"] = np.asarray(fm["TARGETID"], dtype=np.int64)
    fibermap["OBJTYPE"] = np.asarray([s.strip() for s in fm["OBJTYPE"]])
    fibermap["TARGET_RA"] = 150.1 + 0.01 * np.arange(len(fm))
    fibermap["TARGET_DEC"] = 2.2 + 0.01 * np.arange(len(fm))
    fibermap["FIBERSTATUS"] = np.zeros(len(fm), dtype=np.int32)
    image = Image(pix, ivar, mask=mask, readnoise=np.full(pix.shape, 3.0),
                  camera="r0", meta=meta)
    image.fibermap = fibermap
    write_image(preproc, image)
    print("desispec's write_image wrote %s (%d fibers in its FIBERMAP)" % (preproc, len(fibermap)))


def check_frame(frame_path, nspec):
    from astropy.io import fits
    from desispec.frame import Frame
    from desispec.io.frame import read_frame

    with fits.open(frame_path, checksum=True) as fx:  # astropy warns on a bad checksum
        print("HDUs:", ", ".join("%s(%s)" % (h.name, type(h).__name__) for h in fx))
        bad = [h.name for h in fx if not (h.verify_checksum() == 1 and h.verify_datasum() == 1)]
        print("CHECKSUM and DATASUM verified in every HDU:", not bad, bad or "")
        print("MASK dtype:", fx["MASK"].data.dtype)
    frame = read_frame(frame_path)
    print("read_frame gave a", type(frame).__name__)
    print("Frame.vet() =", frame.vet())
    print("len(frame.fibers) = %d, nspec = %d, frame.nspec = %d"
          % (len(frame.fibers), nspec, frame.nspec))
    print("frame.fibers[:5] =", list(frame.fibers[:5]))
    sub = frame[0:2]
    print("frame[0:2]: %s of %d spectra, flux %s, fibers %s, R %d matrices"
          % (type(sub).__name__, sub.nspec, sub.flux.shape, list(sub.fibers), len(sub.R)))
    m = frame.meta
    for key in ("FLAVOR", "CAMERA", "NSPEC", "WAVEMIN", "WAVEMAX", "WAVESTEP", "BUNIT",
                "IN_PSF", "IN_IMG", "ORIG_PSF", "FIBERMIN", "HELIOCOR", "DEPNAM00", "DEPVER00"):
        print("  %-8s = %r" % (key, m.get(key)))
    print("FIBERMAP rows:", len(frame.fibermap), "columns:", frame.fibermap.colnames)
    print("mask dtype %s, resolution %s, chi2pix %s" % (frame.mask.dtype,
          frame.resolution_data.shape, frame.chi2pix.shape))
    if frame.scores is not None:
        print("SCORES:", ", ".join("%s (%s)" % (k, frame.scores_comments[k])
                                   for k in frame.scores.dtype.names))
    ok = frame.vet() == 0 and len(frame.fibers) == nspec and isinstance(sub, Frame) \
        and sub.nspec == 2
    print("desispec accepts the frame:", ok)
    return ok


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--kspecter", required=True)
    ap.add_argument("--desispec", default=os.environ.get("KSPECTER_DESISPEC", ""),
                    help="a desispec checkout or its py/ folder (default: $KSPECTER_DESISPEC)")
    ap.add_argument("--psf", default="", help="a GaussHermite PSF (default: a small synthetic one)")
    ap.add_argument("--workdir", default="desispec-check")
    ap.add_argument("--nspec", type=int, default=20)
    ap.add_argument("--extra", default="", help="more arguments for kspecter extract")
    args = ap.parse_args()
    desispec_py = find_desispec(args.desispec)
    missing = [m for m in ("numpy", "scipy", "astropy", "fitsio", "yaml")
               if importlib.util.find_spec(m) is None]
    if missing:
        not_run("desispec needs the Python packages %s (Debian: python3-%s), missing from %s"
                % (", ".join(missing), " python3-".join(missing), sys.executable))
    install_standins(desispec_py)
    os.makedirs(args.workdir, exist_ok=True)
    psf = args.psf
    if not psf:
        psf = os.path.join(args.workdir, "psf-r0.fits")
        run([args.kspecter, "make-psf", "-o", psf, "--nfiber", str(args.nspec),
             "--ccd", "200,400", "-w", "6000,6200", "--log-level", "quiet"])
    sim = os.path.join(args.workdir, "simulated.fits")
    preproc = os.path.join(args.workdir, "preproc-r0-00067784.fits.gz")
    frame = os.path.join(args.workdir, "frame-r0-00067784.fits")
    frame_gz = frame + ".gz"
    run([args.kspecter, "simulate", "-p", psf, "-o", sim, "-n", str(args.nspec),
         "--seed", "1", "--log-level", "quiet"] + ([] if args.psf else ["-w", "6020,6180,0.8"]))
    make_desi_preproc(sim, preproc, args.nspec)
    # As desi_proc calls desi_extract_spectra for a science exposure.
    ok = True
    for out in (frame, frame_gz):
        run([args.kspecter, "extract", "-i", preproc, "-p", psf, "-o", out,
             "-n", str(args.nspec), "--barycentric-correction", "--no-truth"] + args.extra.split())
        print("==", out)
        ok = check_frame(out, args.nspec) and ok
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
