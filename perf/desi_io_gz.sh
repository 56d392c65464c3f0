#!/usr/bin/env bash
# What a gzipped preproc costs (issue 11): the read time of a full-frame preproc, plain and
# gzipped, then the wall time of a `kspecter extract --batch` of NFRAMES frames from .fits.gz
# files against the same frames from plain .fits. In a batch the I/O thread reads (and
# gunzips) the next frame while the device extracts the current one, so on a GPU the gz
# batch should take no longer than the plain one. Prints the numbers; builds nothing.
#
#   perf/desi_io_gz.sh KSPECTER_EXE BENCH_READ_PREPROC_EXE PSF OUTDIR [options]
#     --nspec N      spectra extracted per frame (default 500; the image always has every
#                    fiber of the PSF lit)
#     --nframes N    frames per batch (default 4)
#     --backend B    extract's --backend (default auto)
#     --repeat N     reads per file for bench_read_preproc (default 5)
#
# PSF: a GaussHermite PSF file (the real r0 PSF of ../shared/data), or "synthetic" for the
# built-in full-frame one (kspecter make-psf).
set -euo pipefail
[ $# -ge 4 ] || { sed -n '2,16p' "$0" >&2; exit 2; }
exe="$1" bench="$2" psf="$3" out="$4"; shift 4
nspec=500 nframes=4 backend=auto repeat=5
while [ $# -gt 0 ]; do
  case "$1" in
    --nspec) nspec="$2"; shift 2 ;;
    --nframes) nframes="$2"; shift 2 ;;
    --backend) backend="$2"; shift 2 ;;
    --repeat) repeat="$2"; shift 2 ;;
    *) echo "desi_io_gz: unknown option '$1'" >&2; exit 2 ;;
  esac
done
mkdir -p "$out"
now() { date +%s.%N; }
wall() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.2f", b - a }'; }

if [ "$psf" = synthetic ]; then
  psf="$out/psf-r0.fits"
  "$exe" make-psf -o "$psf" --log-level quiet
fi

# One full frame, written by simulate as the pipeline writes it: gzipped, and plain.
t=$(now)
"$exe" simulate -p "$psf" -o "$out/sim.fits.gz" --seed 1 --log-level quiet
echo "simulate (every fiber, .fits.gz): $(wall "$t") s"
gzip -dc "$out/sim.fits.gz" > "$out/sim.fits"
for k in $(seq 1 "$nframes"); do
  id=$(printf '%08d' "$k")
  cp "$out/sim.fits.gz" "$out/preproc-r0-$id.fits.gz"
  cp "$out/sim.fits" "$out/preproc-r0-$id.fits"
done
ls -l "$out/sim.fits" "$out/sim.fits.gz"

echo "---- read time (io::read_preproc)"
"$bench" "$out/sim.fits" "$out/sim.fits.gz" --repeat "$repeat"

# The two batches, the plain one first and then the gz one, each run twice (the second run
# of each is the one to compare: the executable and the PSF are in the page cache).
for kind in fits fits.gz; do
  : > "$out/batch-$kind.txt"
  for k in $(seq 1 "$nframes"); do
    id=$(printf '%08d' "$k")
    echo "$out/preproc-r0-$id.$kind $psf $out/frame-$kind-$id.fits" >> "$out/batch-$kind.txt"
  done
done
echo "---- extract --batch of $nframes frames, $nspec spectra each, backend $backend"
for run in 1 2; do
  for kind in fits fits.gz; do
    t=$(now)
    "$exe" extract --batch "$out/batch-$kind.txt" -w 5760,7620,0.8 -n "$nspec" --backend "$backend" \
      --no-truth --log-level quiet > "$out/batch-$kind-$run.log" 2>&1 ||
      { echo "extract --batch ($kind) failed:"; tail -5 "$out/batch-$kind-$run.log"; exit 1; }
    echo "batch of .$kind, run $run: $(wall "$t") s wall"
  done
done
# The same frames either way: the inputs hold the same pixels.
id=$(printf '%08d' 1)
echo "---- frame 1 from .fits against frame 1 from .fits.gz (kspecter compare)"
"$exe" compare "$out/frame-fits-$id.fits" "$out/frame-fits.gz-$id.fits" 2>&1 | tail -3
