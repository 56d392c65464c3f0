# Sourced by the device scripts that build kspecter trees on the device and time them
# (before_after.sh, kernel_profile.sh, memory_peak.sh, ...): the repository root, the output folder, the r0
# PSF, a timer, a tree's build and the logs' packing.
set -uo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd -P)"
out="${OUT:-$here/gpu-out}"
mkdir -p "$out"
psf="$here/.gpu-specter/psf-r0-00067784.fits"
t0=$SECONDS
note() { echo "[$((SECONDS - t0)) s] $*"; }

# device_build NAME SOURCE "TARGETS": python_cupy.sh builds the tree SOURCE into
# build-device-NAME with the extra TARGETS (log: $out/build-NAME.log); stops the script on a
# failure. Then the executables find the device's Kokkos.
device_build() {
  # A warm machine keeps build-device-*. A tree unpacked since by git archive keeps its
  # commit's file times, older than the build's, and ninja would not rebuild it (session 14,
  # call 7): such a build goes when its sources differ. This tree's edits are newer.
  local stamp=""
  if [ "$2" != "$here" ]; then
    stamp="$(cd "$2" && find CMakeLists.txt cmake include src perf -type f -print0 | sort -z |
      xargs -0 md5sum | md5sum | cut -c1-32)"
    [ "$(cat "$here/build-device-$1/.source-stamp" 2>/dev/null)" = "$stamp" ] ||
      rm -rf "$here/build-device-$1"
  fi
  OUT="/tmp/build-$1" KSPECTER_DEVICE_BUILD_ONLY=1 KSPECTER_DEVICE_SOURCE="$2" \
    KSPECTER_DEVICE_BUILD="$here/build-device-$1" KSPECTER_DEVICE_EXTRA_TARGETS="$3" \
    bash "$here/perf/device/python_cupy.sh" run > "$out/build-$1.log" 2>&1 ||
    { tail -n 30 "$out/build-$1.log"; exit 1; }
  [ -z "$stamp" ] || echo "$stamp" > "$here/build-device-$1/.source-stamp"
  case ":${LD_LIBRARY_PATH:-}:" in
    *:/tmp/kspecter-kokkos-cuda/lib-use:*) ;;
    *) export LD_LIBRARY_PATH="/tmp/kspecter-kokkos-cuda/lib-use${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" ;;
  esac
}

# The device returns few files: every log in one tar.
pack_logs() {
  (cd "$out" && tar czf /tmp/logs.tgz --exclude=logs.tgz . && mv /tmp/logs.tgz "$out/" &&
    find . -type f ! -name logs.tgz -delete)
}
