#!/usr/bin/env bash
# Issue 38: kspecter on Kokkos 4 for CUDA (4.6.01 and the develop snapshot), each built the way
# Spack builds Kokkos (+cuda +wrapper, Hopper, no deprecated code) by cmake/bootstrap-deps.sh
# --kokkos-src, beside the patched Kokkos 3.4.01 build, everything built on the GPU machine from
# this tree.
#
# Here, once (ignored folders; nothing of Kokkos or GoogleTest is committed):
#   bash perf/device/python_cupy.sh stage      # .gpu-python: Kokkos 3.4 CUDA, CFITSIO, ERFA, ISA-L
#   bash perf/device/kokkos4_cuda.sh stage [KOKKOS_GIT_DIR [TAG...]]
#       # .gpu-k4: each tag's source (default 4.6.01 and develop of the kokkos/kokkos mirror)
#       # and Debian's GoogleTest source (/usr/src/googletest), which the device lacks
# Device calls (kind nvidia-h100-x4 for its 64 cores; carry [".gpu-python", ".gpu-k4",
# ".gpu-specter"], timeout_s 600), the second on the machine the first left warm:
#   bash perf/device/kokkos4_cuda.sh run build    # GoogleTest; kspecter on Kokkos 3.4 (build-
#                                                 # device-py/, as python_cupy.sh builds it);
#                                                 # each Kokkos 4 and kspecter on it (build-k4-TAG/)
#   bash perf/device/kokkos4_cuda.sh run measure  # every build's CUDA tests, bench_extract of
#                                                 # each on the full synthetic r frame (two rounds,
#                                                 # interleaved), the CLI of each and OpenMP's on a
#                                                 # simulated full r frame of the real r0 PSF
#                                                 # (.gpu-specter), compared with `kspecter compare`
# (`run all` does both in one call where the time allows.) Logs under $OUT.
set -uo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd -P)"
stage="$here/.gpu-k4"

