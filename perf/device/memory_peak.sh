#!/usr/bin/env bash
# Issue 14, one device call: the device memory a full frame really takes. bench_extract's own
# peak counts the frame's buffers only, not the solve/ and psf/ workspaces (the inverse square
# root's records among them), so nvidia-smi samples the GPU's used memory every 20 ms while
# this tree's bench_extract (full r frame, real r0 PSF, band solver) and then the CLI (read,
# extract, write one simulated full-frame preproc) run; the idle reading before each is
# subtracted. The CUDA context (a few hundred MB) is part of the process's share.
#
# KSPECTER_BUDGETS="5 6" samples bench_extract with those memory budgets (GiB) too.
#
# Device call (carry [".gpu-python", ".gpu-specter"], timeout_s 600):
#   bash perf/device/memory_peak.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
note "build"
device_build after "$here" bench_extract
used() { nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits | head -n1; }
# sampled NAME COMMAND...: the command's peak of used memory over the idle reading, in MiB.
sampled() {
  local name="$1" idle
  shift
  idle="$(used)"
  nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits -lms 20 > "$out/$name.smi" &
  local smi=$!
  "$@" > "$out/$name.log" 2>&1
  local rc=$?
  kill "$smi" 2> /dev/null
  wait "$smi" 2> /dev/null
  sort -n "$out/$name.smi" | tail -n1 |
    awk -v i="$idle" -v n="$name" -v rc="$rc" \
      '{printf "%s: exit %d, idle %d MiB, peak %d MiB, the process %d MiB (%.2f GiB)\n", n, rc, i, $1, $1 - i, ($1 - i) / 1024}'
}
bench="$here/build-device-after/perf/bench_extract"
cli="$here/build-device-after/src/cli/kspecter"
sampled bench_extract "$bench" --psf "$psf" --repeat 1 --solver band
grep -E "peak device memory|extract_frame wall" "$out/bench_extract.log"
for g in ${KSPECTER_BUDGETS:-}; do  # other memory budgets (GiB): larger batches, fewer of them
  sampled "bench_extract_budget_$g" "$bench" --psf "$psf" --repeat 1 --solver band --budget "$g"
  grep -E "batch\(es\)|peak device memory|extract_frame wall" "$out/bench_extract_budget_$g.log"
done
"$cli" simulate --psf "$psf" -o /tmp/memory_peak_preproc.fits --seed 1 --log-level quiet
sampled cli "$cli" extract -w 5760,7620,0.8 -i /tmp/memory_peak_preproc.fits -p "$psf" \
  -o /tmp/memory_peak_frame.fits --backend cuda --no-truth
note "done"
pack_logs
