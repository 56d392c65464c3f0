#!/usr/bin/env bash
# Issue 14, one short device call: the checks of a change that needs no before/after timing.
# This tree built on the device (python_cupy.sh, with bench_band), the GoogleTest executables
# staged in .gpu-tests (carried_tests.sh; $KSPECTER_GTEST_FILTER picks the tests), bench_band,
# then on one simulated full r frame: CUDA twice (reruns bitwise), OpenMP on 16 host threads
# against CUDA (the issue's 1e-9 in pulls), the pulls against the truth, and bench_extract's
# stages once.
#
# Here: .gpu-python, .gpu-specter (the r0 PSF) as for before_after.sh, and
#   bash perf/device/carried_tests.sh stage tst_band_cuda
# Device call (carry [".gpu-python", ".gpu-specter", ".gpu-tests"], timeout_s 400):
#   KSPECTER_GTEST_FILTER='*band*:*Band*' bash perf/device/agree_check.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
note "build"
device_build after "$here" "bench_extract bench_band"
if [ -d "$here/.gpu-tests" ]; then
  note "tests"
  bash "$here/perf/device/carried_tests.sh" run --gtest_filter="${KSPECTER_GTEST_FILTER:-*}" 2>&1 |
    grep -E "^\[  (PASSED|FAILED)|^\[==========\]|tests? (ran|passed|failed)|FAILED" | tee "$out/tests.log"
fi
b="$here/build-device-after"
note "bench_band"
timeout 120 "$b/perf/bench_band" --reps 5 2>&1 | grep -v "^ *In general\|OMP_PROC_BIND\|For unit\|For best" |
  tee "$out/bench_band.log" | tail -n 14
e=/tmp/agree_check
mkdir -p $e
cli() { "$b/src/cli/kspecter" "$@"; }
note "frames"
{
  cli simulate --psf "$psf" -o $e/preproc.fits --seed 1 --log-level quiet
  for k in 1 2; do
    cli extract -w 5760,7620,0.8 -i $e/preproc.fits -p "$psf" -o $e/cuda-$k.fits --backend cuda \
      --log-level info 2>&1 | grep -iE "pull|extracted"
  done
  OMP_NUM_THREADS=16 OMP_PROC_BIND=spread cli extract -w 5760,7620,0.8 -i $e/preproc.fits \
    -p "$psf" -o $e/omp.fits --backend openmp --no-truth --log-level quiet > /dev/null 2>&1
  echo "== cuda rerun (bitwise)"
  cli compare --max-pull 0 $e/cuda-1.fits $e/cuda-2.fits
  echo "== cuda vs openmp (16 threads)"
  cli compare $e/cuda-1.fits $e/omp.fits
} 2>&1 | grep -v "OMP_PROC_BIND\|In general\|For unit\|For best" | tee "$out/frames.log"
note "bench_extract"
timeout 60 "$b/perf/bench_extract" --psf "$psf" --repeat 3 --solver band 2>&1 |
  grep -E "extract_frame|kspecter::extract::[a-z_]+ +[0-9]" | tee "$out/bench_extract.log"
pack_logs
note "done"