do_stage() {
  set -e
  local git_dir="${1:-/work/.mirror/kokkos+kokkos/repo}" tag
  shift || true
  [ $# -gt 0 ] && tags=("$@") || tags=(4.6.01 develop)
  rm -rf "$stage" && mkdir -p "$stage"
  for tag in "${tags[@]}"; do
    git --git-dir="$git_dir" archive --prefix="kokkos-$tag/" "$tag" | xz -T0 -6 > "$stage/kokkos-$tag.tar.xz"
    echo "$tag $(git --git-dir="$git_dir" rev-parse --short "$tag^{commit}")" >> "$stage/kokkos-tags.txt"
  done
  tar -C /usr/src -cJf "$stage/googletest.tar.xz" googletest
  echo "kokkos4_cuda: staged $(du -sh "$stage" | cut -f1) in $stage"
}

# Kokkos `tag` for CUDA through bootstrap-deps.sh, and kspecter with its tests and benchmarks
# on it in build-k4-<tag>/. Prints the Kokkos prefix.
build_on_kokkos4() {
  local tag="$1" src k4 kb="$here/build-k4-$1" py="$here/.gpu-python"
  src="/tmp/kokkos-src-$tag"
  rm -rf "$src" && mkdir -p "$src" && tar xJf "$stage/kokkos-$tag.tar.xz" -C "$src"
  k4="$(KSPECTER_BUILD_JOBS="$jobs" bash "$here/cmake/bootstrap-deps.sh" --backend cuda --no-apt \
        --kokkos-src "$src/kokkos-$tag" 2> "$out/kokkos-$tag.log" | sed -n 's/^KOKKOS_PREFIX=//p')"
  [ -n "$k4" ] || { tail -n 40 "$out/kokkos-$tag.log" >&2; return 1; }
  note "Kokkos $tag in $k4" >&2
  {
    [ -f "$kb/build.ninja" ] || cmake -S "$here" -B "$kb" -G Ninja -DCMAKE_BUILD_TYPE=Release \
      -DCMAKE_PREFIX_PATH="$k4" -DCMAKE_CXX_COMPILER="$k4/bin/nvcc_wrapper" \
      -DKSPECTER_ENABLE_PYTHON=OFF -DKSPECTER_ENABLE_MPI=OFF -DKSPECTER_ENABLE_HDF5=OFF \
      -DKSPECTER_ENABLE_TESTS=ON -DKSPECTER_ENABLE_BENCHMARKS=ON -DGTest_DIR=/tmp/gtest/lib/cmake/GTest \
      -DPython3_EXECUTABLE="$(command -v python3)" \
      -DCFITSIO_INCLUDE_DIR="$py/include" -DCFITSIO_LIBRARY=/tmp/kspecter-kokkos-cuda/lib-use/libcfitsio.so \
      -DERFA_INCLUDE_DIR="$py/include" -DERFA_LIBRARY=/tmp/kspecter-kokkos-cuda/lib-use/liberfa.so \
      -DZLIB_INCLUDE_DIR="$py/include" -DZLIB_LIBRARY="$py/link/libz.so" \
      -DISAL_INCLUDE_DIR="$py/include" -DISAL_LIBRARY=/tmp/kspecter-kokkos-cuda/lib-use/libisal.so &&
    timeout $((570 - (SECONDS - t0))) cmake --build "$kb" -j "$jobs" -- -k 0
  } > "$out/k4-$tag-build.log" 2>&1
  local rc=$?
  grep -E "error|FAILED" "$out/k4-$tag-build.log" | head -n 40 >&2
  [ "$rc" = 0 ] || { echo "k4 $tag build: exit $rc after $((SECONDS - t0)) s" >&2; tail -n 20 "$out/k4-$tag-build.log" >&2; return 1; }
}

do_build() {
  note "GoogleTest"
  if [ ! -f /tmp/gtest/lib/cmake/GTest/GTestConfig.cmake ]; then
    rm -rf /tmp/googletest && tar xJf "$stage/googletest.tar.xz" -C /tmp
    { cmake -S /tmp/googletest -B /tmp/gtest-build -G Ninja -DCMAKE_BUILD_TYPE=Release \
        -DCMAKE_INSTALL_PREFIX=/tmp/gtest && cmake --build /tmp/gtest-build -j "$jobs" &&
        cmake --install /tmp/gtest-build; } > "$out/gtest.log" 2>&1 || { tail "$out/gtest.log"; return 1; }
  fi
  note "kspecter on Kokkos 3.4 (everything, tests included; python_cupy.sh)"
  OUT=/tmp/k3-out KSPECTER_DEVICE_BUILD_ONLY=1 KSPECTER_DEVICE_EXTRA_TARGETS=all \
    KSPECTER_DEVICE_CMAKE_ARGS="-DKSPECTER_ENABLE_TESTS=ON -DGTest_DIR=/tmp/gtest/lib/cmake/GTest" \
    bash "$here/perf/device/python_cupy.sh" run > "$out/k3-build.log" 2>&1 ||
    { tail -n 30 "$out/k3-build.log"; return 1; }
  local tag
  for tag in $(cut -d' ' -f1 "$stage/kokkos-tags.txt"); do
    note "Kokkos $tag for CUDA (bootstrap-deps.sh --kokkos-src), kspecter on it"
    build_on_kokkos4 "$tag" || return 1
  done
}

do_measure() {
  local k3b="$here/build-device-py" tag builds=() name
  builds=(k3:"$k3b")
  for tag in $(cut -d' ' -f1 "$stage/kokkos-tags.txt"); do builds+=("k4-$tag:$here/build-k4-$tag"); done
  note "builds: ${builds[*]} (Kokkos 4 sources: $(tr '\n' ';' < "$stage/kokkos-tags.txt"))"
  for name in "${builds[@]}"; do
    note "CUDA tests of the ${name%%:*} build"
    KSPECTER_TEST_DATA="$here/.gpu-specter" timeout 150 ctest --test-dir "${name#*:}" -L cuda -j 4 \
      --output-on-failure > "$out/${name%%:*}-ctest.log" 2>&1
    echo "${name%%:*} ctest -L cuda: exit $?; $(grep -E 'tests passed|tests failed' "$out/${name%%:*}-ctest.log")"
    grep -E "\*\*\*Failed|Not Run|Skipped" "$out/${name%%:*}-ctest.log" | head -n 20
  done

  note "bench_extract, full r frame (synthetic PSF), every build, two rounds"
  for round in 1 2; do
    for name in "${builds[@]}"; do
      echo "== ${name%%:*}, round $round"
      timeout 60 "${name#*:}/perf/bench_extract" --backend cuda --repeat 3 --stage-times 1 2>&1 | tail -n 24
    done
  done > "$out/bench.log"
  cat "$out/bench.log"

  note "CLI on the real r0 PSF: every build (CUDA) and OpenMP"
  local w=/tmp/k4-frames psf="$here/.gpu-specter/psf-r0-00067784.fits" grid=5760,7620,0.8
  mkdir -p "$w"
  "$k3b/src/cli/kspecter" simulate -p "$psf" -o "$w/pre.fits" -w "$grid" --seed 11 --log-level quiet
  for round in 1 2; do
    for name in "${builds[@]}"; do
      local s=$SECONDS
      "${name#*:}/src/cli/kspecter" extract -i "$w/pre.fits" -p "$psf" -o "$w/frame-${name%%:*}.fits" \
        -w "$grid" --no-truth --backend cuda 2>&1 | tail -n 1
      echo "${name%%:*} CLI wall $((SECONDS - s)) s"
    done
  done
  OMP_PROC_BIND=false "$k3b/src/cli/kspecter" extract -i "$w/pre.fits" -p "$psf" \
    -o "$w/frame-omp.fits" -w "$grid" --no-truth --backend openmp 2>&1 | tail -n 1
  for name in "${builds[@]}"; do
    [ "${name%%:*}" = k3 ] || {
      echo "== compare ${name%%:*} vs k3 (CUDA)"
      "$k3b/src/cli/kspecter" compare --max-pull 1e-6 "$w/frame-${name%%:*}.fits" "$w/frame-k3.fits"
    }
    echo "== compare ${name%%:*} CUDA vs OpenMP"
    "$k3b/src/cli/kspecter" compare --max-pull 1e-6 "$w/frame-${name%%:*}.fits" "$w/frame-omp.fits"
    "${name#*:}/src/cli/kspecter" info 2>&1 | head -n 4
  done
}

do_run() {
  t0=$SECONDS out="${OUT:-$here/gpu-out}" jobs="$(nproc)"
  mkdir -p "$out"
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 KOKKOS_DISABLE_WARNINGS=1
  command -v nvcc >/dev/null || export PATH="/usr/local/cuda/bin:$PATH"
  export LD_LIBRARY_PATH="/tmp/kspecter-kokkos-cuda/lib-use${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  case "$1" in
    build) do_build ;;
    measure) do_measure ;;
    all) do_build && do_measure ;;
  esac
  note "done"
}
note() { echo "[$((SECONDS - t0)) s] $*"; }

case "${1:-}" in
  stage) shift; do_stage "$@" ;;
  run) do_run "${2:-all}" ;;
  *) sed -n '2,20p' "$0"; exit 2 ;;
esac
