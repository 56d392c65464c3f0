#!/usr/bin/env bash
# Installs what kspecter needs on a Debian/Ubuntu machine and provides a Kokkos (+ Kokkos
# Kernels) to build against, cached outside the build tree:
#
#   cmake/bootstrap-deps.sh [--backend openmp|cuda|hip] [--cache DIR] [--no-apt]
#                           [--kokkos-src DIR [--kernels-src DIR] [--cxx-standard 17|20]]
#                           [--kokkos-prefix DIR]
#
# Default: Kokkos + Kokkos Kernels 3.4.01 from the Trilinos 13.2 Debian source package (kspecter
# does not need Kokkos Kernels; perf/bench_kernels, which compares it with kspecter, does).
# --kokkos-src DIR: build the Kokkos source tree DIR instead (a kokkos/kokkos checkout or
#   release tarball, any version from 3.4), with Kokkos Kernels from --kernels-src DIR when
#   given, in C++ --cxx-standard (default 17, 20 for Kokkos 5).
# --kokkos-prefix DIR: use the Kokkos already installed in DIR (checked, not built).
# Prints the Kokkos install prefix as its last line ("KOKKOS_PREFIX=...").  Idempotent: a
# finished cache entry is reused; an unfinished one never exists, because each build goes
# into a temporary folder that is renamed only when it is complete.
set -euo pipefail

backend=openmp
cache="${KSPECTER_DEPS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kspecter-deps}"
do_apt=1
cuda_arch="${KSPECTER_CUDA_ARCH:-HOPPER90}"
jobs="${KSPECTER_BUILD_JOBS:-$(nproc)}"
kokkos_src="" kernels_src="" kokkos_prefix="" cxx_std=""
while [ $# -gt 0 ]; do
  case "$1" in
    --backend) backend="$2"; shift 2 ;;
    --cache) cache="$2"; shift 2 ;;
    --no-apt) do_apt=0; shift ;;
    --kokkos-src) kokkos_src="$(cd "$2" && pwd -P)"; shift 2 ;;
    --kernels-src) kernels_src="$(cd "$2" && pwd -P)"; shift 2 ;;
    --kokkos-prefix) kokkos_prefix="$(cd "$2" && pwd -P)"; shift 2 ;;
    --cxx-standard) cxx_std="$2"; shift 2 ;;
    -h|--help) sed -n '2,17p' "$0"; exit 0 ;;
    *) echo "bootstrap-deps: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
case "$backend" in openmp|cuda|hip) ;; *) echo "bootstrap-deps: backend must be openmp, cuda or hip, not '$backend'" >&2; exit 2 ;; esac
case "$cxx_std" in ""|17|20|23) ;; *) echo "bootstrap-deps: --cxx-standard must be 17, 20 or 23, not '$cxx_std'" >&2; exit 2 ;; esac
if [ -n "$kokkos_prefix" ] && [ -n "$kokkos_src$kernels_src$cxx_std" ]; then
  echo "bootstrap-deps: --kokkos-prefix uses an install as it is: no --kokkos-src, --kernels-src or --cxx-standard with it" >&2; exit 2
fi
if [ -n "$kernels_src" ] && [ -z "$kokkos_src" ]; then
  echo "bootstrap-deps: --kernels-src needs --kokkos-src (the default build has its own Kokkos Kernels)" >&2; exit 2
fi

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
kokkos_version=3.4.01
trilinos_pkg=13.2.0-4
step="start"
scratch=()   # temporary folders; removed on any exit, so a failure leaves no half-written cache
cleanup() { for d in "${scratch[@]}"; do rm -rf "$d"; done; }
trap cleanup EXIT
trap 'echo "bootstrap-deps: FAILED in step: $step (exit $?)" >&2' ERR

log() { echo "bootstrap-deps: $*" >&2; }
sudo_() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }

# ---------------------------------------------------------------- Debian packages
packages=(build-essential cmake ninja-build pkg-config dpkg-dev libcfitsio-dev liberfa-dev
          libhdf5-openmpi-dev libopenmpi-dev openmpi-bin libgtest-dev libgmock-dev libbenchmark-dev
          zlib1g-dev libisal-dev
          # the Python package (python/, KSPECTER_ENABLE_PYTHON) and its tests; pip install .
          # with setuptools (no build isolation); astropy reads FITS independently in the tests
          python3-dev pybind11-dev python3-pybind11 python3-numpy python3-pytest python3-mpi4py
          python3-setuptools python3-wheel python3-pip python3-venv python3-astropy python3-fitsio
          python3-matplotlib)
