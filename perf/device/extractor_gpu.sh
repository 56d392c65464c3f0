#!/usr/bin/env bash
# Issue 41 on the GPU, one device call: the warm extractor on a full r frame (500 spectra x
# 2326 wavelengths, the real r0 PSF). Builds this tree (CLI, Python module, bench_extract) and,
# where .gpu-before holds one, an earlier tree (bench_extract) on the device; then
#   1. bench_extract of both trees, interleaved (per stage: what the decorrelation costs);
#   2. perf/extractor_loop.py on the full frame: 10 independent extract_frame calls against
#      one Extractor, the same weights, then a few hundred weights changed and a column's
#      stretch masked; frames compared bit for bit; from numpy arrays, then cupy arrays.
# Here:
#   bash perf/device/python_cupy.sh stage      # .gpu-python (once)
#   rm -rf .gpu-before && mkdir .gpu-before && git archive <before> | tar -x -C .gpu-before
# Device call (carry [".gpu-python", ".gpu-specter", ".gpu-before"], timeout_s 600):
#   bash perf/device/extractor_gpu.sh
# KSPECTER_BENCH_ROUNDS: bench_extract rounds (default 2; 0 leaves it out); KSPECTER_BENCH_ARGS:
# more arguments for them (say "--model 1 --budget 64": the Extractor's one batch, model made).
# KSPECTER_LOOP_MODES: the loops' modes, comma-separated (default "--gpu,--gpu --cupy"; ""
# leaves out the loops); KSPECTER_LOOP_TREES="after before" runs them with
# the earlier tree's module too (this tree's perf/extractor_loop.py). KSPECTER_DEVICE_TARGETS:
# more targets of this tree to build (say "bench_band", run after the script by the call).
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
nvidia-smi --query-gpu=name,memory.total,clocks.sm,clocks.max.sm,driver_version --format=csv
trees=after
[ -f "$here/.gpu-before/CMakeLists.txt" ] && trees="after before"
for tree in $trees; do
  src="$here"; [ "$tree" = before ] && src="$here/.gpu-before"
  note "build $tree"
  targets="bench_extract"; [ "$tree" = after ] && targets="bench_extract ${KSPECTER_DEVICE_TARGETS:-}"
  device_build "$tree" "$src" "$targets"
done

note "batching and the frame's bits: 4 batches (4 GiB) against 1 (64 GiB)"
for tree in $trees; do
  for g in 4 64; do
    echo "== $tree, budget $g GiB: $(timeout 100 "$here/build-device-$tree/perf/bench_extract" \
      --psf "$psf" --repeat 1 --warmup 0 --solver band --budget $g 2>&1 |
      grep -E 'frame digest|batch\(es\)|peak device' | sed 's/.*patches of//; s/.*frame digest.*: //; s/held by.*//' | tr '\n' ' ')"
  done
done

note "bench_extract"
{
  for k in $(seq 1 "${KSPECTER_BENCH_ROUNDS:-2}"); do
    for tree in $trees; do
      echo "== $tree, round $k"
      timeout 100 "$here/build-device-$tree/perf/bench_extract" --psf "$psf" --repeat 3 --solver band \
        ${KSPECTER_BENCH_ARGS:-}
    done
  done
} > "$out/bench_extract.log" 2>&1
grep -E "^==|extract_frame|batches|digest|^kspecter::extract::[a-z_]+ +[0-9]|^timeout" "$out/bench_extract.log"

export KSPECTER_CLI="$here/build-device-after/src/cli/kspecter"
note "pytest: the Extractor and cupy inputs on the GPU (the module's default backend: cuda)"
PYTHONPATH="$here/build-device-after/python" PYTHONDONTWRITEBYTECODE=1 timeout 200 python3 -m pytest \
  -q -p no:cacheprovider "$here/python/tests/test_extractor.py" "$here/python/tests/test_cupy.py" \
  > "$out/pytest.log" 2>&1
tail -n 3 "$out/pytest.log"
IFS=, read -ra modes <<< "${KSPECTER_LOOP_MODES-"--gpu,--gpu --cupy"}"
for tree in ${KSPECTER_LOOP_TREES:-after}; do
  for mode in "${modes[@]}"; do
    note "extractor_loop $mode, $tree"
    KSPECTER_CLI="$here/build-device-$tree/src/cli/kspecter" timeout 200 python3 \
      "$here/perf/extractor_loop.py" --psf "$psf" --nspec 500 --repeat 10 --cte-iterations 2 \
      $mode > "$out/loop-$tree${mode// /}.log" 2>&1
    grep -v "OMP_PROC_BIND\|OpenMP [34]\|unit testing" "$out/loop-$tree${mode// /}.log"
  done
done
pack_logs
