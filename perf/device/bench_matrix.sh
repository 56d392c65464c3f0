#!/usr/bin/env bash
# bench_extract on the full r frame (real r0 PSF, band solver, best of 3) for several trees and
# arguments, interleaved over rounds: each line of $KSPECTER_MATRIX is "TREE ARGS..." (TREE:
# after = this tree, before = .gpu-before, or any .gpu-NAME), run once a round, in order;
# $KSPECTER_ROUNDS rounds (default 3). Prints each run's wall time, frame digest and the stages
# setup/psf/windows/release; the full logs go to $OUT. Session 20 (the arena, the unfenced stages).
# Device call (carry [".gpu-python", ".gpu-specter", ".gpu-before"]):
#   KSPECTER_MATRIX=$'before\nafter --keep-buffers 1' bash perf/device/bench_matrix.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
matrix="${KSPECTER_MATRIX:-$'before\nafter'}"
declare -A built=()
while read -r tree _; do
  [ -n "$tree" ] && [ -z "${built[$tree]:-}" ] || continue
  src="$here"
  [ "$tree" = after ] || src="$here/.gpu-$tree"
  note "build $tree"
  device_build "$tree" "$src" bench_extract
  built[$tree]=1
done <<< "$matrix"
for r in $(seq 1 "${KSPECTER_ROUNDS:-3}"); do
  while read -r tree args; do
    [ -n "$tree" ] || continue
    echo "== round $r: $tree $args"
    timeout 100 "$here/build-device-$tree/perf/bench_extract" --psf "$psf" --repeat 3 \
      --solver band $args > "$out/run.log" 2>&1
    cat "$out/run.log" >> "$out/bench_matrix.log"
    grep -E "extract_frame wall|digest|::(setup|psf|windows|release) " "$out/run.log"
  done <<< "$matrix"
done
rm -f "$out/run.log"
note "done"
