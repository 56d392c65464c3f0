"""Quality-assurance plots of an extracted frame: ``python -m kspecter.qa FRAME -o DIR``.

Writes PNG files into DIR (made if missing):

``spectra.png``
    a few spectra (``--fibers``, else four fibers spread over the frame's range of
    brightness), each over the whole grid and over a zoom window (``--zoom``), with the
    1-sigma error 1/sqrt(IVAR) as a band and a line, and the bins that are masked (MASK != 0
    or IVAR = 0) marked below; with ``--truth``, the truth convolved by the resolution too.
    Flux in electron/Angstrom, wavelength in Angstrom.
``chi2pix.png``
    CHI2PIX over fibers x wavelengths (a logarithmic colour scale centred on 1), and its
    median and maximum over the fibers.
``region.png`` (with ``--image`` and ``--model``)
    the preprocessed image and the model image (``kspecter extract -m``) on one asinh colour
    scale, and the residual (image - model) sqrt(ivar), with the preproc's IVAR, over a box
    of the CCD (``--region Y0:Y1,X0:X1``, rows and columns as Python slices; by default a
    300 x 300 box at the CCD's middle row, centred on the columns the model lights).
``pulls.png`` (with ``--truth``, a preproc written by ``kspecter simulate``)
    the histogram of the pulls (flux - R truth) sqrt(ivar) against a unit Gaussian, R being
    the frame's resolution matrix and truth its TRUTH_FLUX interpolated onto the frame's
    grid; the statistics are also printed.

Only numpy, astropy and matplotlib (>= 3.6; its Agg canvas, without pyplot, and Pillow,
which matplotlib requires, for 256-colour PNGs) are used, not the compiled module, so that
any frame in desispec's layout can be looked at. Command-line errors (a missing or
unreadable file, a bad region or fiber) exit with status 2 and one message.
"""

import argparse
import os
import sys
from dataclasses import dataclass

import matplotlib
import numpy as np
from astropy.io import fits
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.colors import FuncNorm, LogNorm
from matplotlib.figure import Figure
from PIL import Image

#: Rows and columns of the default CCD region.
REGION_SIZE = 300
#: Width of the default zoom window of the spectra, Angstrom.
ZOOM_WIDTH = 60.0
#: Pulls beyond this are counted but left out of the histogram.
PULL_RANGE = 6.0


class QaError(Exception):
    """An input that cannot be plotted (the message names the file and the problem)."""


@dataclass
class Frame:
    """The arrays of a frame file (float64, native byte order)."""

    path: str
    wave: np.ndarray  # [nwave], Angstrom
    flux: np.ndarray  # [nspec, nwave], electron/Angstrom
    ivar: np.ndarray  # [nspec, nwave]
    mask: np.ndarray  # [nspec, nwave], desispec's specmask bits
    resolution: np.ndarray  # [nspec, ndiag, nwave], desispec's diagonals
    chi2pix: np.ndarray  # [nspec, nwave]
    fibers: np.ndarray  # [nspec], fiber numbers
    specmin: int  # spectrum index of the first row
    title: str  # the file's name, camera and exposure


def _open(path):
    """An open FITS file (for ``with``); a QaError naming the file when it is not one."""
    try:
        return fits.open(path)
    except OSError as err:
        raise QaError(f"{path}: {err}") from None


def _hdu(hdul, name, path):
    """HDU ``name`` of an open FITS file, or a QaError naming the file."""
    if name not in hdul:
        raise QaError(f"{path}: no {name} HDU")
    return hdul[name]


def _data(hdul, name, path):
    """The data of HDU ``name`` as float64 in native byte order."""
    return np.asarray(_hdu(hdul, name, path).data, dtype=np.float64)


