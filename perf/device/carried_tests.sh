#!/usr/bin/env bash
# Issue 14: GoogleTest executables of the CUDA build made here (perf/gpu_run.sh prepare, or
# ninja -C build-cuda TARGET), run on the device, which has no GoogleTest to build them with.
# The device runs them from .gpu-tests, with the shared libraries they need that it may lack
# (built here against glibc 2.36; the device's Ubuntu 24.04 has 2.39).
#
# Here:   bash perf/device/carried_tests.sh stage tst_band_cuda [more targets]
# Device: bash perf/device/carried_tests.sh run [gtest arguments]   (carry [".gpu-tests"])
# run stops with the first executable that fails, and its status.
set -uo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd -P)"
dst="$here/.gpu-tests"
case "${1:-}" in
  stage)
    shift
    rm -rf "$dst" && mkdir -p "$dst/lib"
    for t in "$@"; do
      exe="$(find "$here/${KSPECTER_GPU_BUILD:-build-cuda}/tests" -name "$t" -type f | head -n1)"
      [ -n "$exe" ] || { echo "carried_tests: no $t in build-cuda/tests" >&2; exit 2; }
      strip -o "$dst/$t" "$exe"
      ldd "$exe" | awk '/=> \// {print $1, $3}' | while read -r name path; do
        # Everything but the C and C++ runtimes and CUDA's (the device has its own, as new
        # or newer): CFITSIO and what it links (curl, TLS) are not on the device image.
        case "$name" in
          libc.so* | libm.so* | libdl.so* | libpthread.so* | librt.so* | libresolv.so* | \
            libstdc++* | libgcc_s* | libgomp* | libcuda*) ;;
          *) cp -L "$path" "$dst/lib/$name" ;;
        esac
      done
    done
    du -sh "$dst"
    ;;
  run)
    shift
    export LD_LIBRARY_PATH="$dst/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
    for exe in "$dst"/tst_*; do
      echo "== $(basename "$exe")"
      timeout 300 "$exe" "$@" 2>&1 | grep -vE "^\[ +(RUN|OK) +\]" | tail -n 40
      rc=${PIPESTATUS[0]}
      [ "$rc" = 0 ] || { echo "carried_tests: $(basename "$exe") failed (status $rc)"; exit "$rc"; }
    done
    ;;
  *) echo "usage: carried_tests.sh stage TARGET... | run [gtest arguments]" >&2; exit 2 ;;
esac
