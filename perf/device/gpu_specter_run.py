#!/usr/bin/env python3
"""gpu_specter.core.extract_frame on a machine without astropy and fitsio (the GPU device).

The device image has numpy, scipy, cupy, numba(-cuda) and mpi4py, but neither astropy nor
fitsio, which gpu_specter.io imports (and gpu_specter.extract.gpu imports gpu_specter.io for
native_endian). This driver therefore
  * puts stand-ins for `fitsio` and `astropy.table` in sys.modules before importing
    gpu_specter (only when those imports fail, or with --stand-ins): extract_frame never reads
    a file; it touches the PSF tables only by column (`t['COEFF']`, `t['X']`, iterating
    `t['PARAM']`) and by `.meta[...]`, so Table is a dict with a .meta dict;
  * builds gpu_specter's PSF dict from the .npz that perf/gpu_specter_inputs.py wrote with
    gpu_specter.io.read_psf on the CPU machine (byte-string columns decoded to str, as
    astropy's Column yields them);
  * reads the preproc's IMAGE and IVAR with a numpy-only FITS reader (plain images; .fits or
    .fits.gz). MASK is tile-compressed (RICE_1, as desispec writes it), which numpy alone
    cannot decode, so it is not read: gpu_specter's read_img only uses MASK to zero IVAR
    where MASK != 0, and the preprocs here (desispec's and `kspecter simulate`'s, defects
    included) already hold IVAR = 0 on every masked pixel; the CPU check in
    perf/gpu_specter_inputs.py's head shows identical flux against read_img with --defects;
  * runs extract_frame with desispec's defaults for DESI (desi_extract_spectra --gpu-specter,
    gpu_specter's spex: bundlesize 25, nsubbundles 5, nwavestep 50, regularize 0, psferr from
    the PSF, no model, wavepad_frac 0.2, pixpad_frac 0.8), first on one bundle (warm-up:
    numba/cupy compilation, CUDA context), then on the whole frame, timed after a cupy device
    synchronize; writes specflux/specivar/specmask/wave to an .npz and prints
    `gpu_specter full frame wall X s`;
  * with --kspecter-frame FRAME.fits, compares against kspecter's frame (FLUX and IVAR, plain
    float32 images): max |pull| over the bins where both ivars are positive.

How the lead runs it: stage gpu_specter's py/ tree and the PSF .npz in /work/main/.gpu-specter
(commands in perf/gpu_specter_inputs.py's head; /.gpu-*/ is already in .git/info/exclude),
carry ".gpu-specter" (~2.3 MB: py/ tree ~1.8 MB, psf-r0.npz 0.54 MB), and run it from
perf/device/before_after.sh (KSPECTER_GPU_SPECTER=1); perf/device/desispec_gpu_layout.py
imports it.
"""

import argparse
import gzip
import json
import os
import sys
import time
import types

import numpy as np

BLOCK = 2880


# ---------------------------------------------------------------- stand-ins for astropy/fitsio
class Table(dict):
    """The part of astropy.table.Table that gpu_specter's extraction uses: columns by name
    and a .meta dict."""

    def __init__(self, columns=None, meta=None):
        super().__init__(columns or {})
        self.meta = dict(meta or {})

    @property
    def colnames(self):
        return list(self.keys())

    def __len__(self):
        return len(next(iter(self.values()))) if self else 0

    @classmethod
    def read(cls, *args, **kwargs):
        raise NotImplementedError("astropy.table stand-in: Table.read is not available here "
                                  "(build the PSF dict from perf/gpu_specter_inputs.py's .npz)")


def _no_fitsio(*args, **kwargs):
    raise NotImplementedError("fitsio stand-in: no FITS I/O here (gpu_specter_run.py reads "
                              "the preproc with its numpy reader)")


def numpy2_aliases():
    """Names that numpy 2 removed and gpu_specter's dependencies still use (the device has
    numpy 2.x): the same functions under their old names, only where missing."""
    for old, new in (("row_stack", "vstack"), ("trapz", "trapezoid"), ("in1d", "isin")):
        if not hasattr(np, old) and hasattr(np, new):
            setattr(np, old, getattr(np, new))


def install_stand_ins(force):
    """Puts fitsio and astropy.table stand-ins in sys.modules where the real ones are missing
    (or always, with force). Returns the names replaced."""
    replaced = []
    if force or not _importable("fitsio"):
        fitsio = types.ModuleType("fitsio")
        fitsio.FITS = _no_fitsio
        fitsio.read = _no_fitsio
        fitsio.read_header = _no_fitsio
        sys.modules["fitsio"] = fitsio
        replaced.append("fitsio")
    if force or not _importable("astropy.table"):
        astropy = types.ModuleType("astropy")
        astropy.__path__ = []
        table = types.ModuleType("astropy.table")
        table.Table = Table
        astropy.table = table
        sys.modules["astropy"] = astropy
        sys.modules["astropy.table"] = table
        replaced.append("astropy.table")
    return replaced


def _importable(name):
    try:
        __import__(name)
        return True
    except ImportError:
        return False


