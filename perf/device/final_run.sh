#!/usr/bin/env bash
# The "after" numbers of issue 14 in one device call (30 s on an H100, 2026-11-24; at most
# 500 s with gpu_specter). Here: `perf/gpu_run.sh prepare` (or `ninja -C build-cuda bench_extract
# kspecter_cli && perf/gpu_run.sh stage`), then copy the stage and this script into an ignored
# folder of the checkout the device tool sends, e.g.
#   rm -rf <checkout>/.gpu-perf && cp -r .gpu <checkout>/.gpu-perf &&
#   cp perf/device/final_run.sh <checkout>/.gpu-perf/
# Device call: carry [".gpu-perf"] (and ".gpu-specter", below), command
#   mv .gpu-perf .gpu && bash perf/gpu_run.sh exec .gpu/final_run.sh
# Steps, each with its own time limit; logs under $OUT, a summary printed last:
#   1. bench_extract, full r frame (500 x 2326, real r0 PSF, DESI defaults), per stage, best
#      of 3, band solver (the default) and dense; peak device memory; per kernel (--kernels);
#   2. the CLI end to end on a plain full-frame preproc (`kspecter simulate`): extract on the
#      GPU twice with --no-truth (wall: CUDA start-up, read, extract, write), once with the
#      pulls against the truth, once on the 16 host cores; `kspecter compare`: run 1 vs run 2
#      bitwise (--max-pull 0), GPU vs CPU (max |pull|);
#   3. gpu_specter on the same preproc and PSF, when a checkout of it (with py/gpu_specter) is
#      carried as .gpu-specter, or GPU_SPECTER=<folder>; its Python needs (fitsio, astropy)
#      may come in <folder>/site (added to PYTHONPATH; the device image has numpy, cupy and
#      numba, not fitsio or astropy, and Debian 12 packages are built for its Python 3.11, not
#      the device's 3.12). Never committed here (RULES.md).
set -uo pipefail
B="$KSPECTER_BDIR"
cli="$KSPECTER_CLI"
G="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
out="$OUT"
psf="${KSPECTER_PSF:-$G/data/psf-r0-00067784.fits}"
R="${KSPECTER_ROOT:-$G/..}"  # the repository (perf/device/gpu_specter_run.py)
t0=$SECONDS
note() { echo "[$((SECONDS - t0)) s] $*"; }
wall() { awk -v a="$1" -v b="$(date +%s.%N)" 'BEGIN {printf "%.3f", b - a}'; }
nvidia-smi --query-gpu=name,memory.total,clocks.sm,clocks.max.sm,driver_version --format=csv \
  > "$out/gpu.txt" 2>&1

note "bench_extract"
{
  timeout 100 "$B/perf/bench_extract" --repeat 3 --solver band
  timeout 100 "$B/perf/bench_extract" --repeat 3 --solver dense
  timeout 100 "$B/perf/bench_extract" --repeat 1 --solver band --kernels
} > "$out/bench_extract.log" 2>&1

note "CLI end to end"
e=/tmp/e2e
mkdir -p $e
{
  s=$(date +%s.%N)
  timeout 60 "$cli" simulate --psf "$psf" -o $e/preproc.fits --seed 1 > /dev/null
  echo "simulate (host) wall $(wall $s) s; preproc $(stat -c %s $e/preproc.fits) bytes"
  for k in 1 2; do
    s=$(date +%s.%N)
    timeout 60 "$cli" extract -w 5760,7620,0.8 -i $e/preproc.fits -p "$psf" -o $e/frame$k.fits --backend cuda \
      --no-truth --log-level debug
    echo "extract cuda --no-truth run $k wall $(wall $s) s"
  done
  timeout 60 "$cli" extract -w 5760,7620,0.8 -i $e/preproc.fits -p "$psf" -o $e/frame-truth.fits --backend cuda
  s=$(date +%s.%N)
  OMP_NUM_THREADS=16 OMP_PROC_BIND=spread timeout 90 "$cli" extract -w 5760,7620,0.8 -i $e/preproc.fits \
    -p "$psf" -o $e/frame-omp.fits --backend openmp --no-truth
  echo "extract openmp (16 threads) wall $(wall $s) s"
  echo "== compare cuda run 1 vs run 2 (bitwise)"
  timeout 60 "$cli" compare --max-pull 0 $e/frame1.fits $e/frame2.fits
  echo "== compare cuda vs openmp"
  timeout 60 "$cli" compare $e/frame1.fits $e/frame-omp.fits
  s=$(date +%s.%N)
  timeout 60 "$cli" info > /dev/null
  echo "kspecter info (process + CUDA start-up) wall $(wall $s) s"
} > "$out/e2e.log" 2>&1

GS="${GPU_SPECTER:-}"
[ -z "$GS" ] && [ -d "$R/.gpu-specter" ] && GS="$(cd "$R/.gpu-specter" && pwd)"
if [ -n "$GS" ] && [ -f "$GS/psf-r0.npz" ]; then
  # gpu_specter 0.3.0 on the same preproc, PSF and GPU, with numpy stand-ins for the astropy
  # and fitsio the device lacks (perf/device/gpu_specter_run.py; staged by
  # perf/gpu_specter_inputs.py, never committed).
  note "gpu_specter"
  PYTHONPATH="$GS/py" timeout 400 python3 "$R/perf/device/gpu_specter_run.py" \
    --psf-npz "$GS/psf-r0.npz" --image $e/preproc.fits --kspecter-frame $e/frame1.fits \
    -o /tmp/gs-frame.npz > "$out/gpu_specter.log" 2>&1
  echo "gpu_specter_run exit $?" >> "$out/gpu_specter.log"
fi
note "done"

echo "==== summary"
cat "$out/gpu.txt"
grep -E '^== |^kspecter::extract|^sum of stages|extract_frame wall|peak device' \
  "$out/bench_extract.log" | head -40
sed -n '/^kernel (per run/,/^sum/p' "$out/bench_extract.log" | head -30
grep -E 'wall|pull against|max \||AGREE|DIFFER|== compare|read |write |upload|stitch' \
  "$out/e2e.log" | grep -v '^\[kspecter.*kspecter::' | head -30
[ -f "$out/gpu_specter.log" ] && grep -E 'wall|pull|exit|Error' "$out/gpu_specter.log"
ls -la "$out"
