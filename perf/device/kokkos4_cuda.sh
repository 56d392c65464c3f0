#!/usr/bin/env bash
# Issue 38: kspecter on Kokkos 4.6.01 for CUDA, built the way Spack builds Kokkos (+cuda
# +wrapper, Hopper, no deprecated code) by cmake/bootstrap-deps.sh --kokkos-src, beside the
# patched Kokkos 3.4.01 build, everything built on the GPU machine from this tree in one call.
#
# Here, once (ignored folders; nothing of Kokkos or GoogleTest is committed):
#   bash perf/device/python_cupy.sh stage      # .gpu-python: Kokkos 3.4 CUDA, CFITSIO, ERFA, ISA-L
#   bash perf/device/kokkos4_cuda.sh stage [KOKKOS_GIT_DIR] [TAG]
#       # .gpu-k4: the Kokkos tag's source (default 4.6.01 of the kokkos/kokkos mirror) and
#       # Debian's GoogleTest source (/usr/src/googletest), which the device lacks
# Device call (kind nvidia-h100-x4 for its 64 cores; carry [".gpu-python", ".gpu-k4",
# ".gpu-specter"], timeout_s 600):
#   bash perf/device/kokkos4_cuda.sh run
# run: GoogleTest; Kokkos 4.6.01 through bootstrap-deps.sh; kspecter on it with its tests and
# benchmarks (build-k4/); kspecter on Kokkos 3.4 likewise (build-device-py/ as python_cupy.sh
# builds it); then every CUDA test of both builds, bench_extract of both
# on the full synthetic r frame, and the CLI of both (and OpenMP) on a simulated full r frame
# of the real r0 PSF (.gpu-specter), compared with `kspecter compare`. Logs under $OUT.
set -uo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd -P)"
stage="$here/.gpu-k4"

do_stage() {
  set -e
  local git_dir="${1:-/work/.mirror/kokkos+kokkos/repo}" tag="${2:-4.6.01}"
  rm -rf "$stage" && mkdir -p "$stage"
  git --git-dir="$git_dir" archive --prefix="kokkos-$tag/" "$tag" | xz -T0 -6 > "$stage/kokkos.tar.xz"
  echo "$tag" > "$stage/kokkos-tag.txt"
  tar -C /usr/src -cJf "$stage/googletest.tar.xz" googletest
  echo "kokkos4_cuda: staged $(du -sh "$stage" | cut -f1) in $stage"
}