if [ "$backend" = hip ]; then packages+=(hipcc); fi
if [ "$do_apt" = 1 ]; then
  step="install Debian packages"
  missing=()
  for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  if [ ${#missing[@]} -gt 0 ]; then
    log "installing: ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    sudo_ apt-get update -qq
    sudo_ apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  fi
fi

# ---------------------------------------------------------------- an install of the user's
if [ -n "$kokkos_prefix" ]; then
  step="check the Kokkos install in $kokkos_prefix"
  cfg="$(ls -d "$kokkos_prefix"/lib*/cmake/Kokkos 2>/dev/null | head -n1 || true)"
  if [ -z "$cfg" ] || [ ! -f "$cfg/KokkosConfig.cmake" ]; then
    log "$kokkos_prefix holds no Kokkos install (no lib*/cmake/Kokkos/KokkosConfig.cmake)"; exit 1
  fi
  version="$(sed -n 's/^set(PACKAGE_VERSION "\([^"]*\)")/\1/p' "$cfg/KokkosConfigVersion.cmake" | head -n1)"
  devices="$(sed -n 's/^set(Kokkos_DEVICES \([^)]*\))/\1/Ip' "$cfg/KokkosConfigCommon.cmake" | head -n1)"
  case ";$devices;" in
    *";$(echo "$backend" | tr '[:lower:]' '[:upper:]');"*) ;;
    *) log "Kokkos $version in $kokkos_prefix has the backends $devices, not $backend"; exit 1 ;;
  esac
  kernels=no
  ls "$kokkos_prefix"/lib*/cmake/KokkosKernels/KokkosKernelsConfig.cmake >/dev/null 2>&1 && kernels=yes
  log "using Kokkos $version ($devices) in $kokkos_prefix; Kokkos Kernels there: $kernels"
  trap - ERR
  echo "KOKKOS_PREFIX=$kokkos_prefix"
  exit 0
fi

# ---------------------------------------------------------------- the cache entry
if [ -n "$kokkos_src" ]; then
  step="read the Kokkos version of $kokkos_src"
  kv() { { sed -n "s/^ *set(Kokkos_VERSION_$1 \([0-9]*\))/\1/Ip" "$kokkos_src/CMakeLists.txt" 2>/dev/null || true; } | head -n1; }
  kokkos_version="$(kv MAJOR).$(kv MINOR).$(kv PATCH)"
  if [ "$kokkos_version" = ".." ]; then
    log "$kokkos_src is not a Kokkos source tree (its CMakeLists.txt sets no Kokkos_VERSION_MAJOR)"; exit 1
  fi
  # Kokkos 5 requires C++20; earlier versions default to 17.
  [ -n "$cxx_std" ] || { if [ "${kokkos_version%%.*}" -ge 5 ]; then cxx_std=20; else cxx_std=17; fi; }
  # One entry per source tree (path) and standard; delete it to rebuild a changed tree.
  tree_id="$(printf '%s\n%s\n' "$kokkos_src" "$kernels_src" | sha256sum | cut -c1-8)"
  prefix="$cache/kokkos-$kokkos_version-$backend-cxx$cxx_std-$tree_id"
else
  cxx_std=17
  prefix="$cache/kokkos-$kokkos_version-$backend"
fi
[ "$backend" != hip ] || prefix="$prefix-${KSPECTER_HIP_ARCH:-default-arch}"
# A CUDA build carries our patches (for 3.4.01): an entry built with other patches is built again.
patch_sum=none
if [ "$backend" = cuda ]; then
  # (no patch for this version: the sum of nothing)
  patch_sum="$({ cat "$here"/patches/kokkos*-"$kokkos_version"-*.patch 2>/dev/null || true; } | sha256sum | cut -c1-16)"
fi
if [ -f "$prefix/.complete" ] && [ "$(cat "$prefix/.patches" 2>/dev/null || echo none)" != "$patch_sum" ]; then
  log "$prefix was built with other patches: building it again"
elif [ -f "$prefix/.complete" ]; then
  log "reusing $prefix"
  echo "KOKKOS_PREFIX=$prefix"
  exit 0
fi
mkdir -p "$cache"

# ---------------------------------------------------------------- Trilinos source
src="$cache/trilinos-src-$trilinos_pkg"
if [ -z "$kokkos_src" ] && [ ! -f "$src/.complete" ]; then
  step="enable deb-src"
  if ! apt-get source --print-uris "trilinos=$trilinos_pkg" >/dev/null 2>&1; then
    # Turn on source entries for the sources already configured; no host is named here.
    if [ -f /etc/apt/sources.list.d/debian.sources ] && ! grep -q 'deb-src' /etc/apt/sources.list.d/debian.sources; then
      sudo_ sed -i 's/^Types: deb$/Types: deb deb-src/' /etc/apt/sources.list.d/debian.sources
    fi
    if [ -f /etc/apt/sources.list ] && grep -q '^deb ' /etc/apt/sources.list && ! grep -q '^deb-src ' /etc/apt/sources.list; then
      grep '^deb ' /etc/apt/sources.list | sed 's/^deb /deb-src /' | sudo_ tee -a /etc/apt/sources.list >/dev/null
    fi
    sudo_ apt-get update -qq
  fi
  step="apt-get source trilinos=$trilinos_pkg"
  tmp="$(mktemp -d "$cache/.trilinos.XXXXXX")"; scratch+=("$tmp")
  log "fetching the Trilinos $trilinos_pkg source package (Kokkos $kokkos_version inside)"
  (cd "$tmp" && apt-get source -qq --download-only "trilinos=$trilinos_pkg" >/dev/null)
  step="unpack Kokkos and Kokkos Kernels from the Trilinos tarball"
  orig="$(ls "$tmp"/trilinos_*.orig.tar.* | head -n1)"
  top="$(tar tf "$orig" 2>/dev/null | head -n1 | cut -d/ -f1 || true)"
  tar xf "$orig" -C "$tmp" "$top/packages/kokkos" "$top/packages/kokkos-kernels"
  mkdir -p "$tmp/out"
  mv "$tmp/$top/packages/kokkos" "$tmp/$top/packages/kokkos-kernels" "$tmp/out/"
  touch "$tmp/out/.complete"
  rm -rf "$src"; mv "$tmp/out" "$src"
fi

# ---------------------------------------------------------------- build
if [ -z "$kokkos_src" ]; then kokkos_src="$src/kokkos" kernels_src="$src/kokkos-kernels"; fi
step="prepare build folders"
work="$(mktemp -d "$cache/.build-$backend.XXXXXX")"; scratch+=("$work")
# Copies, so that the patches never touch the sources (the user's tree included).
cp -r "$kokkos_src" "$work/kokkos"
[ -z "$kernels_src" ] || cp -r "$kernels_src" "$work/kokkos-kernels"
stage="$work/install"
kokkos_flags=(-DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX="$stage" -DCMAKE_CXX_STANDARD="$cxx_std"
              -DKokkos_ENABLE_SERIAL=ON -DKokkos_ENABLE_OPENMP=ON -DKokkos_ENABLE_TESTS=OFF
              -DBUILD_SHARED_LIBS=OFF -DCMAKE_POSITION_INDEPENDENT_CODE=ON)
if [ "$backend" = cuda ]; then
  step="find nvcc"
  # nvcc_wrapper calls the nvcc on PATH (or $CUDA_ROOT/bin/nvcc).
  if ! command -v nvcc >/dev/null 2>&1; then
    for d in "${CUDA_ROOT:-}" "${CUDA_HOME:-}" /usr/local/cuda; do
      if [ -n "$d" ] && [ -x "$d/bin/nvcc" ]; then export PATH="$d/bin:$PATH"; break; fi
    done
  fi
  command -v nvcc >/dev/null 2>&1 || { log "nvcc not found: put the CUDA toolkit's bin on PATH or set CUDA_ROOT"; false; }
  log "CUDA: $(nvcc --version | tail -n 2 | head -n 1), Kokkos_ARCH_${cuda_arch}"
  step="patch Kokkos $kokkos_version (nvcc 13, Hopper, team scratch)"
  for p in "$here"/patches/kokkos-"$kokkos_version"-*.patch; do
    [ -f "$p" ] || continue
    log "applying $(basename "$p")"
    (cd "$work/kokkos" && patch -p1 -s --no-backup-if-mismatch < "$p")
  done
  # nvcc_wrapper compiles for its default_arch when no -arch is given, as in CMake's compiler
  # checks (Kokkos' and every consumer's): sm_70 in Kokkos 4, which nvcc 13 no longer knows.
  # The copy builds for the architecture asked for (HOPPER90 -> sm_90).
  sed -i "s/^default_arch=\"sm_[0-9]*\"/default_arch=\"sm_${cuda_arch//[!0-9]/}\"/" "$work/kokkos/bin/nvcc_wrapper"
  kokkos_flags+=(-DKokkos_ENABLE_CUDA=ON -DKokkos_ENABLE_CUDA_CONSTEXPR=ON
                 -DKokkos_ARCH_${cuda_arch}=ON -DCMAKE_CXX_COMPILER="$work/kokkos/bin/nvcc_wrapper")
  # Device lambdas: an option before Kokkos 4, always on since.
  [ "${kokkos_version%%.*}" -ge 4 ] || kokkos_flags+=(-DKokkos_ENABLE_CUDA_LAMBDA=ON)
fi
if [ "${kokkos_version%%.*}" = 4 ]; then
  # As Spack builds it (kokkos ~deprecated_code): kspecter uses no deprecated Kokkos 4 API.
  kokkos_flags+=(-DKokkos_ENABLE_DEPRECATED_CODE_4=OFF)
fi
if [ "$backend" = hip ]; then
  # hipcc (Debian: apt-get install hipcc) with the Serial host backend; Kokkos Kernels is not
  # built. The GPU: KSPECTER_HIP_ARCH, a Kokkos_ARCH_ name (3.4 knows up to VEGA908, the MI100;
  # the MI250X is VEGA90A in 3.5-3.7 and AMD_GFX90A from 4.0).
  step="find hipcc"
  command -v hipcc >/dev/null 2>&1 || { log "hipcc not found (Debian: apt-get install hipcc)"; false; }
  if [ "${kokkos_version%%.*}" -ge 4 ]; then hip_arch="${KSPECTER_HIP_ARCH:-AMD_GFX90A}"; else hip_arch="${KSPECTER_HIP_ARCH:-VEGA908}"; fi
  log "HIP: $(hipcc --version 2>/dev/null | grep -m1 'HIP version'), Kokkos_ARCH_${hip_arch}"
  kokkos_flags=("${kokkos_flags[@]/-DKokkos_ENABLE_OPENMP=ON/-DKokkos_ENABLE_OPENMP=OFF}")
  kokkos_flags+=(-DKokkos_ENABLE_HIP=ON -DKokkos_ARCH_${hip_arch}=ON -DCMAKE_CXX_COMPILER=hipcc
                 -DKokkos_ENABLE_ROCTHRUST=OFF)
  kernels_src=""
fi
step="configure Kokkos"
cmake -S "$work/kokkos" -B "$work/kokkos-build" "${kokkos_flags[@]}" >"$work/kokkos-configure.log" 2>&1 \
  || { tail -n 30 "$work/kokkos-configure.log" >&2; false; }
step="build Kokkos"
cmake --build "$work/kokkos-build" -j "$jobs" >"$work/kokkos-build.log" 2>&1 \
  || { tail -n 40 "$work/kokkos-build.log" >&2; false; }
cmake --install "$work/kokkos-build" >/dev/null
if [ -n "$kernels_src" ]; then
  step="configure Kokkos Kernels"
  kk_cxx=()
  # cuBLAS/cuSPARSE would be linked into every consumer; the batched kernels don't need them.
  [ "$backend" = cuda ] && kk_cxx=(-DCMAKE_CXX_COMPILER="$stage/bin/nvcc_wrapper"
                                   -DKokkosKernels_ENABLE_TPL_CUBLAS=OFF -DKokkosKernels_ENABLE_TPL_CUSPARSE=OFF)
  if [ "$backend" = cuda ]; then
    for p in "$here"/patches/kokkos-kernels-"$kokkos_version"-*.patch; do
      [ -f "$p" ] || continue
      step="patch Kokkos Kernels with $(basename "$p")"
      (cd "$work/kokkos-kernels" && patch -p1 -s --no-backup-if-mismatch < "$p")
    done
  fi
  cmake -S "$work/kokkos-kernels" -B "$work/kk-build" -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_INSTALL_PREFIX="$stage" -DKokkos_ROOT="$stage" "${kk_cxx[@]}" \
    -DKokkosKernels_ENABLED_COMPONENTS=BATCHED -DKokkosKernels_INST_DOUBLE=OFF \
    -DKokkosKernels_ADD_DEFAULT_ETI=OFF -DKokkosKernels_ENABLE_TESTS=OFF \
    -DBUILD_SHARED_LIBS=OFF >"$work/kk-configure.log" 2>&1 \
    || { tail -n 30 "$work/kk-configure.log" >&2; false; }
  step="build Kokkos Kernels"
  cmake --build "$work/kk-build" -j "$jobs" >"$work/kk-build.log" 2>&1 \
    || { tail -n 40 "$work/kk-build.log" >&2; false; }
  cmake --install "$work/kk-build" >/dev/null
fi
step="publish the cache entry"
# The installed CMake configs name the staging folder; point them at the final prefix.
grep -rlF "$stage" "$stage"/lib*/cmake "$stage/bin" 2>/dev/null | xargs -r sed -i "s|$stage|$prefix|g"
# Kokkos records the compiler it was built with (for CUDA the wrapper in the scratch copy of the
# source); consumers that are not nvcc_wrapper get redirected to it, so name the installed one.
{ grep -rlF "$work/kokkos/bin/" "$stage"/lib*/cmake 2>/dev/null || true; } | xargs -r sed -i "s|$work/kokkos/bin/|$prefix/bin/|g"
[ "$patch_sum" = none ] || echo "$patch_sum" > "$stage/.patches"
touch "$stage/.complete"
rm -rf "$prefix"
mv "$stage" "$prefix"
trap - ERR
log "installed Kokkos $kokkos_version (C++$cxx_std)$([ -n "$kernels_src" ] && echo " + Kokkos Kernels") ($backend) in $prefix"
echo "KOKKOS_PREFIX=$prefix"