def read_frame(path):
    """Reads the HDUs of a frame that the plots need."""
    with _open(path) as hdul:
        header = _hdu(hdul, "FLUX", path).header
        flux = _data(hdul, "FLUX", path)
        nspec = flux.shape[0]
        specmin = int(header.get("SPECMIN", 0))
        fibers = specmin + np.arange(nspec)
        if "FIBERMAP" in hdul and "FIBER" in hdul["FIBERMAP"].columns.names:
            fibers = np.asarray(hdul["FIBERMAP"].data["FIBER"], dtype=np.int64)
        name = os.path.basename(path)
        about = ", ".join(f"{label}{header[key]}" for key, label in
                          (("CAMERA", ""), ("EXPID", "EXPID ")) if key in header)
        title = f"{name} ({about})" if about else name
        return Frame(path=path, wave=_data(hdul, "WAVELENGTH", path), flux=flux,
                     ivar=_data(hdul, "IVAR", path),
                     mask=np.asarray(_hdu(hdul, "MASK", path).data, dtype=np.uint32),
                     resolution=_data(hdul, "RESOLUTION", path),
                     chi2pix=_data(hdul, "CHI2PIX", path), fibers=fibers, specmin=specmin,
                     title=title)


def read_truth_on_grid(path, frame):
    """The truth spectra of a simulated preproc (TRUTH_FLUX, TRUTH_WAVE, key SPECMIN),
    interpolated linearly onto the frame's wavelengths: [nspec, nwave], NaN for the frame's
    spectra without truth and outside the truth's wavelength range."""
    with _open(path) as hdul:
        tflux = _data(hdul, "TRUTH_FLUX", path)
        twave = _data(hdul, "TRUTH_WAVE", path)
        tspecmin = int(hdul["TRUTH_FLUX"].header.get("SPECMIN", 0))
    out = np.full(frame.flux.shape, np.nan)
    for i in range(frame.flux.shape[0]):
        row = frame.specmin + i - tspecmin
        if 0 <= row < tflux.shape[0]:
            out[i] = np.interp(frame.wave, twave, tflux[row], left=np.nan, right=np.nan)
    return out


def apply_resolution(resolution, spectra):
    """R x for every spectrum: ``resolution`` [nspec, ndiag, nwave] holds desispec's diagonals,
    row k at offset ndiag//2 - k (R[r, r + offset] = resolution[k, r + offset], as in
    desispec.resolution.Resolution). Rows of R that reach past the grid (the first and last
    ndiag//2 bins) are NaN."""
    nspec, ndiag, nwave = resolution.shape
    half = ndiag // 2
    out = np.zeros((nspec, nwave))
    for k in range(ndiag):
        offset = half - k
        rows = slice(max(0, -offset), min(nwave, nwave - offset))
        cols = slice(rows.start + offset, rows.stop + offset)
        out[:, rows] += resolution[:, k, cols] * spectra[:, cols]
    out[:, :half] = np.nan
    out[:, nwave - half:] = np.nan
    return out


def pulls(frame, convolved_truth):
    """(flux - R truth) sqrt(ivar) over the bins with ivar > 0 and a finite R truth."""
    good = (frame.ivar > 0) & np.isfinite(convolved_truth)
    return (frame.flux[good] - convolved_truth[good]) * np.sqrt(frame.ivar[good])


def pull_stats(values):
    """Number, mean, standard deviation, median and robust standard deviation (1.4826 x the
    median absolute deviation) of the pulls (at least one)."""
    median = float(np.median(values))
    return {"n": int(values.size), "mean": float(values.mean()), "std": float(values.std()),
            "median": median, "robust_std": float(1.4826 * np.median(np.abs(values - median)))}


def parse_region(text):
    """``Y0:Y1,X0:X1`` (CCD rows and columns, ends excluded) as four ints."""
    try:
        ys, xs = text.split(",")
        (y0, y1), (x0, x1) = (tuple(int(v) for v in part.split(":")) for part in (ys, xs))
    except ValueError:
        raise QaError(f"region {text!r}: expected Y0:Y1,X0:X1, e.g. 1900:2200,100:400") from None
    return y0, y1, x0, x1


def check_region(region, shape, text):
    """A QaError unless the region is a non-empty box inside a CCD of ``shape``."""
    y0, y1, x0, x1 = region
    if not (0 <= y0 < y1 <= shape[0] and 0 <= x0 < x1 <= shape[1]):
        raise QaError(f"region {text}: not a non-empty box inside the CCD "
                      f"(rows 0:{shape[0]}, columns 0:{shape[1]})")


