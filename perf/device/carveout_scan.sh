#!/usr/bin/env bash
# Issue 14, one device call: bench_extract on the full r frame under other shared-memory
# carve-outs for the kernels compat::prefer_l1_for names (Kokkos 3.4 asks for the largest
# shared memory on every team kernel; docs/building-gpu.md). Each setting: the frame's time
# (best of 3) and the per-kernel times.
#
# Device call (carry [".gpu-python", ".gpu-specter"], timeout_s 600):
#   KSPECTER_CARVEOUT_SETTINGS="none KSPECTER_CO_ASSEMBLE=0 ..." bash perf/device/carveout_scan.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
note "build"
device_build after "$here" bench_extract
b="$here/build-device-after/perf/bench_extract"
settings="${KSPECTER_CARVEOUT_SETTINGS:-none}"
for s in $settings; do
  {
    echo "== $s"
    if [ "$s" = none ]; then env_set=(); else env_set=(${s//,/ }); fi
    env "${env_set[@]}" timeout 100 "$b" --psf "$psf" --repeat 3 --solver band 2>&1 |
      grep -E "extract_frame|^kspecter::extract::[a-z_]+ +[0-9]"
    env "${env_set[@]}" timeout 100 "$b" --psf "$psf" --repeat 1 --solver band --kernels 2>&1 |
      grep -E "assemble_icov|band_strided|band_cholesky |spots" | head -n 8
  }
done 2>&1 | tee "$out/carveout.log"
pack_logs
note "done"
