#!/usr/bin/env bash
# The Python package on the GPU machine: kspecter.extract_frame with cupy arrays
# (__cuda_array_interface__, used on the device with no host round trip), in a CUDA build.
#
#   bash perf/device/python_cupy.sh stage   # here: carry what the device lacks in .gpu-python/
#   bash perf/device/python_cupy.sh run     # there, from the repository root
#
# Why the module is built there: the device's python3 (3.12, numpy 2, cupy, pybind11, pytest)
# is not this machine's (Debian's 3.11, numpy 1.24), and an extension module is built for one
# interpreter. The device has nvcc, CMake, ninja and pybind11 but no Kokkos, CFITSIO or ERFA.
#
# stage (here): copies into .gpu-python/ (ignored by git; about 8 MiB) the CUDA Kokkos install of
#   cmake/bootstrap-deps.sh --backend cuda (made if missing; the one `perf/gpu_run.sh prepare`
#   uses), CFITSIO's, ERFA's, ISA-L's and zlib's headers and shared libraries, and the libraries those need
#   beyond glibc (used there only where the device has none).
# run (there): configures and builds the targets _kspecter and kspecter_cli with nvcc_wrapper,
#   the device's python3 and pybind11 (MPI and HDF5 off: not needed here), in build-device-py/
#   (ignored, so a second call on a warm machine continues the build); then runs python/tests
#   with pytest (test_cupy.py is the point: cupy arrays in place, float32 and strided ones
#   converted on the device, a producer's stream waited for, the numpy frame bit for bit) and a
#   short timing of one bundle from numpy and from cupy arrays. Logs under $OUT (or
#   ./gpu-out); a summary is printed last.
#
# Device call (the device tool's `run`, carry [".gpu-python"], timeout_s 600):
#   bash perf/device/python_cupy.sh run
# KSPECTER_DEVICE_CMAKE_ARGS adds arguments to the first configure (say -DCMAKE_CXX_FLAGS=-lineinfo).
# KSPECTER_DEVICE_EXTRA_TARGETS (say "bench_extract bench_read_preproc") builds more targets
# of the same build for the scripts that follow in the call.
# A build that the limit cut short goes on with the same call on the warm machine.
# KSPECTER_DEVICE_SOURCE and KSPECTER_DEVICE_BUILD build another tree (say, an earlier commit's,
# for a before/after in one call) in another folder; KSPECTER_DEVICE_BUILD_ONLY=1 stops after
# the build (perf/device/before_after.sh).
set -uo pipefail

mode="${1:-}"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd -P)"
stage="$here/.gpu-python"
die() { echo "python_cupy: $*" >&2; exit 2; }

do_stage() {
  set -e
  local prefix
  prefix="$(bash "$here/cmake/bootstrap-deps.sh" --backend cuda --no-apt | sed -n 's/^KOKKOS_PREFIX=//p' | tail -n1)"
  [ -n "$prefix" ] && [ -d "$prefix/lib/cmake/Kokkos" ] || die "no CUDA Kokkos install (bootstrap-deps.sh --backend cuda)"
  rm -rf "$stage"; mkdir -p "$stage/include" "$stage/lib" "$stage/closure"
  (cd "$prefix" && tar cf - bin include lib) | xz -T0 -6 > "$stage/kokkos.tar.xz"
  echo "$prefix" > "$stage/kokkos-prefix.txt"
  local h
  # fitsio2.h: CFITSIO's own, for tests/io/tst_rice_tiles against its decoder
  for h in fitsio.h fitsio2.h drvrsmem.h longnam.h erfa.h erfam.h erfaextra.h erfadatextra.h zlib.h zconf.h isa-l.h; do
    cp -L "/usr/include/$h" "$stage/include/"
  done
  cp -rL /usr/include/isa-l "$stage/include/"
  local multiarch; multiarch="$(gcc -print-multiarch)"
  local libdir="/usr/lib/$multiarch" name path
  # Plain files under their run-time names (sonames); the link-time names are made there.
  for name in libcfitsio.so liberfa.so libisal.so; do
    cp -L "$libdir/$(objdump -p "$libdir/$name" | awk '/SONAME/ {print $2}')" "$stage/lib/"
  done
  # zlib: the device has libz.so.1 (used at run time); only the name to link with travels.
  mkdir -p "$stage/link"
  cp -L "$libdir/libz.so" "$stage/link/libz.so"
  # What CFITSIO needs (curl, TLS, compression): carried, used only where the device lacks it.
  local skip='^(linux-vdso|ld-linux|libc\.|libm\.|libdl\.|libpthread\.|librt\.|libresolv\.|libutil\.|libgcc_s\.|libstdc\+\+\.)'
  ldd "$libdir/libcfitsio.so" "$libdir/liberfa.so" | awk '/=> \// {print $1, $3}' | sort -u |
  while read -r name path; do
    [[ "$name" =~ $skip ]] && continue
    cp -L "$path" "$stage/closure/$name"
  done
  (cd "$stage" && tar cf - closure | xz -T0 -6 > closure.tar.xz && rm -rf closure)
  cp "$0" "$stage/"
  echo "python_cupy: staged in $stage: $(du -sh "$stage" | cut -f1) (carry [\".gpu-python\"])"
}

