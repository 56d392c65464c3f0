#!/usr/bin/env bash
# Compile-only check of kspecter for AMD GPUs (Kokkos' HIP backend) with Debian's hipcc; run by
# hand (no AMD GPU is needed, none is used):
#
#   bash cmake/hip-compile-check.sh [--kokkos-src DIR | --kokkos-prefix DIR] [--build DIR]
#
# Builds a HIP Kokkos with cmake/bootstrap-deps.sh --backend hip (the Trilinos 3.4.01 Kokkos by
# default, which targets up to gfx908; --kokkos-src with a Kokkos 4.x tree for gfx90a, the
# MI250X; KSPECTER_HIP_ARCH picks another Kokkos_ARCH_), or takes the HIP Kokkos installed in
# --kokkos-prefix, then compiles the kspecter library and command-line tool with hipcc into
# DIR (default build-hip) and prints the times. Not part of CI (README, "GPUs").
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="$root/build-hip"
boot=(--backend hip)
while [ $# -gt 0 ]; do
  case "$1" in
    --kokkos-src|--kokkos-prefix) boot+=("$1" "$2"); shift 2 ;;
    --build) build="$2"; shift 2 ;;
    -h|--help) sed -n '2,11p' "$0"; exit 0 ;;
    *) echo "hip-compile-check: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
t0=$SECONDS
prefix="$(bash "$root/cmake/bootstrap-deps.sh" "${boot[@]}" | sed -n 's/^KOKKOS_PREFIX=//p')"
[ -n "$prefix" ] || { echo "hip-compile-check: no HIP Kokkos" >&2; exit 1; }
echo "hip-compile-check: HIP Kokkos in $prefix ($((SECONDS - t0)) s)"
t1=$SECONDS
# rocm_agent_enumerator (asked by hipcc when no GPU architecture is given) looks for a GPU and
# prints a traceback when there is none; Kokkos gives hipcc the architecture, so it is noise.
mkdir -p "$build"  # the configure log goes inside it, never beside it in the checkout
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_COMPILER=hipcc \
  -DCMAKE_PREFIX_PATH="$prefix" -DKSPECTER_ENABLE_TESTS=OFF -DKSPECTER_ENABLE_BENCHMARKS=OFF \
  -DKSPECTER_ENABLE_MPI=OFF -DKSPECTER_ENABLE_HDF5=OFF >"$build/configure.log" 2>&1 \
  || { grep -v 'kfd\|^  File\|^    \|^Traceback\|^FileNotFound' "$build/configure.log" | tail -n 30 >&2; exit 1; }
cmake --build "$build" --target kspecter kspecter_cli -j "${KSPECTER_BUILD_JOBS:-$(nproc)}"
echo "hip-compile-check: kspecter compiled for HIP in $((SECONDS - t1)) s (Kokkos: $((t1 - t0)) s)"
