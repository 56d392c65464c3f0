#!/usr/bin/env bash
# Issue 14, one device call: the stitch's per-batch copies (extract/impl/stitch.hpp) where the
# batches are not whole frames. This tree's CLI built on the device, one simulated full-frame
# preproc, then CUDA frames compared bitwise: the default batches against batches of bundle
# slices (--memory-budget 0.25: every bundle cut into runs of its patches); and a range of
# spectra that starts inside a bundle (-s 13 -n 61), sliced and not, against OpenMP (16
# threads) at the issue's 1e-9. Then bench_extract under the kernel timer (a Kokkos tool: the
# copies stay on the calling thread) and plain.
#
# Device call (carry [".gpu-python", ".gpu-specter"], timeout_s 600):
#   bash perf/device/stitch_check.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
note "build"
device_build after "$here" bench_extract
cli() { "$here/build-device-after/src/cli/kspecter" "$@"; }
e=/tmp/stitch_check
mkdir -p $e
cli simulate --psf "$psf" -o $e/preproc.fits --seed 1 --log-level quiet
x() {  # output backend [options]
  local o="$1" b="$2"; shift 2
  cli extract -w 5760,7620,0.8 -i $e/preproc.fits -p "$psf" -o "$e/$o.fits" --backend "$b" \
    --no-truth "$@" > "$out/$o.log" 2>&1
  echo "$o ($b $*): exit $?"
}
{
  note "extract"
  x full cuda
  x full-sliced cuda --memory-budget 0.25
  x part cuda -s 13 -n 61
  x part-sliced cuda -s 13 -n 61 --memory-budget 0.25
  OMP_NUM_THREADS=16 OMP_PROC_BIND=spread x part-omp openmp -s 13 -n 61
  echo "== full: default batches vs bundle slices (bitwise)"
  cli compare --max-pull 0 $e/full.fits $e/full-sliced.fits
  echo "== part: default vs sliced (bitwise)"
  cli compare --max-pull 0 $e/part.fits $e/part-sliced.fits
  echo "== part: cuda vs openmp"
  cli compare $e/part-sliced.fits $e/part-omp.fits
  note "bench_extract (plain, then under the kernel timer)"
  timeout 100 "$here/build-device-after/perf/bench_extract" --psf "$psf" --repeat 3 --solver band \
    --kernels 2>&1 | grep -E "extract_frame|stitch|deep_copy|batch" | head -n 12
} 2>&1 | tee "$out/stitch_check.log"
pack_logs
note "done"
