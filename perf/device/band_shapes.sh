#!/usr/bin/env bash
# Issue 14, one device call: this tree built on the device (python_cupy.sh), then bench_band
# (the band path against the dense one on iCov-like patches, and the band kernels' launch
# shapes: band_cholesky's team, band_strided_inverse_blocks' team, rows a group, C tiles a
# thread and launch bound) and bench_extract on the full r frame (real r0 PSF, band solver,
# best of 3, per stage), twice.
#
# Here: bash perf/device/python_cupy.sh stage (.gpu-python), and .gpu-specter as for
# session_final.sh (it holds the r0 PSF).
# Device call (carry [".gpu-python", ".gpu-specter"], timeout_s 600):
#   bash perf/device/band_shapes.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
nvidia-smi --query-gpu=name,memory.total,clocks.sm,clocks.max.sm,driver_version --format=csv
note "build"
device_build after "$here" "bench_extract bench_band"
b="$here/build-device-after/perf"
note "bench_band"
timeout 200 "$b/bench_band" --reps 5 2>&1 | tee "$out/bench_band.log" | grep -v "^ *In general\|OMP_PROC_BIND\|For unit\|For best"
note "bench_extract"
for k in 0 1; do
  timeout 100 "$b/bench_extract" --psf "$psf" --repeat 3 --solver band 2>&1 |
    grep -E "extract_frame|kspecter::extract::[a-z_]+ +[0-9]|peak" | tee -a "$out/bench_extract.log"
done
pack_logs
note "done"
