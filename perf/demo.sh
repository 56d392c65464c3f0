#!/usr/bin/env bash
# The README's main job: a frame made from the built-in synthetic PSF, written as the DESI
# pipeline writes its preproc files (preproc-r0-EXPID.fits.gz: IMAGE, IVAR, MASK
# tile-compressed, READNOISE, FIBERMAP), extracted as desi_extract_spectra would
# (frame-r0-EXPID.fits.gz, as desi_proc names it), and compared with its truth.  usage: perf/demo.sh KSPECTER_EXE OUTDIR
set -euo pipefail
exe="$1"; out="$2"
mkdir -p "$out"
if ! "$exe" --help | grep -q '^  extract '; then
  echo "demo: this build has no extract command yet; 'kspecter info' above is the main job"
  exit 0
fi
"$exe" make-psf -o "$out/psf-r0.fits"
"$exe" simulate --psf "$out/psf-r0.fits" -o "$out/preproc-r0-00000001.fits.gz" -n 25 --seed 1 \
  --camera r0 --expid 1
"$exe" extract -i "$out/preproc-r0-00000001.fits.gz" -p "$out/psf-r0.fits" \
  -o "$out/frame-r0-00000001.fits.gz" -w 5760,7620,0.8 -n 25
echo "demo: the frame is $out/frame-r0-00000001.fits.gz (kspecter compare A B compares two frames)"