def load_psf(path):
    """gpu_specter's PSF dict ({'PSF','XTRACE','YTRACE'} -> Table) from the inputs .npz."""
    with np.load(path, allow_pickle=False) as z:
        layout = json.loads(str(z["layout"]))
        psf = {}
        for name, spec in layout.items():
            cols = {}
            for col in spec["columns"]:
                a = z[f"{name}/{col}"]
                if a.dtype.kind == "S":  # astropy's Column yields str for FITS strings
                    a = np.char.decode(a, "ascii")
                cols[col] = a
            psf[name] = Table(cols, spec["meta"])
    return psf


# ---------------------------------------------------------------- numpy-only FITS reader
def _card_value(text):
    text = text.strip()
    if text.startswith("'"):
        end = 1
        out = []
        while end < len(text):
            if text[end] == "'":
                if end + 1 < len(text) and text[end + 1] == "'":
                    out.append("'")
                    end += 2
                    continue
                break
            out.append(text[end])
            end += 1
        return "".join(out).rstrip()
    text = text.split("/", 1)[0].strip()
    if text in ("T", "F"):
        return text == "T"
    for conv in (int, float):
        try:
            return conv(text)
        except ValueError:
            pass
    return text


def _read_header(buf, pos, path):
    header = {}
    while True:
        if pos + BLOCK > len(buf):
            raise ValueError(f"{path}: truncated FITS header at byte {pos}")
        block = bytes(buf[pos:pos + BLOCK]).decode("ascii", "replace")
        pos += BLOCK
        for i in range(0, BLOCK, 80):
            card = block[i:i + 80]
            key = card[:8].strip()
            if key == "END":
                return header, pos
            if card[8:10] == "= " and key not in header:
                header[key] = _card_value(card[10:])


def _data_bytes(h):
    naxis = h.get("NAXIS", 0)
    if naxis == 0:
        return 0
    n = 1
    for i in range(1, naxis + 1):
        n *= h[f"NAXIS{i}"]
    return abs(h["BITPIX"]) // 8 * h.get("GCOUNT", 1) * (h.get("PCOUNT", 0) + n)


_DTYPES = {8: ">u1", 16: ">i2", 32: ">i4", 64: ">i8", -32: ">f4", -64: ">f8"}


def read_fits_images(path, names):
    """The plain (not tile-compressed) image HDUs `names` (EXTNAME; the primary is also
    'PRIMARY') of a FITS file, as native-endian arrays (BSCALE/BZERO applied) with headers."""
    if path.endswith(".gz"):
        with gzip.open(path, "rb") as f:
            buf = np.frombuffer(f.read(), dtype=np.uint8)
    else:
        buf = np.memmap(path, dtype=np.uint8, mode="r")
    out, pos, index = {}, 0, 0
    while pos < len(buf) and len(out) < len(names):
        h, pos = _read_header(buf, pos, path)
        name = h.get("EXTNAME", "PRIMARY" if index == 0 else f"HDU{index}")
        nbytes = _data_bytes(h)
        if name in names:
            if h.get("ZIMAGE") or h.get("XTENSION", "IMAGE") != "IMAGE" and index > 0:
                raise ValueError(f"{path}: HDU {name} is not a plain image (tile-compressed or "
                                 "a table); this reader reads plain images only")
            shape = tuple(h[f"NAXIS{i}"] for i in range(h["NAXIS"], 0, -1))
            a = np.frombuffer(buf[pos:pos + nbytes], dtype=_DTYPES[h["BITPIX"]]).reshape(shape)
            a = a.astype(a.dtype.newbyteorder("="))
            scale, zero = h.get("BSCALE", 1), h.get("BZERO", 0)
            if scale != 1 or zero != 0:
                a = a * scale + zero
            out[name] = (a, h)
        pos += (nbytes + BLOCK - 1) // BLOCK * BLOCK
        index += 1
    missing = [n for n in names if n not in out]
    if missing:
        raise ValueError(f"{path}: no HDU named {', '.join(missing)}")
    return out


def read_preproc(path):
    """IMAGE and IVAR as f8 (as gpu_specter.io.read_img gives them); see the head for MASK."""
    hdus = read_fits_images(path, ["IMAGE", "IVAR"])
    return {"image": hdus["IMAGE"][0].astype("f8"), "ivar": hdus["IVAR"][0].astype("f8")}


# ---------------------------------------------------------------- run
def gpu_usable():
    try:
        import cupy
        return cupy.cuda.runtime.getDeviceCount() > 0
    except Exception:
        return False


def synchronize(gpu):
    if gpu:
        import cupy
        cupy.cuda.Device().synchronize()