do_run() {
  local t0=$SECONDS out="${OUT:-$here/gpu-out}" jobs; jobs="$(nproc)"
  mkdir -p "$out"
  note() { echo "[$((SECONDS - t0)) s] $*"; }
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 KOKKOS_DISABLE_WARNINGS=1
  command -v nvcc >/dev/null || export PATH="/usr/local/cuda/bin:$PATH"

  note "GoogleTest"
  rm -rf /tmp/googletest && tar xJf "$stage/googletest.tar.xz" -C /tmp
  { cmake -S /tmp/googletest -B /tmp/gtest-build -G Ninja -DCMAKE_BUILD_TYPE=Release \
      -DCMAKE_INSTALL_PREFIX=/tmp/gtest && cmake --build /tmp/gtest-build -j "$jobs" &&
      cmake --install /tmp/gtest-build; } > "$out/gtest.log" 2>&1 || { tail "$out/gtest.log"; return 1; }

  note "Kokkos $(cat "$stage/kokkos-tag.txt") for CUDA (bootstrap-deps.sh --kokkos-src)"
  rm -rf /tmp/kokkos-src && mkdir -p /tmp/kokkos-src && tar xJf "$stage/kokkos.tar.xz" -C /tmp/kokkos-src
  local k4
  k4="$(KSPECTER_BUILD_JOBS="$jobs" bash "$here/cmake/bootstrap-deps.sh" --backend cuda --no-apt \
        --kokkos-src /tmp/kokkos-src/kokkos-* 2> "$out/kokkos4.log" | sed -n 's/^KOKKOS_PREFIX=//p')"
  [ -n "$k4" ] || { tail -n 40 "$out/kokkos4.log"; return 1; }
  note "Kokkos 4 in $k4"

  note "kspecter on Kokkos 3.4 (everything, tests included; python_cupy.sh)"
  OUT=/tmp/k3-out KSPECTER_DEVICE_BUILD_ONLY=1 KSPECTER_DEVICE_EXTRA_TARGETS=all \
    KSPECTER_DEVICE_CMAKE_ARGS="-DKSPECTER_ENABLE_TESTS=ON -DGTest_DIR=/tmp/gtest/lib/cmake/GTest" \
    bash "$here/perf/device/python_cupy.sh" run > "$out/k3-build.log" 2>&1 ||
    { tail -n 30 "$out/k3-build.log"; return 1; }
  local k3b="$here/build-device-py" k4b="$here/build-k4" py="$here/.gpu-python"
  export LD_LIBRARY_PATH="/tmp/kspecter-kokkos-cuda/lib-use${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"

  note "kspecter on Kokkos 4 (everything, tests included)"
  {
    [ -f "$k4b/build.ninja" ] || cmake -S "$here" -B "$k4b" -G Ninja -DCMAKE_BUILD_TYPE=Release \
      -DCMAKE_PREFIX_PATH="$k4" -DCMAKE_CXX_COMPILER="$k4/bin/nvcc_wrapper" \
      -DKSPECTER_ENABLE_PYTHON=OFF -DKSPECTER_ENABLE_MPI=OFF -DKSPECTER_ENABLE_HDF5=OFF \
      -DKSPECTER_ENABLE_TESTS=ON -DKSPECTER_ENABLE_BENCHMARKS=ON -DGTest_DIR=/tmp/gtest/lib/cmake/GTest \
      -DPython3_EXECUTABLE="$(command -v python3)" \
      -DCFITSIO_INCLUDE_DIR="$py/include" -DCFITSIO_LIBRARY=/tmp/kspecter-kokkos-cuda/lib-use/libcfitsio.so \
      -DERFA_INCLUDE_DIR="$py/include" -DERFA_LIBRARY=/tmp/kspecter-kokkos-cuda/lib-use/liberfa.so \
      -DZLIB_INCLUDE_DIR="$py/include" -DZLIB_LIBRARY="$py/link/libz.so" \
      -DISAL_INCLUDE_DIR="$py/include" -DISAL_LIBRARY=/tmp/kspecter-kokkos-cuda/lib-use/libisal.so &&
    timeout $((560 - (SECONDS - t0))) cmake --build "$k4b" -j "$jobs" -- -k 0
  } > "$out/k4-build.log" 2>&1
  local rc=$?
  grep -E "error|FAILED" "$out/k4-build.log" | head -n 40
  [ "$rc" = 0 ] || { echo "k4 build: exit $rc after $((SECONDS - t0)) s"; tail -n 20 "$out/k4-build.log"; return 1; }

  local name
  for name in k3:"$k3b" k4:"$k4b"; do
    note "CUDA tests of the ${name%%:*} build"
    KSPECTER_TEST_DATA="$here/.gpu-specter" timeout 120 ctest --test-dir "${name#*:}" -L cuda -j 4 \
      --output-on-failure > "$out/${name%%:*}-ctest.log" 2>&1
    echo "${name%%:*} ctest -L cuda: exit $?; $(grep -E 'tests passed|tests failed' "$out/${name%%:*}-ctest.log")"
    grep -E "\*\*\*Failed|Not Run|Skipped" "$out/${name%%:*}-ctest.log" | head -n 20
  done

  note "bench_extract, full r frame (synthetic PSF), Kokkos 3.4 then 4.6"
  local b
  for b in "$k3b" "$k4b" "$k3b" "$k4b"; do
    echo "== $(basename "$b")"
    timeout 60 "$b/perf/bench_extract" --backend cuda --repeat 3 --stage-times 1 2>&1 | tail -n 24
  done > "$out/bench.log"
  cat "$out/bench.log"

  note "CLI on the real r0 PSF: Kokkos 3.4, 4.6 (CUDA) and OpenMP"
  local w=/tmp/k4-frames psf="$here/.gpu-specter/psf-r0-00067784.fits" grid=5760,7620,0.8
  mkdir -p "$w"
  "$k3b/src/cli/kspecter" simulate -p "$psf" -o "$w/pre.fits" -w "$grid" --seed 11 --log-level quiet
  for b in k3:"$k3b" k4:"$k4b" k3:"$k3b" k4:"$k4b"; do
    local s=$SECONDS
    "${b#*:}/src/cli/kspecter" extract -i "$w/pre.fits" -p "$psf" -o "$w/frame-${b%%:*}.fits" \
      -w "$grid" --no-truth --backend cuda 2>&1 | tail -n 1
    echo "${b%%:*} CLI wall $((SECONDS - s)) s"
  done
  OMP_PROC_BIND=false "$k4b/src/cli/kspecter" extract -i "$w/pre.fits" -p "$psf" \
    -o "$w/frame-omp.fits" -w "$grid" --no-truth --backend openmp 2>&1 | tail -n 1
  echo "== compare Kokkos 4.6 vs 3.4 (CUDA)"
  "$k4b/src/cli/kspecter" compare --max-pull 1e-6 "$w/frame-k4.fits" "$w/frame-k3.fits"
  echo "== compare Kokkos 3.4 CUDA vs OpenMP"
  "$k4b/src/cli/kspecter" compare --max-pull 1e-6 "$w/frame-k3.fits" "$w/frame-omp.fits"
  echo "== compare Kokkos 4.6 CUDA vs OpenMP"
  "$k4b/src/cli/kspecter" compare --max-pull 1e-6 "$w/frame-k4.fits" "$w/frame-omp.fits"
  "$k4b/src/cli/kspecter" info 2>&1 | head -n 4
  "$k3b/src/cli/kspecter" info 2>&1 | head -n 4
  note "done"
}

case "${1:-}" in
  stage) shift; do_stage "$@" ;;
  run) do_run ;;
  *) sed -n '2,20p' "$0"; exit 2 ;;
esac