do_run() {
  local t0=$SECONDS
  [ -f "$stage/kokkos.tar.xz" ] || die "no $stage/kokkos.tar.xz: run 'perf/device/python_cupy.sh stage' here and carry .gpu-python"
  local out="${OUT:-$here/gpu-out}"; mkdir -p "$out"
  local summary="$out/python-summary.txt"; : > "$summary"
  note() { echo "[$((SECONDS - t0)) s] $*"; }
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 KOKKOS_DISABLE_WARNINGS=1

  # Kokkos where the device has room; its CMake files name the prefix it was built in.
  local kokkos=/tmp/kspecter-kokkos-cuda
  if [ ! -f "$kokkos/.ready" ]; then
    rm -rf "$kokkos"; mkdir -p "$kokkos"
    tar xJf "$stage/kokkos.tar.xz" -C "$kokkos"
    local old; old="$(cat "$stage/kokkos-prefix.txt")"
    grep -rlIF "$old" "$kokkos" | xargs -r sed -i "s|$old|$kokkos|g"
    mkdir -p "$kokkos/closure" && tar xJf "$stage/closure.tar.xz" -C "$kokkos"
    touch "$kokkos/.ready"
  fi
  # Kokkos' CMake files name the CUDA libraries where this machine's toolkit keeps them
  # (lib/ here, lib64/ on Ubuntu's layout).
  if [ ! -d /usr/local/cuda/lib ] && [ -d /usr/local/cuda/lib64 ]; then
    grep -rlF /usr/local/cuda/lib/ "$kokkos/lib/cmake" | xargs -r sed -i 's|/usr/local/cuda/lib/|/usr/local/cuda/lib64/|g'
  fi
  # Carried libraries only for what the device cannot resolve itself.
  mkdir -p "$kokkos/lib-use"
  local so
  for so in "$stage/lib/"*; do
    cp "$so" "$kokkos/lib-use/"
    ln -sfn "$(basename "$so")" "$kokkos/lib-use/$(basename "$so" | sed 's/\.so\..*/.so/')"
  done
  local i m added
  for i in 1 2 3 4; do
    added=0
    for m in $(LD_LIBRARY_PATH="$kokkos/lib-use" ldd "$kokkos/lib-use/libcfitsio.so" | awk '/not found/ {print $1}'); do
      [ -f "$kokkos/closure/$m" ] && [ ! -e "$kokkos/lib-use/$m" ] && ln -s "../closure/$m" "$kokkos/lib-use/$m" && added=1
    done
    [ "$added" = 1 ] || break
  done
  export LD_LIBRARY_PATH="$kokkos/lib-use${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  command -v nvcc >/dev/null || export PATH="/usr/local/cuda/bin:$PATH"

  local py; py="$(command -v python3)"
  {
    echo "== gpu"; nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
    echo "== python"; "$py" -c 'import sys, numpy, cupy, pybind11; print(sys.version.split()[0], "numpy", numpy.__version__, "cupy", cupy.__version__, "pybind11", pybind11.__version__)'
    echo "== nvcc"; nvcc --version | tail -n2 | head -n1; g++ --version | head -n1
    echo "== carried libraries used: $(ls "$kokkos/lib-use" | tr '\n' ' ')"
  } > "$out/python-system.txt" 2>&1
  cat "$out/python-system.txt"

  # ---- build (continued where a previous call stopped)
  local b="${KSPECTER_DEVICE_BUILD:-$here/build-device-py}" build_rc
  local src="${KSPECTER_DEVICE_SOURCE:-$here}"
  note "configure + build in $b"
  {
    if [ ! -f "$b/build.ninja" ]; then
      cmake -S "$src" -B "$b" -G Ninja -DCMAKE_BUILD_TYPE=Release \
        -DCMAKE_PREFIX_PATH="$kokkos" -DCMAKE_CXX_COMPILER="$kokkos/bin/nvcc_wrapper" \
        -DKSPECTER_ENABLE_PYTHON=ON -DKSPECTER_ENABLE_MPI=OFF -DKSPECTER_ENABLE_HDF5=OFF \
        -DKSPECTER_ENABLE_TESTS=OFF -DKSPECTER_ENABLE_BENCHMARKS=ON \
        -DPython3_EXECUTABLE="$py" -Dpybind11_DIR="$("$py" -m pybind11 --cmakedir)" \
        -DCFITSIO_INCLUDE_DIR="$stage/include" -DCFITSIO_LIBRARY="$kokkos/lib-use/libcfitsio.so" \
        -DERFA_INCLUDE_DIR="$stage/include" -DERFA_LIBRARY="$kokkos/lib-use/liberfa.so" \
        -DZLIB_INCLUDE_DIR="$stage/include" -DZLIB_LIBRARY="$stage/link/libz.so" \
        -DISAL_INCLUDE_DIR="$stage/include" -DISAL_LIBRARY="$kokkos/lib-use/libisal.so" \
        ${KSPECTER_DEVICE_CMAKE_ARGS:-}
    fi &&
    timeout --kill-after=10 $((520 - (SECONDS - t0))) cmake --build "$b" -j "$(nproc)" --target _kspecter kspecter_cli ${KSPECTER_DEVICE_EXTRA_TARGETS:-}
  } > "$out/python-build.log" 2>&1
  build_rc=$?
  tail -n 15 "$out/python-build.log"
  if [ "$build_rc" != 0 ]; then
    echo "build: exit $build_rc after $((SECONDS - t0)) s (124: cut at the time limit; call again to go on)" | tee -a "$summary"
    return 1
  fi
  echo "build: done after $((SECONDS - t0)) s" >> "$summary"
  [ "${KSPECTER_DEVICE_BUILD_ONLY:-0}" = 1 ] && return 0

  # ---- tests
  export PYTHONPATH="$b/python" KSPECTER_CLI="$b/src/cli/kspecter" PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1
  note "pytest"
  # test_mpi.py needs a module built with MPI (off here: the device's Open MPI headers are not
  # relied on); the CPU CI runs it.
  timeout 240 "$py" -m pytest -v -rs -p no:cacheprovider --ignore="$here/python/tests/test_mpi.py" \
    "$here/python/tests" > "$out/python-pytest.log" 2>&1
  local pytest_rc=$?
  tail -n 45 "$out/python-pytest.log"
  echo "pytest: exit $pytest_rc; $(grep -E '(passed|failed|error)' "$out/python-pytest.log" | tail -n1)" >> "$summary"
  grep -E '^python/.*test_cupy.py|test_cupy.py::' "$out/python-pytest.log" | sed 's/^/  /' >> "$summary"

  # ---- timing: one bundle of a full-size synthetic PSF from numpy and from cupy arrays
  if [ $((SECONDS - t0)) -lt 540 ]; then
    note "timing"
    timeout 60 "$py" - "$KSPECTER_CLI" > "$out/python-timing.log" 2>&1 <<'EOF'
import os, subprocess, sys, tempfile, time
import cupy as cp
import kspecter
cli = sys.argv[1]
d = tempfile.mkdtemp()
psf, img = os.path.join(d, "psf.fits"), os.path.join(d, "img.fits")
grid = "5760,7620,0.8"
subprocess.run([cli, "make-psf", "-o", psf, "--log-level", "quiet"], check=True)
subprocess.run([cli, "simulate", "-p", psf, "-o", img, "-n", "25", "-w", grid, "--seed", "1",
                "--log-level", "quiet"], check=True)
host = kspecter.read_image(img)
dev = {"image": cp.asarray(host["image"]), "ivar": cp.asarray(host["ivar"])}
p = kspecter.read_psf(psf)
for name, arrays in (("numpy", host), ("cupy", dev), ("numpy", host), ("cupy", dev)):
    timing = {}
    t = time.perf_counter()
    r = kspecter.extract_frame(arrays, p, 25, 0, 25, grid, nsubbundles=5, gpu=True, timing=timing)
    dt = time.perf_counter() - t
    up = timing.get("kspecter::extract::upload", 0.0)
    print(f"{name:5s} one bundle (25 x {r['specflux'].shape[1]}): call {dt:.3f} s, upload {up:.4f} s")
EOF
    cat "$out/python-timing.log"
    grep -E '^(numpy|cupy)' "$out/python-timing.log" | tail -n 2 | sed 's/^/timing: /' >> "$summary"
  fi
  echo "================ kspecter Python on the GPU: summary"; cat "$summary"
  echo "wall: $((SECONDS - t0)) s; logs in $out"
  [ "$pytest_rc" = 0 ]
}

case "$mode" in
  stage) do_stage ;;
  run) do_run ;;
  *) sed -n '2,27p' "$0"; exit 2 ;;
esac
