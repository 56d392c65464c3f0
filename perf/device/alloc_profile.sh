#!/usr/bin/env bash
# Where a frame's device allocations go on the GPU (session 20): bench_extract --allocations for
# a frame alone and with kept buffers, and alloc_cost (cudaMalloc/cudaFree of 2 GiB in 1 to 40
# pieces, no Kokkos). Device call (carry [".gpu-python", ".gpu-specter"]):
#   bash perf/device/alloc_profile.sh
source "$(dirname "$0")/common.sh"
note "build"
device_build cur "$here" bench_extract
B="$here/build-device-cur"
note "alloc_cost"
nvcc -O2 -arch=sm_90 -o /tmp/alloc_cost "$here/perf/device/alloc_cost.cu" && /tmp/alloc_cost 2 1 4 10 20 40 > "$out/alloc_cost.log" 2>&1
cat "$out/alloc_cost.log"
for k in 0 1; do
  note "bench_extract --keep-buffers $k --allocations"
  "$B/perf/bench_extract" --psf "$psf" --repeat 3 --solver band --keep-buffers $k --allocations \
    > "$out/alloc$k.log" 2>&1
  grep -A12 "^region" "$out/alloc$k.log"; grep "wall\|setup\|release\|::psf " "$out/alloc$k.log"
done
note "done"
pack_logs
