#!/usr/bin/env bash
# Device call 1 of issue 14 (profile before optimising), run through
#   bash perf/gpu_run.sh exec .gpu/profile_run1.sh
# with the CUDA build staged in .gpu (perf/gpu_run.sh stage) plus .gpu/icov.bin.xz
# (perf/diag/icov_structure --dump). Writes its logs under $OUT; prints a short summary last.
# Steps (each with its own time limit, the most wanted first):
#   bench_extract full r frame (stage table, best of 3; then every kernel fenced and timed);
#   ncu --set full on one batch (5 bundles, 1175 patches) of bench_extract;
#   bench_band (dense vs band solves, 4700 real patches) and ncu on it (1175 patches);
#   the CLI end to end (simulate a full frame; extract it on the GPU twice, debug log);
#   bench_solve; one try of nsys.
set -uo pipefail
B="$KSPECTER_BDIR"
G="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
out="$OUT"
psf="$G/data/psf-r0-00067784.fits"
t0=$SECONDS
note() { echo "[$((SECONDS - t0)) s] $*"; }
left() { echo $((560 - (SECONDS - t0))); }

[ -f "$G/icov.bin.xz" ] && xz -dc "$G/icov.bin.xz" > /tmp/icov.bin
nvidia-smi --query-gpu=name,memory.total,clocks.sm,clocks.max.sm,clocks.mem,power.limit --format=csv > "$out/gpu.txt" 2>&1
NCU="$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -n1)"

note "bench_extract full frame"
timeout 150 "$B/perf/bench_extract" --repeat 3 --kernels > "$out/bench_extract.log" 2>&1
note "ncu extract ($NCU)"
if [ -n "$NCU" ]; then
  timeout 200 "$NCU" --clock-control none --set full -f -o /tmp/ncu_extract \
    "$B/perf/bench_extract" --nbundles 5 --warmup 0 --repeat 1 > "$out/ncu_extract.log" 2>&1
  note "ncu extract rc $?"
fi
note "bench_band"
timeout 100 "$B/perf/bench_band" --icov /tmp/icov.bin --reps 5 > "$out/bench_band.log" 2>&1
if [ -n "$NCU" ] && [ "$(left)" -gt 240 ]; then
  timeout 120 "$NCU" --clock-control none --section SpeedOfLight --section LaunchStats \
    --section Occupancy --section MemoryWorkloadAnalysis --section ComputeWorkloadAnalysis \
    -f -o /tmp/ncu_band "$B/perf/bench_band" --icov /tmp/icov.bin --nmat 1175 --reps 1 \
    > "$out/ncu_band.log" 2>&1
  note "ncu band rc $?"
fi
for r in extract band; do
  [ -f /tmp/ncu_$r.ncu-rep ] || continue
  "$NCU" -i /tmp/ncu_$r.ncu-rep --page raw --csv > /tmp/ncu_${r}_raw.csv 2>/dev/null
  "$NCU" -i /tmp/ncu_$r.ncu-rep --page details --csv > /tmp/ncu_${r}_details.csv 2>/dev/null
done
(cd /tmp && tar czf "$out/ncu.tar.gz" $(ls ncu_*.csv ncu_*.ncu-rep 2>/dev/null)) 2>/dev/null

note "CLI end to end"
cli="$KSPECTER_CLI" e=/tmp/e2e; mkdir -p $e
wall() { awk -v a="$1" -v b="$(date +%s.%N)" 'BEGIN {printf "%.3f", b - a}'; }
if [ "$(left)" -gt 120 ]; then
  {
    s=$(date +%s.%N); timeout 60 "$cli" simulate --psf "$psf" -o $e/preproc.fits --seed 1; echo "simulate wall $(wall $s) s"
    ls -la $e
    for k in 1 2; do
      s=$(date +%s.%N)
      timeout 60 "$cli" extract -i $e/preproc.fits -p "$psf" -o $e/frame$k.fits --backend cuda --log-level debug
      echo "extract run $k wall $(wall $s) s"
    done
    s=$(date +%s.%N); timeout 60 "$cli" info > /dev/null; echo "kspecter info (CUDA start-up) wall $(wall $s) s"
  } > "$out/e2e.log" 2>&1
fi
note "bench_solve"
[ "$(left)" -gt 60 ] && timeout 50 "$B/perf/bench_solve" > "$out/bench_solve.log" 2>&1
note "nsys try"
NSYS="$(command -v nsys || ls /opt/nvidia/nsight-systems/*/bin/nsys /opt/nvidia/nsight-compute/*/host/target-linux-x64/nsys 2>/dev/null | head -n1)"
{
  echo "nsys: ${NSYS:-none}"
  if [ -n "$NSYS" ] && [ "$(left)" -gt 40 ]; then
    timeout $(( $(left) - 15 )) "$NSYS" profile --stats=true -f true -o /tmp/nsys1 "$B/perf/bench_extract" --nbundles 2 --warmup 0
    echo "nsys rc $?"; ls -la /tmp/nsys1* 2>&1
  fi
} > "$out/nsys.log" 2>&1
note "done"

echo "==== summary"
grep -E '^kspecter::|extract_frame wall|peak device|== Cuda' "$out/bench_extract.log" | head -20
sed -n '/^kernel (per run/,/^sum/p' "$out/bench_extract.log" | head -30
tail -n 4 "$out/ncu_extract.log" 2>/dev/null
grep -E '^bench_band|^check|^dense|^band|^inverse_sqrt|^factorisation' "$out/bench_band.log"
tail -n 3 "$out/ncu_band.log" 2>/dev/null
grep -E 'wall|extracted' "$out/e2e.log" 2>/dev/null | head -12
grep -E 'cholesky|inverse|all four' "$out/bench_solve.log" 2>/dev/null
tail -n 4 "$out/nsys.log"
ls -la "$out"