def _centred(centre, size, length):
    """A slice [a, a + size) around ``centre`` inside [0, length)."""
    size = min(size, length)
    start = min(max(0, int(round(centre)) - size // 2), length - size)
    return start, start + size


def default_region(model_hdu):
    """REGION_SIZE rows around the CCD's middle row, REGION_SIZE columns around the column
    centroid of the model's light in those rows (the CCD's middle column when it is dark)."""
    ny, nx = model_hdu.shape
    y0, y1 = _centred(ny / 2, REGION_SIZE, ny)
    rows = np.asarray(model_hdu.section[y0:y1, :], dtype=np.float64)
    light = np.clip(rows, 0, None).sum(axis=0)
    xc = (light * np.arange(nx)).sum() / light.sum() if light.sum() > 0 else nx / 2
    return (y0, y1) + _centred(xc, REGION_SIZE, nx)


def _bad_bins(frame):
    """[nspec, nwave] True where a bin is masked (MASK != 0) or has IVAR = 0."""
    return (frame.mask != 0) | (frame.ivar <= 0)


def choose_fibers(frame, count=4):
    """Rows of ``count`` spectra spread over the range of the median flux (faintest to
    brightest); when the frame has masked bins and none of those does, the one with the most
    masked bins replaces the second."""
    bad = _bad_bins(frame)
    level = np.array([np.median(f[~b]) if (~b).any() else -np.inf
                      for f, b in zip(frame.flux, bad)])
    order = np.argsort(level)
    picks = order[np.linspace(0, len(order) - 1, count).round().astype(int)]
    rows = [int(r) for r in dict.fromkeys(picks)]
    nbad = bad.sum(axis=1)
    if nbad.any() and not nbad[rows].any() and len(rows) > 1:
        rows[1] = int(np.argmax(nbad))
    return rows


def rows_of_fibers(frame, fibers):
    """Rows of the frame holding the given fiber numbers (a QaError for one it lacks)."""
    missing = [f for f in fibers if f not in frame.fibers]
    if missing:
        raise QaError(f"{frame.path}: no fiber {missing[0]} (it holds fibers "
                      f"{frame.fibers.min()}-{frame.fibers.max()})")
    return [int(np.flatnonzero(frame.fibers == f)[0]) for f in fibers]


def _colormap(name, levels=None):
    """A copy of a matplotlib colour map (``levels`` discrete colours) showing NaN in grey."""
    cmap = matplotlib.colormaps[name]
    return (cmap if levels is None else cmap.resampled(levels)).with_extremes(bad="0.6")


def _save(fig, path):
    """Writes a figure as a PNG of 256 colours (Pillow's octree palette, without dithering:
    a third of the size of a true-colour PNG of these plots) and returns the path."""
    canvas = FigureCanvasAgg(fig)
    canvas.draw()
    rgb = Image.fromarray(np.asarray(canvas.buffer_rgba())[..., :3])
    rgb.quantize(256, method=Image.FASTOCTREE, dither=Image.NONE).save(path, optimize=True)
    return path


def _plot_spectrum(ax, frame, row, window, convolved_truth):
    """One spectrum over a wavelength window: flux with a +-1 sigma band, sigma, R truth
    (when given) and red ticks at the masked bins."""
    sel = (frame.wave >= window[0]) & (frame.wave <= window[1])
    wave, flux, ivar = frame.wave[sel], frame.flux[row, sel], frame.ivar[row, sel]
    sigma = np.full(ivar.shape, np.nan)
    np.divide(1, np.sqrt(ivar, where=ivar > 0), out=sigma, where=ivar > 0)
    ax.fill_between(wave, flux - sigma, flux + sigma, step="mid", color="C0", alpha=0.35,
                    lw=0, label="flux $\\pm 1\\sigma$")
    ax.plot(wave, flux, color="C0", lw=0.6, drawstyle="steps-mid", label="flux")
    ax.plot(wave, sigma, color="C1", lw=0.6, drawstyle="steps-mid",
            label="$\\sigma = 1/\\sqrt{\\mathrm{ivar}}$")
    if convolved_truth is not None:
        ax.plot(wave, convolved_truth[row, sel], color="k", lw=0.5, ls="--",
                label="R truth (truth convolved by the resolution)")
    bad = _bad_bins(frame)[row, sel]
    ax.plot(wave[bad], np.full(bad.sum(), 0.04), "|", color="red", ms=8,
            transform=ax.get_xaxis_transform(), label="masked bin (MASK != 0 or IVAR = 0)")
    ax.set_xlim(window)


def _wide_and_positive(flux):
    """True when a spectrum is best seen on a log scale: its 1st percentile is above zero
    and its 99.9th more than ten times that (bright sky lines over a faint continuum)."""
    low, high = np.percentile(flux, [1, 99.9])
    return low > 0 and high > 10 * low


def plot_spectra(frame, rows, path, zoom, convolved_truth=None):
    """spectra.png: the spectra of ``rows`` over the whole grid (left; a log flux scale when
    they span more than a decade) and over the zoom window (linear, right)."""
    fig = Figure(layout="constrained", dpi=100, figsize=(12, 1.8 * len(rows) + 1.2))
    grid = fig.add_gridspec(len(rows) + 1, 2, height_ratios=[0.15] + [1] * len(rows),
                            width_ratios=[3, 1])
    legend_ax = fig.add_subplot(grid[0, :])
    axes = np.empty((len(rows), 2), dtype=object)
    for i, j in np.ndindex(axes.shape):
        axes[i, j] = fig.add_subplot(grid[i + 1, j], sharex=axes[0, j] if i else None)
    full = (frame.wave[0], frame.wave[-1])
    bad = _bad_bins(frame)
    for (left, right), row in zip(axes, rows):
        _plot_spectrum(left, frame, row, full, convolved_truth)
        _plot_spectrum(right, frame, row, zoom, convolved_truth)
        if _wide_and_positive(frame.flux[row]):
            left.set_yscale("log", nonpositive="mask")
        left.set_ylabel("flux [e$^-$/$\\AA$]")
        median = np.median(frame.flux[row, ~bad[row]]) if not bad[row].all() else np.nan
        left.set_title(f"fiber {frame.fibers[row]}: median flux {median:.1f} e$^-$/$\\AA$, "
                       f"{bad[row].sum()} masked bins", loc="left", fontsize="small")
        right.set_title(f"zoom {zoom[0]:.0f}-{zoom[1]:.0f} $\\AA$", loc="left",
                        fontsize="small")
    for ax in axes[-1]:
        ax.set_xlabel("wavelength [$\\AA$]")
    fig.suptitle(f"{frame.title}: spectra")
    legend_ax.axis("off")
    legend_ax.legend(*axes[0, 1].get_legend_handles_labels(), loc="center", ncol=5,
                     fontsize="small", frameon=False)
    return _save(fig, path)


def plot_chi2pix(frame, path):
    """chi2pix.png: CHI2PIX over fibers x wavelengths on a log scale centred on 1 (from
    1/top to top, top the 99.9th percentile or 10), and its median and maximum over the
    fibers."""
    chi2 = np.where(frame.chi2pix > 0, frame.chi2pix, np.nan)
    top = max(10.0, float(np.nanpercentile(chi2, 99.9))) if np.isfinite(chi2).any() else 10.0
    fig = Figure(layout="constrained", dpi=100, figsize=(12, 6))
    med_ax, img_ax = fig.subplots(2, 1, sharex=True, gridspec_kw=dict(height_ratios=[1, 3]))
    dw = frame.wave[1] - frame.wave[0] if frame.wave.size > 1 else 1.0
    contiguous = np.array_equal(frame.fibers, frame.fibers[0] + np.arange(frame.fibers.size))
    first = frame.fibers[0] if contiguous else 0
    extent = (frame.wave[0] - dw / 2, frame.wave[-1] + dw / 2,
              first - 0.5, first + frame.fibers.size - 0.5)
    image = img_ax.imshow(chi2, origin="lower", aspect="auto", extent=extent,
                          cmap=_colormap("RdBu_r", 12), norm=LogNorm(vmin=1 / top, vmax=top),
                          interpolation="nearest")
    bar = fig.colorbar(image, ax=[med_ax, img_ax], label="chi2pix (log scale)", extend="both",
                       fraction=0.04)
    ticks = np.geomspace(1 / top, top, 5)
    bar.set_ticks(ticks, labels=[f"{t:.2g}" for t in ticks])
    bar.ax.minorticks_off()
    img_ax.set_xlabel("wavelength [$\\AA$]")
    img_ax.set_ylabel("fiber" if contiguous else "row of the frame")
    med_ax.plot(frame.wave, np.nanmax(chi2, axis=0), color="C3", lw=0.6, label="maximum")
    med_ax.plot(frame.wave, np.nanmedian(chi2, axis=0), color="k", lw=0.6, label="median")
    med_ax.axhline(1, color="0.5", lw=0.5, ls=":")
    med_ax.set_yscale("log")
    med_ax.set_ylabel("over fibers")
    med_ax.legend(loc="upper right", ncol=2, fontsize="small")
    med_ax.set_title(f"{frame.title}: chi2pix (grey: chi2pix = 0)", loc="left")
    return _save(fig, path)


def read_region(image_path, model_path, region_text):
    """Image, model and residual/sigma over a region, and the region (y0, y1, x0, x1)."""
    with _open(image_path) as pre, _open(model_path) as mod:
        image_hdu, ivar_hdu = _hdu(pre, "IMAGE", image_path), _hdu(pre, "IVAR", image_path)
        model_hdu = mod["MODEL"] if "MODEL" in mod else mod[0]
        if model_hdu.shape != image_hdu.shape:
            raise QaError(f"{model_path}: a {model_hdu.shape} model of a {image_hdu.shape} "
                          f"image ({image_path})")
        if region_text is None:
            region = default_region(model_hdu)
        else:
            region = parse_region(region_text)
            check_region(region, image_hdu.shape, region_text)
        y0, y1, x0, x1 = region
        cut = (slice(y0, y1), slice(x0, x1))
        image, ivar, model = (np.asarray(h.section[cut], dtype=np.float64)
                              for h in (image_hdu, ivar_hdu, model_hdu))
    residual = np.full(ivar.shape, np.nan)
    np.multiply(image - model, np.sqrt(ivar, where=ivar > 0), out=residual, where=ivar > 0)
    noise = float(np.median(1 / np.sqrt(ivar[ivar > 0]))) if (ivar > 0).any() else 1.0
    return image, model, residual, noise, region


def _asinh_norm(soft, vmin, vmax):
    """Colour scale linear within +-soft of zero and logarithmic beyond (Lupton's asinh)."""
    return FuncNorm((lambda x: np.arcsinh(x / soft), lambda y: soft * np.sinh(y)),
                    vmin=vmin, vmax=vmax)


def _asinh_ticks(soft, vmin, vmax):
    """0 and the powers of ten from 2 soft on, either sign, inside [vmin, vmax]."""
    powers = 10.0 ** np.arange(np.ceil(np.log10(2 * soft)), np.log10(max(vmax, -vmin)) + 1)
    ticks = np.concatenate([-powers[::-1], [0.0], powers])
    return ticks[(ticks >= vmin) & (ticks <= vmax)]


def plot_region(image, model, residual, noise, region, title, path):
    """region.png: image and model on one asinh colour scale (linear within the median pixel
    noise ``noise``) and the residual/sigma, over a CCD region."""
    y0, y1, x0, x1 = region
    extent = (x0 - 0.5, x1 - 0.5, y0 - 0.5, y1 - 0.5)
    vmin = min(float(np.percentile(image, 1)), -noise)
    vmax = max(float(model.max()), 10 * noise)
    norm = _asinh_norm(noise, vmin, vmax)
    fig = Figure(layout="constrained", dpi=100, figsize=(14, 5.4))
    axes = fig.subplots(1, 3, sharex=True, sharey=True)
    counts = _asinh_ticks(noise, vmin, vmax)
    panels = [(image, "image", "electron (asinh scale)", counts,
               dict(cmap=_colormap("viridis", 16), norm=norm)),
              (model, "model", "electron (asinh scale)", counts,
               dict(cmap=_colormap("viridis", 16), norm=norm)),
              (residual, "(image - model) $\\sqrt{\\mathrm{ivar}}$",
               "residual / sigma (grey: ivar = 0)", np.arange(-4, 5, 2),
               dict(cmap=_colormap("RdBu_r", 10), vmin=-5, vmax=5))]
    for ax, (data, name, unit, ticks, style) in zip(axes, panels):
        shown = ax.imshow(data, origin="lower", extent=extent, interpolation="nearest",
                          **style)
        fig.colorbar(shown, ax=ax, orientation="horizontal", label=unit, extend="both",
                     ticks=ticks, shrink=0.9)
        ax.set_title(name)
        ax.set_xlabel("CCD column (x)")
    axes[0].set_ylabel("CCD row (y)")
    fig.suptitle(f"{title}: rows {y0}:{y1}, columns {x0}:{x1}")
    return _save(fig, path)


def plot_pulls(values, stats, title, path):
    """pulls.png: histogram of the pulls against a unit Gaussian, linear and log scale."""
    edges = np.linspace(-PULL_RANGE, PULL_RANGE, 121)
    x = np.linspace(-PULL_RANGE, PULL_RANGE, 400)
    gauss = np.exp(-x ** 2 / 2) / np.sqrt(2 * np.pi)
    outside = int((np.abs(values) > PULL_RANGE).sum())
    fig = Figure(layout="constrained", dpi=100, figsize=(12, 4.5))
    axes = fig.subplots(1, 2)
    for ax, scale in zip(axes, ("linear", "log")):
        ax.hist(values, bins=edges, density=True, histtype="stepfilled", color="C0",
                alpha=0.6, label="pulls")
        ax.plot(x, gauss, color="k", lw=1, label="unit Gaussian")
        ax.set_yscale(scale)
        ax.set_xlabel("(flux - R truth) $\\sqrt{\\mathrm{ivar}}$")
        ax.set_ylabel("probability density")
    axes[1].set_ylim(0.5 / (values.size * (edges[1] - edges[0])), 1)
    axes[0].legend(loc="upper left", fontsize="small")
    axes[0].text(0.98, 0.97, (f"{stats['n']} bins\nmean {stats['mean']:+.4f}\n"
                              f"std {stats['std']:.4f}\nmedian {stats['median']:+.4f}\n"
                              f"robust std {stats['robust_std']:.4f}\n"
                              f"{outside} beyond $\\pm${PULL_RANGE:g}"),
                 transform=axes[0].transAxes, ha="right", va="top", fontsize="small")
    fig.suptitle(f"{title}: pulls against the truth")
    return _save(fig, path)


def make_qa(frame_path, outdir, image=None, model=None, truth=None, region=None, fibers=None,
            zoom=None):
    """Writes the plots of a frame into ``outdir`` once every input has been read; returns
    {'files': [paths], 'pulls': pull statistics, or None without truth}. ``image`` and
    ``model`` go together; ``region`` is a ``Y0:Y1,X0:X1`` string, ``fibers`` a list of
    fiber numbers, ``zoom`` a (wmin, wmax) window in Angstrom."""
    frame = read_frame(frame_path)
    rows = choose_fibers(frame) if fibers is None else rows_of_fibers(frame, fibers)
    if zoom is None:
        middle = (frame.wave[0] + frame.wave[-1]) / 2
        zoom = (middle - ZOOM_WIDTH / 2, middle + ZOOM_WIDTH / 2)
    convolved, values, stats = None, None, None
    if truth is not None:
        convolved = apply_resolution(frame.resolution, read_truth_on_grid(truth, frame))
        values = pulls(frame, convolved)
        if values.size == 0:
            raise QaError(f"{truth}: no truth for a bin of {frame_path} with ivar > 0")
        stats = pull_stats(values)
    cuts = None if image is None else read_region(image, model, region)

    os.makedirs(outdir, exist_ok=True)
    files = [plot_spectra(frame, rows, os.path.join(outdir, "spectra.png"), zoom, convolved),
             plot_chi2pix(frame, os.path.join(outdir, "chi2pix.png"))]
    if cuts is not None:
        files.append(plot_region(*cuts, frame.title, os.path.join(outdir, "region.png")))
    if stats is not None:
        files.append(plot_pulls(values, stats, frame.title, os.path.join(outdir, "pulls.png")))
    return {"files": files, "pulls": stats}


def _parser():
    """The command line."""
    p = argparse.ArgumentParser(
        prog="python -m kspecter.qa",
        description="QA plots (PNG) of an extracted frame: spectra, chi2pix, image/model/"
                    "residual over a CCD region, pulls against the truth of a simulation.")
    p.add_argument("frame", metavar="FRAME", help="frame file (desispec layout, FITS)")
    p.add_argument("-o", "--outdir", required=True, metavar="DIR", help="folder of the PNGs")
    p.add_argument("--image", metavar="PREPROC", help="preproc image (IMAGE, IVAR) of the frame")
    p.add_argument("--model", metavar="MODEL", help="model image (kspecter extract -m)")
    p.add_argument("--truth", metavar="PREPROC",
                   help="preproc with TRUTH_FLUX and TRUTH_WAVE (kspecter simulate)")
    p.add_argument("--region", metavar="Y0:Y1,X0:X1",
                   help=f"CCD rows and columns shown (default: {REGION_SIZE} x {REGION_SIZE} "
                        "at the middle row, centred on the model's light)")
    p.add_argument("--fibers", metavar="F1,F2,...",
                   help="fibers of spectra.png (default: 4 from faintest to brightest)")
    p.add_argument("--zoom", metavar="WMIN,WMAX",
                   help=f"zoom window of spectra.png, Angstrom (default: the middle "
                        f"{ZOOM_WIDTH:g} A)")
    return p


def _numbers(parser, text, option, kind, count=None):
    """A comma-separated list of numbers of an option, or exit 2 naming the option."""
    try:
        values = [kind(v) for v in text.split(",")]
    except ValueError:
        values = []
    if not values or (count is not None and len(values) != count):
        parser.error(f"{option} {text!r}: expected {count or 'one or more'} "
                     f"comma-separated numbers")
    return values


def main(argv=None):
    """Runs the command line; returns 0, or exits with status 2 on a bad argument or input."""
    parser = _parser()
    args = parser.parse_args(argv)
    if (args.image is None) != (args.model is None):
        parser.error("--image and --model go together")
    if args.region is not None and args.image is None:
        parser.error("--region needs --image and --model")
    for path in (args.frame, args.image, args.model, args.truth):
        if path is not None and not os.path.isfile(path):
            parser.error(f"{path}: no such file")
    fibers = None if args.fibers is None else _numbers(parser, args.fibers, "--fibers", int)
    zoom = None if args.zoom is None else _numbers(parser, args.zoom, "--zoom", float, 2)
    if zoom is not None and not zoom[0] < zoom[1]:
        parser.error(f"--zoom {args.zoom}: WMIN must be below WMAX")
    try:
        result = make_qa(args.frame, args.outdir, image=args.image, model=args.model,
                         truth=args.truth, region=args.region, fibers=fibers, zoom=zoom)
    except (QaError, OSError) as err:
        parser.error(str(err))
    for path in result["files"]:
        print(f"wrote {path}")
    if result["pulls"] is not None:
        s = result["pulls"]
        print(f"pull against truth (flux - R truth) sqrt(ivar) over {s['n']} bins: "
              f"median {s['median']:+.4f}, robust std {s['robust_std']:.4f}, "
              f"mean {s['mean']:+.4f}, std {s['std']:.4f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
