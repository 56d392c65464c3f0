#!/usr/bin/env bash
# Device call 1 of issue 14 (profile before optimising), run through
#   bash perf/gpu_run.sh exec .gpu/profile_run1.sh
# with the CUDA build staged in .gpu (perf/gpu_run.sh stage) plus .gpu/icov.bin.xz
# (perf/diag/icov_structure --dump). Writes its logs under $OUT; prints a short summary last.
#   1. bench_extract, full r frame: stage table (best of 3), then every kernel fenced and timed;
#   2. bench_solve and bench_band (dense vs band solves on 4700 real patches);
#   3. ncu --set full on one batch (5 bundles, 1175 patches) of bench_extract, and on bench_band;
#   4. one try of nsys;
#   5. the CLI end to end: simulate a full frame, extract it on the GPU (twice), log per step.
set -uo pipefail
B="$KSPECTER_BDIR"
G="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
out="$OUT"
psf="$G/data/psf-r0-00067784.fits"
t0=$SECONDS
note() { echo "[$((SECONDS - t0)) s] $*"; }
export NCCL_NVLS_ENABLE=0

[ -f "$G/icov.bin.xz" ] && xz -dc "$G/icov.bin.xz" > /tmp/icov.bin
nvidia-smi --query-gpu=name,memory.total,clocks.sm,clocks.max.sm,clocks.mem,power.limit --format=csv > "$out/gpu.txt" 2>&1

note "bench_extract full frame"
timeout 200 "$B/perf/bench_extract" --repeat 3 --kernels > "$out/bench_extract.log" 2>&1
note "bench_solve"
timeout 120 "$B/perf/bench_solve" > "$out/bench_solve.log" 2>&1
note "bench_band"
{
  timeout 150 "$B/perf/bench_band" --icov /tmp/icov.bin --reps 5
  timeout 150 "$B/perf/bench_band" --reps 5
} > "$out/bench_band.log" 2>&1

NCU="$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -n1)"
note "ncu: $NCU"
if [ -n "$NCU" ]; then
  timeout 300 "$NCU" --clock-control none --set full -f -o /tmp/ncu_extract \
    "$B/perf/bench_extract" --nbundles 5 --warmup 0 --repeat 1 > "$out/ncu_extract.log" 2>&1
  note "ncu extract rc $?"
  timeout 200 "$NCU" --clock-control none --set full -f -o /tmp/ncu_band \
    "$B/perf/bench_band" --icov /tmp/icov.bin --nmat 1175 --reps 1 > "$out/ncu_band.log" 2>&1
  note "ncu band rc $?"
  for r in extract band; do
    [ -f /tmp/ncu_$r.ncu-rep ] || continue
    "$NCU" -i /tmp/ncu_$r.ncu-rep --page raw --csv > /tmp/ncu_${r}_raw.csv 2>/dev/null
    "$NCU" -i /tmp/ncu_$r.ncu-rep --page details --csv > /tmp/ncu_${r}_details.csv 2>/dev/null
  done
  tar czf "$out/ncu.tar.gz" -C /tmp $(cd /tmp && ls ncu_*.csv ncu_*.ncu-rep 2>/dev/null) 2>/dev/null
fi

note "nsys try"
NSYS="$(command -v nsys || ls /opt/nvidia/nsight-systems/*/bin/nsys /opt/nvidia/nsight-compute/*/host/target-linux-x64/nsys 2>/dev/null | head -n1)"
{
  echo "nsys: ${NSYS:-none}"
  if [ -n "$NSYS" ]; then
    timeout 90 "$NSYS" profile --stats=true -f true -o /tmp/nsys1 "$B/perf/bench_extract" --nbundles 4 --warmup 0
    echo "nsys rc $?"; ls -la /tmp/nsys1* 2>&1
  fi
} > "$out/nsys.log" 2>&1

note "CLI end to end"
cli="$KSPECTER_CLI" e=/tmp/e2e; mkdir -p $e
{
  for step in 1; do
    s=$(date +%s.%N); timeout 120 "$cli" simulate --psf "$psf" -o $e/preproc.fits --seed 1; echo "simulate wall $(echo "$(date +%s.%N) $s" | awk '{print $1-$2}') s"
  done
  ls -la $e
  for k in 1 2; do
    s=$(date +%s.%N)
    timeout 120 "$cli" extract -i $e/preproc.fits -p "$psf" -o $e/frame$k.fits --backend cuda --log-level debug
    echo "extract run $k wall $(echo "$(date +%s.%N) $s" | awk '{print $1-$2}') s"
  done
  s=$(date +%s.%N); timeout 60 "$cli" info > /dev/null; echo "kspecter info (CUDA start-up) wall $(echo "$(date +%s.%N) $s" | awk '{print $1-$2}') s"
} > "$out/e2e.log" 2>&1

note "done"
echo "==== summary"
grep -E '^kspecter::|extract_frame wall|peak device|== Cuda' "$out/bench_extract.log" | head -20
sed -n '/^kernel (per run/,/^sum/p' "$out/bench_extract.log" | head -32
grep -E 'cholesky|inverse|all four' "$out/bench_solve.log"
grep -E '^bench_band|^check|^dense|^band|^inverse_sqrt|^factorisation' "$out/bench_band.log"
tail -n 5 "$out/ncu_extract.log"; tail -n 3 "$out/ncu_band.log"
tail -n 6 "$out/nsys.log"
grep -E 'wall|extracted|wrote|read ' "$out/e2e.log" | head -20
ls -la "$out"
