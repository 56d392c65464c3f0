#!/usr/bin/env bash
# Issue 14, one device call: this tree built on the device (python_cupy.sh), then
# bench_extract on the full r frame (real r0 PSF, band solver, best of 3, per stage) for each
# assemble_icov launch shape in $KSPECTER_ASM_SHAPES ("lanes,threads" pairs; "default" is the
# tuning's), interleaved twice, and ncu's instruction counts for each shape on one batch.
#
# Here: bash perf/device/python_cupy.sh stage (.gpu-python), and .gpu-specter as for
# session_final.sh (it holds the r0 PSF).
# Device call (carry [".gpu-python", ".gpu-specter"], timeout_s 600):
#   KSPECTER_ASM_SHAPES="default 8,16 4,16" bash perf/device/assembly_shapes.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
shapes="${KSPECTER_ASM_SHAPES:-default}"
note "build"
device_build after "$here" "bench_extract"
b="$here/build-device-after/perf"
note "bench_extract"
for k in 0 1; do
  for vt in $shapes; do
    echo "== shape $vt, round $k"
    KSPECTER_ASM_VT="$vt" timeout 100 "$b/bench_extract" --psf "$psf" --repeat 3 --solver band 2>&1 |
      grep -E "extract_frame|kspecter::extract::assembly|peak"
  done
done | tee "$out/bench_extract.log"
NCU="$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -n1)"
if [ -n "$NCU" ]; then
  for vt in $shapes; do
    note "ncu $vt"
    KSPECTER_ASM_VT="$vt" timeout 100 "$NCU" --clock-control none --kernel-name-base mangled \
      -k "regex:AssembleICov" -c 1 \
      --metrics gpu__time_duration.sum,smsp__inst_executed.sum,smsp__issue_active.avg.pct_of_peak_sustained_active,sm__warps_active.avg.pct_of_peak_sustained_active,l1tex__t_sector_hit_rate.pct,launch__registers_per_thread \
      "$b/bench_extract" --psf "$psf" --nbundles 5 --warmup 0 --repeat 1 --solver band 2>&1 |
      grep -E "gpu__time|inst_executed|issue_active|warps_active|hit_rate|registers" | tee -a "$out/ncu.log"
  done
fi
pack_logs
note "done"
