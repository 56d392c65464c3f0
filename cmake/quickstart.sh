#!/usr/bin/env bash
# From a fresh Debian/Ubuntu clone to a working kspecter, in one command:
#
#   bash cmake/quickstart.sh run    # install what is missing, build, run the demo extraction
#   bash cmake/quickstart.sh test   # install what is missing, build, run every test
#   bash cmake/quickstart.sh sanitize  # every test again, built with ASan + UBSan (preset
#                                      # asan-ubsan, its own folder build-asan)
#
# Environment: KSPECTER_BUILD_DIR (default build), KSPECTER_ASAN_BUILD_DIR (default build-asan;
# its own variable so that test and sanitize never share a folder), KSPECTER_BUILD_JOBS
# (default nproc), KSPECTER_DEPS_CACHE (where Kokkos is cached, default ~/.cache/kspecter-deps).
set -euo pipefail
mode="${1:-run}"
case "$mode" in run|test|sanitize) ;;
  *) echo "usage: bash cmake/quickstart.sh run|test|sanitize" >&2; exit 2 ;; esac

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
if [ "$mode" = sanitize ]; then
  build="${KSPECTER_ASAN_BUILD_DIR:-$root/build-asan}"
else
  build="${KSPECTER_BUILD_DIR:-$root/build}"
fi
jobs="${KSPECTER_BUILD_JOBS:-$(nproc)}"
t0=$(date +%s)

# 1. Debian packages + Kokkos/Kokkos Kernels 3.4.01 (cached).
prefix="$(bash "$root/cmake/bootstrap-deps.sh" | sed -n 's/^KOKKOS_PREFIX=//p')"
[ -n "$prefix" ] || { echo "quickstart: the dependency bootstrap gave no Kokkos prefix" >&2; exit 1; }

# 2. Configure and build (sanitize: flags, build type and options from CMakePresets.json).
if [ "$mode" = sanitize ]; then
  (cd "$root" && cmake --preset asan-ubsan -B "$build" -DCMAKE_PREFIX_PATH="$prefix" >/dev/null)
else
  # The Python package too (its pytest suite is one of the tests), for Debian's python3; for
  # this machine's CPU, since it builds and runs here (KSPECTER_NATIVE).
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$prefix" \
    -DKSPECTER_ENABLE_PYTHON=ON -DKSPECTER_NATIVE=ON >/dev/null
fi
cmake --build "$build" -j "$jobs"
echo "quickstart: built in $(( $(date +%s) - t0 )) s"

kspecter="$build/src/cli/kspecter"
export OMP_PROC_BIND=false OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
if [ "$mode" != run ]; then
  # 3a. Every test of every enabled backend (sanitize: the tests' ASAN_OPTIONS, UBSAN_OPTIONS
  # and LSan suppressions come from cmake/kspecter_testing.cmake).
  cd "$build"
  ctest --output-on-failure -j "$jobs" --timeout 900
else
  # 3b. The main job: describe the build, then the demo.
  "$kspecter" info
  bash "$root/perf/demo.sh" "$kspecter" "$build/demo"
fi
echo "quickstart: $mode finished in $(( $(date +%s) - t0 )) s"
