#!/usr/bin/env bash
# Issue 14, one device call: a tree before a change and this tree, both built on the device
# (python_cupy.sh: the CLI and bench_extract), then interleaved: bench_extract on the full r
# frame (real r0 PSF, band solver, best of 3, per stage), ncu --set full on one batch of the
# kernels named by $KSPECTER_NCU_KERNELS (a regex on the mangled name), and the CLI end to end
# on one plain full-frame preproc, frames compared bitwise between the trees; then the
# benchmarks named by $KSPECTER_EXTRA_BENCH (this tree only). KSPECTER_CHECK_CPU=1 adds, for
# this tree, the pulls against the truth and the frame of OpenMP on the 16 host cores against
# CUDA's. KSPECTER_IO_BENCH=1 builds bench_read_preproc and bench_write_frame in both trees and
# runs them interleaved (the CLI's preproc, a full frame). KSPECTER_CLI_RUNS: CLI runs a tree
# (default 4, at least 2). KSPECTER_BUDGETS="8 16" adds bench_extract runs of this tree with those memory
# budgets (GiB; batch sizes). KSPECTER_AFTER_ARGS="--keep-buffers 1" adds, to each round, a run
# of this tree with those arguments. KSPECTER_BATCH_CHECK=1 extracts three frames (A, B, A) with
# one `extract --batch` (kept device buffers) and compares each with the frame extracted alone.
# KSPECTER_DIGESTS=1 prints bench_extract's frame digest (5 bundles) of both trees with the
# dense and the band solver. KSPECTER_GPU_SPECTER=1 runs gpu_specter on the same preproc and GPU after the CLI
# runs (.gpu-specter staged as perf/gpu_specter_inputs.py's head says).
#
# Here:
#   bash perf/device/python_cupy.sh stage                    # .gpu-python (once)
#   rm -rf .gpu-before && mkdir .gpu-before && git archive <before> | tar -x -C .gpu-before
#   (.gpu-specter as perf/gpu_specter_inputs.py's head says: it holds the r0 PSF)
# Device call (carry [".gpu-python", ".gpu-specter", ".gpu-before"], timeout_s 600):
#   KSPECTER_NCU_TREES=after KSPECTER_EXTRA_BENCH=bench_inverse_sqrt bash perf/device/before_after.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
kernels="${KSPECTER_NCU_KERNELS:-inverse_sqrt_impl|band_strided_inverse_blocks_impl}"
wall() { awk -v a="$1" -v b="$(date +%s.%N)" 'BEGIN {printf "%.3f", b - a}'; }
nvidia-smi --query-gpu=name,memory.total,clocks.sm,clocks.max.sm,driver_version --format=csv

for tree in after before; do
  src="$here" extra="${KSPECTER_EXTRA_BENCH:-}"  # more benchmarks: this tree only
  [ "$tree" = before ] && src="$here/.gpu-before" extra=""
  [ "${KSPECTER_IO_BENCH:-0}" = 1 ] && extra="$extra bench_read_preproc bench_write_frame"
  note "build $tree"
  device_build "$tree" "$src" "bench_extract $extra"
done
cli() { "$here/build-device-$1/src/cli/kspecter" "${@:2}"; }
bench() { timeout 100 "$here/build-device-$1/perf/bench_extract" --psf "$psf" "${@:2}"; }

note "bench_extract"
{
  for k in 0 1; do
    for tree in before after; do
      echo "== $tree, round $k"
      bench $tree --repeat 3 --solver band
    done
    if [ -n "${KSPECTER_AFTER_ARGS:-}" ]; then  # this tree again, with more arguments
      echo "== after $KSPECTER_AFTER_ARGS, round $k"
      bench after --repeat 3 --solver band $KSPECTER_AFTER_ARGS
    fi
  done
  for g in ${KSPECTER_BUDGETS:-}; do  # batch sizes: this tree, --budget in GiB
    echo "== after, budget $g GiB"
    bench after --repeat 3 --solver band --budget "$g"
  done
  echo "== after, per kernel"
  bench after --repeat 1 --solver band --kernels
} > "$out/bench_extract.log" 2>&1
grep -E "^==|extract_frame|peak|batches|^kspecter::extract::[a-z_]+ +[0-9]|^timeout" "$out/bench_extract.log"
if [ "${KSPECTER_DIGESTS:-0}" = 1 ]; then  # the frame's digest, both solvers, both trees
  for solver in dense band; do
    for tree in before after; do
      echo "== $tree, $solver: $(bench $tree --nbundles 5 --repeat 1 --solver $solver 2>&1 |
        grep 'frame digest' | sed 's/.*: //')"
    done
  done
fi

NCU="$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -n1)"
if [ -n "$NCU" ]; then
  for tree in ${KSPECTER_NCU_TREES:-before after}; do
    note "ncu $tree ($kernels)"
    timeout 150 "$NCU" --clock-control none --set full --kernel-name-base mangled \
      -k "regex:$kernels" -f -o "/tmp/ncu_$tree" \
      "$here/build-device-$tree/perf/bench_extract" --psf "$psf" --nbundles 5 --warmup 0 \
      --repeat 1 --solver band > "$out/ncu_$tree.log" 2>&1
    "$NCU" -i "/tmp/ncu_$tree.ncu-rep" --page raw --csv > "/tmp/ncu_${tree}_raw.csv" 2>/dev/null &&
      python3 "$here/perf/ncu_table.py" "/tmp/ncu_${tree}_raw.csv" 2>&1 | tail -n 8
    "$NCU" -i "/tmp/ncu_$tree.ncu-rep" --page details --section WarpStateStats \
      --section Occupancy --section SchedulerStats > "$out/ncu_${tree}_details.txt" 2>&1
  done
  (cd /tmp && tar czf "$out/ncu.tar.gz" ncu_*_raw.csv) 2>/dev/null