def max_pull(f1, i1, f2, i2):
    ok = (i1 > 0) & (i2 > 0)
    pull = (f1[ok] - f2[ok]) / np.sqrt(1.0 / i1[ok] + 1.0 / i2[ok])
    return (np.abs(pull).max() if pull.size else np.nan), ok.sum(), ok.size


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--gpu-specter", default=os.environ.get("GPU_SPECTER_PY"),
                   help="gpu_specter's py/ folder (default: $GPU_SPECTER_PY, else sys.path)")
    p.add_argument("--psf-npz", required=True, help="from perf/gpu_specter_inputs.py")
    p.add_argument("--image", required=True, help="preproc file (IMAGE, IVAR plain images)")
    p.add_argument("-o", "--output", default=os.path.join(os.environ.get("OUT", "."),
                                                          "gs-frame.npz"))
    p.add_argument("-w", "--wavelength", default="5760.0,7620.0,0.8")
    p.add_argument("-s", "--specmin", type=int, default=0)
    p.add_argument("-n", "--nspec", type=int, default=500)
    p.add_argument("--bundlesize", type=int, default=25)
    p.add_argument("--nsubbundles", type=int, default=5)
    p.add_argument("--nwavestep", type=int, default=50)
    p.add_argument("--gpu", choices=("auto", "yes", "no"), default="auto")
    p.add_argument("--warmup-nspec", type=int, default=None,
                   help="fibers of the warm-up run (default: one bundle; 0: none)")
    p.add_argument("--stand-ins", action="store_true",
                   help="use the fitsio/astropy.table stand-ins even where the real ones exist")
    p.add_argument("--kspecter-frame", help="a kspecter frame (FLUX, IVAR) to compare with")
    p.add_argument("--reference", help="an .npz (specflux, specivar) that must be identical")
    args = p.parse_args()

    numpy2_aliases()
    replaced = install_stand_ins(args.stand_ins)
    if args.gpu_specter:
        sys.path.insert(0, args.gpu_specter)
    import gpu_specter
    import gpu_specter.core
    print(f"gpu_specter {gpu_specter.__version__} from {os.path.dirname(gpu_specter.__file__)}; "
          f"stand-ins: {', '.join(replaced) or 'none'}")

    gpu = gpu_usable() if args.gpu == "auto" else args.gpu == "yes"
    t0 = time.perf_counter()
    psf = load_psf(args.psf_npz)
    img = read_preproc(args.image)
    t1 = time.perf_counter()
    print(f"read PSF npz + preproc {img['image'].shape} (numpy reader) {t1 - t0:.2f} s; "
          f"gpu={gpu}")

    def run(nspec):
        return gpu_specter.core.extract_frame(
            img, psf, args.bundlesize, args.specmin, nspec, args.wavelength, args.nwavestep,
            args.nsubbundles, model=None, regularize=0.0, psferr=None, comm=None, gpu=gpu,
            wavepad_frac=0.2, pixpad_frac=0.8)

    warm = args.bundlesize if args.warmup_nspec is None else args.warmup_nspec
    if warm > 0:
        t0 = time.perf_counter()
        run(min(warm, args.nspec))
        synchronize(gpu)
        print(f"gpu_specter warm-up ({min(warm, args.nspec)} fibers) wall "
              f"{time.perf_counter() - t0:.3f} s")
    synchronize(gpu)
    t0 = time.perf_counter()
    frame = run(args.nspec)
    synchronize(gpu)
    wall = time.perf_counter() - t0
    flux, ivar = np.asarray(frame["specflux"]), np.asarray(frame["specivar"])
    print(f"gpu_specter full frame wall {wall:.3f} s ({flux.shape[0]} fibers x "
          f"{flux.shape[1]} wavelengths, gpu={gpu})")
    out_dir = os.path.dirname(os.path.abspath(args.output))
    os.makedirs(out_dir, exist_ok=True)
    np.savez(args.output, specflux=flux, specivar=ivar, specmask=np.asarray(frame["specmask"]),
             wave=np.asarray(frame["wave"]))
    print(f"wrote {args.output}")

    status = 0
    if args.reference:
        with np.load(args.reference) as ref:
            same = (np.array_equal(ref["specflux"], flux) and np.array_equal(ref["specivar"], ivar))
            dflux = np.abs(ref["specflux"] - flux).max()
            divar = np.abs(ref["specivar"] - ivar).max()
        print(f"against {args.reference}: flux and ivar identical: {same} "
              f"(max |dflux| {dflux:.3g}, max |divar| {divar:.3g})")
        status = 0 if same else 1
    if args.kspecter_frame:
        hdus = read_fits_images(args.kspecter_frame, ["FLUX", "IVAR"])
        kf, ki = hdus["FLUX"][0].astype("f8"), hdus["IVAR"][0].astype("f8")
        if kf.shape != flux.shape:
            print(f"kspecter frame {kf.shape} vs gpu_specter {flux.shape}: shapes differ")
            return 1
        m, n, total = max_pull(kf, ki, flux, ivar)
        rel = np.abs(ki - ivar)[(ki > 0) & (ivar > 0)] / ivar[(ki > 0) & (ivar > 0)]
        print(f"kspecter vs gpu_specter: max |pull| {m:.4g} over {n} of {total} bins; "
              f"ivar rel diff median {np.median(rel):.3g} max {rel.max():.3g}")
    return status


if __name__ == "__main__":
    sys.exit(main())
