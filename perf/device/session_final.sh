#!/usr/bin/env bash
# The closing numbers of issues 11, 12 and 14 in two device calls on one warm machine, with
# the CUDA build made there (16 cores) from this tree. The CPU here is then left to the CI run
# that gates landing; `perf/gpu_run.sh prepare` (built here, carried as .gpu) is the usual way.
#
# Here, once:
#   bash perf/device/python_cupy.sh stage            # .gpu-python: CUDA Kokkos, CFITSIO, ERFA
#   rm -rf .gpu-specter && mkdir .gpu-specter &&
#     git --git-dir=<gpu_specter mirror> archive HEAD py | tar -x -C .gpu-specter &&
#     /usr/bin/python3 perf/gpu_specter_inputs.py --gpu-specter .gpu-specter/py \
#       --psf ../shared/data/psf-r0-00067784.fits -o .gpu-specter/psf-r0.npz &&
#     cp ../shared/data/psf-r0-00067784.fits .gpu-specter/
# Device calls (carry [".gpu-python", ".gpu-specter"], timeout_s 600):
#   bash perf/device/session_final.sh one   # build; pytest with cupy (issue 12); final_run.sh
#                                           # (issue 14) with gpu_specter beside it
#   bash perf/device/session_final.sh two   # desi_io_gz.sh (issue 11), on the same build
#   bash perf/device/session_final.sh pygz N  # build, pytest with cupy, desi_io_gz.sh N frames
set -uo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd -P)"
b="$here/build-device-py"
export KSPECTER_BDIR="$b" KSPECTER_CLI="$b/src/cli/kspecter" KSPECTER_ROOT="$here"
export KSPECTER_PSF="$here/.gpu-specter/psf-r0-00067784.fits" KSPECTER_TEST_DATA="$here/.gpu-specter"
export OUT="${OUT:-$here/gpu-out}"
mkdir -p "$OUT"
# The build's libraries (CFITSIO, ERFA) as python_cupy.sh links them.
export LD_LIBRARY_PATH="/tmp/kspecter-kokkos-cuda/lib-use${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
case "${1:-}" in
  one)
    # The device returns at most 8 files: each part's logs come back as one tar.
    rm -rf /tmp/py-out /tmp/final-out && mkdir -p /tmp/py-out /tmp/final-out
    OUT=/tmp/py-out KSPECTER_DEVICE_EXTRA_TARGETS="bench_extract bench_read_preproc" \
      bash "$here/perf/device/python_cupy.sh" run
    echo "python_cupy: exit $?"
    tar -C /tmp -cf "$OUT/python.tar" py-out
    [ -x "$KSPECTER_CLI" ] || exit 1
    OUT=/tmp/final-out timeout 420 bash "$here/perf/device/final_run.sh"
    echo "final_run: exit $?"
    tail -n 25 /tmp/final-out/gpu_specter.log
    tar -C /tmp -cf "$OUT/final.tar" final-out
    ;;
  pygz)
    rm -rf /tmp/py-out && mkdir -p /tmp/py-out
    OUT=/tmp/py-out KSPECTER_DEVICE_EXTRA_TARGETS="bench_extract bench_read_preproc" \
      bash "$here/perf/device/python_cupy.sh" run
    echo "python_cupy: exit $?"
    tar -C /tmp -cf "$OUT/python.tar" py-out
    [ -x "$KSPECTER_CLI" ] || exit 1
    timeout 400 bash "$here/perf/device/desi_io_gz.sh" "${2:-4}"
    echo "desi_io_gz: exit $?"
    ;;
  two)
    timeout 560 bash "$here/perf/device/desi_io_gz.sh" "${2:-4}"
    echo "desi_io_gz: exit $?"
    ;;
  *) sed -n '2,19p' "$0"; exit 2 ;;
esac