fi

e=/tmp/before_after
mkdir -p $e
note "simulate"
cli after simulate --psf "$psf" -o $e/preproc.fits --seed 1 --log-level quiet
extract() {  # tree run
  local s; s=$(date +%s.%N)
  cli "$1" extract -w 5760,7620,0.8 -i $e/preproc.fits -p "$psf" -o "$e/frame-$1-$2.fits" \
    --backend cuda --no-truth --log-level debug > "$out/extract-$1-$2.log" 2>&1
  echo "$1 run $2: exit $? wall $(wall "$s") s"
}
runs="${KSPECTER_CLI_RUNS:-4}"
[ "$runs" -ge 2 ] || runs=2  # run 1 is the frame compared; runs 0 and 1 the rerun check
{
  for k in $(seq 0 $((runs - 1))); do
    extract before $k
    extract after $k
  done
  echo "== compare after vs before (bitwise), after run 0 vs run 1"
  cli after compare --max-pull 0 $e/frame-before-1.fits $e/frame-after-1.fits
  cli after compare --max-pull 0 $e/frame-after-0.fits $e/frame-after-1.fits
  if [ "${KSPECTER_CHECK_CPU:-0}" = 1 ]; then  # the issue's constraints, on this tree
    echo "== after: pulls against the truth (cuda)"
    cli after extract -w 5760,7620,0.8 -i $e/preproc.fits -p "$psf" -o $e/frame-truth.fits \
      --backend cuda 2>&1 | grep -i "pull"
    OMP_NUM_THREADS=16 OMP_PROC_BIND=spread cli after extract -w 5760,7620,0.8 \
      -i $e/preproc.fits -p "$psf" -o $e/frame-omp.fits --backend openmp --no-truth > /dev/null 2>&1
    echo "== after: cuda vs openmp (16 threads)"
    cli after compare $e/frame-after-1.fits $e/frame-omp.fits
  fi
  if [ "${KSPECTER_BATCH_CHECK:-0}" = 1 ]; then  # frames on kept device buffers (this tree)
    echo "== after: --batch (A, B, A; each frame on the buffers of the one before) vs alone"
    cli after simulate --psf "$psf" -o $e/preproc-b.fits --seed 2 --defects --log-level quiet
    cli after extract -w 5760,7620,0.8 -i $e/preproc-b.fits -p "$psf" -o $e/frame-b.fits \
      --backend cuda --no-truth --log-level quiet
    printf '%s\n' "$e/preproc.fits $psf $e/batch-0.fits 5760,7620,0.8" \
      "$e/preproc-b.fits $psf $e/batch-1.fits 5760,7620,0.8" \
      "$e/preproc.fits $psf $e/batch-2.fits 5760,7620,0.8" > $e/batch.txt
    s=$(date +%s.%N)
    cli after extract --batch $e/batch.txt --backend cuda --no-truth --log-level info \
      > "$out/extract-batch.log" 2>&1
    echo "batch of 3: exit $? wall $(wall "$s") s"
    cli after compare --max-pull 0 $e/frame-after-1.fits $e/batch-0.fits
    cli after compare --max-pull 0 $e/frame-b.fits $e/batch-1.fits
    cli after compare --max-pull 0 $e/frame-after-1.fits $e/batch-2.fits
  fi
  if [ "${KSPECTER_IO_BENCH:-0}" = 1 ]; then
    for k in 0 1; do
      for tree in before after; do
        echo "== $tree, round $k: read the preproc, write a frame"
        "$here/build-device-$tree/perf/bench_read_preproc" $e/preproc.fits --repeat 5 | head -n 2
        "$here/build-device-$tree/perf/bench_write_frame" --reps 5 --dir /tmp
      done
    done
  fi
  if [ "${KSPECTER_GPU_SPECTER:-0}" = 1 ] && [ -f "$here/.gpu-specter/psf-r0.npz" ]; then
    # gpu_specter on the same preproc, PSF and GPU (perf/device/gpu_specter_run.py; staged
    # as perf/gpu_specter_inputs.py's head says, never committed), against this tree's frame.
    echo "== gpu_specter"
    PYTHONPATH="$here/.gpu-specter/py" timeout 300 python3 "$here/perf/device/gpu_specter_run.py" \
      --psf-npz "$here/.gpu-specter/psf-r0.npz" --image $e/preproc.fits \
      --kspecter-frame $e/frame-after-1.fits -o /tmp/gs-frame.npz > "$out/gpu_specter.log" 2>&1
    echo "gpu_specter_run exit $?"
    grep -E 'wall|pull|Error' "$out/gpu_specter.log"
  fi
  echo "== after run 1: stage lines"
  grep -E "stitch|upload|extract_frame|wrote|read" "$out/extract-after-1.log" | head -n 20
} 2>&1 | tee "$out/cli.log"
if [ -n "${KSPECTER_EXTRA_BENCH:-}" ]; then
  for x in $KSPECTER_EXTRA_BENCH; do
    note "$x"
    timeout 200 "$here/build-device-after/perf/$x" 2>&1 | grep -v "^ *In general\|OMP_PROC_BIND\|For unit\|For best" | tee "$out/$x.log"
  done
fi
pack_logs
note "done"
