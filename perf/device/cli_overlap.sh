#!/usr/bin/env bash
# Issue 14's CLI target (a file in 1 s end to end on a GPU), before and after the single frame
# is read while CUDA starts up (cli/extract_job.hpp, start_single_read), in one device call:
# both trees built on the device (python_cupy.sh, CLI only), then on one plain full-frame
# preproc (real r0 PSF, DESI's 5760-7620 grid) the two CLIs run in turn, a warm-up each, then
# four runs each, interleaved; `kspecter compare --max-pull 0` checks the frames are the same.
#
# Here:
#   bash perf/device/python_cupy.sh stage                    # .gpu-python (once)
#   rm -rf .gpu-before && mkdir .gpu-before && git archive <before> | tar -x -C .gpu-before
#   (.gpu-specter as for session_final.sh: it holds the r0 PSF)
# Device call (carry [".gpu-python", ".gpu-specter", ".gpu-before"], timeout_s 600):
#   bash perf/device/cli_overlap.sh
set -uo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd -P)"
out="${OUT:-$here/gpu-out}"
mkdir -p "$out"
psf="$here/.gpu-specter/psf-r0-00067784.fits"
t0=$SECONDS
note() { echo "[$((SECONDS - t0)) s] $*"; }
wall() { awk -v a="$1" -v b="$(date +%s.%N)" 'BEGIN {printf "%.3f", b - a}'; }

for tree in after before; do
  src="$here"; [ "$tree" = before ] && src="$here/.gpu-before"
  note "build $tree"
  OUT=/tmp/build-$tree KSPECTER_DEVICE_BUILD_ONLY=1 KSPECTER_DEVICE_SOURCE="$src" \
    KSPECTER_DEVICE_BUILD="$here/build-device-$tree" \
    bash "$here/perf/device/python_cupy.sh" run > "$out/build-$tree.log" 2>&1 ||
    { tail -n 30 "$out/build-$tree.log"; exit 1; }
done
export LD_LIBRARY_PATH="/tmp/kspecter-kokkos-cuda/lib-use${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
cli() { "$here/build-device-$1/src/cli/kspecter" "${@:2}"; }

e=/tmp/overlap
mkdir -p $e
note "simulate"
cli after simulate --psf "$psf" -o $e/preproc.fits --seed 1 --log-level quiet
extract() {  # tree run
  local s; s=$(date +%s.%N)
  cli "$1" extract -w 5760,7620,0.8 -i $e/preproc.fits -p "$psf" -o "$e/frame-$1-$2.fits" \
    --backend cuda --no-truth --log-level debug > "$out/extract-$1-$2.log" 2>&1
  echo "$1 run $2: exit $? wall $(wall "$s") s"
}
{
  for k in 0 1 2 3 4; do
    extract before $k
    extract after $k
  done
  for tree in before after; do
    s=$(date +%s.%N)
    cli $tree info > /dev/null
    echo "$tree: kspecter info (process + CUDA start-up) wall $(wall "$s") s"
  done
  echo "== compare before vs after (bitwise)"
  cli after compare --max-pull 0 $e/frame-before-1.fits $e/frame-after-1.fits
  echo "== log of after run 1 (timestamps: start-up, read, extract, write)"
  grep -v 'kspecter::' "$out/extract-after-1.log"
  echo "== log of before run 1"
  grep -v 'kspecter::' "$out/extract-before-1.log"
} 2>&1 | tee "$out/cli_overlap.log"
note "done"
