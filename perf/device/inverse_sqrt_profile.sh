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
set -uo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd -P)"
out="${OUT:-$here/gpu-out}"
mkdir -p "$out"
psf="$here/.gpu-specter/psf-r0-00067784.fits"
kernels="${KSPECTER_NCU_KERNELS:-inverse_sqrt|EigRotations}"
t0=$SECONDS
note() { echo "[$((SECONDS - t0)) s] $*"; }
note "build"
OUT=/tmp/build-after KSPECTER_DEVICE_BUILD_ONLY=1 KSPECTER_DEVICE_SOURCE="$here" \
  KSPECTER_DEVICE_BUILD="$here/build-device-after" \
  KSPECTER_DEVICE_EXTRA_TARGETS="bench_extract bench_inverse_sqrt" \
  bash "$here/perf/device/python_cupy.sh" run > "$out/build.log" 2>&1 ||
  { tail -n 30 "$out/build.log"; exit 1; }
export LD_LIBRARY_PATH="/tmp/kspecter-kokkos-cuda/lib-use${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
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
(cd "$out" && tar czf /tmp/logs.tgz --exclude=logs.tgz . && mv /tmp/logs.tgz "$out/" &&
  find . -type f ! -name logs.tgz -delete)
note "done"
