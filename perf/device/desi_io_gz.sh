#!/usr/bin/env bash
# Issue 11 on the GPU: the read time of a gzipped and of a plain full-frame preproc, and a
# `--batch` of full r frames (500 spectra x 2326 wavelengths, the real r0 PSF) from .fits.gz
# against the same frames from .fits, extracted with --backend cuda. Builds nothing: it runs
# the staged CUDA build, through
#   bash perf/gpu_run.sh exec perf/device/desi_io_gz.sh [NFRAMES]      (device tool, carry .gpu)
# after `perf/gpu_run.sh prepare` here (which builds and stages perf/bench_read_preproc with
# the rest). Writes its logs under $OUT; prints the numbers last.
set -uo pipefail
B="$KSPECTER_BDIR"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
out="$OUT"
nframes="${1:-6}"
psf="${KSPECTER_TEST_DATA:-}/psf-r0-00067784.fits"
[ -f "$psf" ] || psf=synthetic
bench="$B/perf/bench_read_preproc"
[ -x "$bench" ] || { echo "desi_io_gz: no $bench in the staged build (stage it again)"; exit 1; }
nvidia-smi --query-gpu=name,memory.total,clocks.sm,clocks.max.sm --format=csv > "$out/gpu.txt" 2>&1
work=/tmp/desi_io_gz
rm -rf "$work"
timeout 540 bash "$here/perf/desi_io_gz.sh" "$KSPECTER_CLI" "$bench" "$psf" "$work" \
  --nspec 500 --nframes "$nframes" --backend cuda --repeat 5 2>&1 | tee "$out/desi_io_gz.log"
rc=${PIPESTATUS[0]}
cp "$work"/batch-*.log "$out/" 2>/dev/null || true
echo "desi_io_gz: exit $rc (psf $psf, $nframes frames); GPU: $(tail -n1 "$out/gpu.txt")"
exit "$rc"
