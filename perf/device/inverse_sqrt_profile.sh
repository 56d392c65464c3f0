#!/usr/bin/env bash
# Issue 14, one device call for the inverse square root alone: this tree built on the device
# (python_cupy.sh: bench_extract, bench_inverse_sqrt), then bench_inverse_sqrt (the launch
# shapes), ncu --set full on the first $KSPECTER_NCU_COUNT (10) launches of kernels matching
# $KSPECTER_NCU_KERNELS (default: the staged ones, backend shape first), and bench_extract
# on the full r frame.
# No second tree: before/after comparisons and the frame checks are before_after.sh's.
#
# Device call (carry [".gpu-python", ".gpu-specter"], timeout_s 600):
#   bash perf/device/inverse_sqrt_profile.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
kernels="${KSPECTER_NCU_KERNELS:-inverse_sqrt|EigRotations}"
note "build"
device_build after "$here" "bench_extract bench_inverse_sqrt"
b="$here/build-device-after/perf"
note "bench_inverse_sqrt"
timeout 120 "$b/bench_inverse_sqrt" 2>&1 | tee "$out/bench_inverse_sqrt.log"
NCU="$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -n1)"
if [ -n "$NCU" ]; then
  note "ncu ($kernels)"
  timeout 200 "$NCU" --clock-control none --set full --kernel-name-base mangled \
    -k "regex:$kernels" -c "${KSPECTER_NCU_COUNT:-10}" -f -o /tmp/ncu_isqrt "$b/bench_inverse_sqrt" --reps 1 \
    > "$out/ncu.log" 2>&1
  "$NCU" -i /tmp/ncu_isqrt.ncu-rep --page raw --csv > /tmp/ncu_isqrt_raw.csv 2>/dev/null &&
    python3 "$here/perf/ncu_table.py" /tmp/ncu_isqrt_raw.csv 2>&1 | tail -n 14
  "$NCU" -i /tmp/ncu_isqrt.ncu-rep --page details --section WarpStateStats --section Occupancy \
    --section SchedulerStats --section LaunchStats > "$out/ncu_details.txt" 2>&1
  grep -E "Warp Cycles Per Issued|Issued Warp Per|Achieved Active Warps|Stall" "$out/ncu_details.txt" | head -n 40
fi
note "bench_extract"
timeout 100 "$b/bench_extract" --psf "$psf" --repeat 3 --solver band 2>&1 |
  grep -E "^kspecter::extract::[a-z_]+ +[0-9]|extract_frame|peak" | tee "$out/bench_extract.log"
pack_logs
note "done"
