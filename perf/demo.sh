#!/usr/bin/env bash
# The README's main job: a frame made from the built-in synthetic PSF, extracted, and
# compared with its truth.  usage: perf/demo.sh KSPECTER_EXE OUTDIR
set -euo pipefail
exe="$1"; out="$2"
mkdir -p "$out"
if ! "$exe" --help | grep -q '^  extract '; then
  echo "demo: this build has no extract command yet; 'kspecter info' above is the main job"
  exit 0
fi
"$exe" make-psf -o "$out/psf.fits"
"$exe" simulate --psf "$out/psf.fits" -o "$out/preproc.fits" -n 25 --seed 1
"$exe" extract -i "$out/preproc.fits" -p "$out/psf.fits" -o "$out/frame.fits" -n 25
echo "demo: the frame is $out/frame.fits (kspecter compare A B compares two frames)"
