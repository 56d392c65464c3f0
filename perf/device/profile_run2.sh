#!/usr/bin/env bash
# Device call 2 of issue 14 (the band path integrated), run through
#   bash perf/gpu_run.sh exec .gpu/profile_run2.sh
# with the CUDA build staged in .gpu (perf/gpu_run.sh stage, tests included) plus
# .gpu/icov.bin.xz (perf/diag/icov_structure --dump). Logs under $OUT; a summary last.
#   1. tst_band_cuda, tst_extract_cuda (the band kernels and the band path on the GPU);
#   2. bench_extract full r frame, --solver band and dense (best of 3 each), band --kernels;
#   3. bench_band (dense vs band solves, 4700 real patches);
#   4. the CLI end to end on a simulated full frame: cuda twice (bitwise rerun), openmp once,
#      compare (CPU vs GPU pulls), pulls against the truth;
#   5. ncu --set full on one batch of bench_extract (band), and on bench_band's band kernels.
set -uo pipefail
B="$KSPECTER_BDIR"
G="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
out="$OUT"
psf="$G/data/psf-r0-00067784.fits"
t0=$SECONDS
note() { echo "[$((SECONDS - t0)) s] $*"; }
left() { echo $((560 - (SECONDS - t0))); }
[ -f "$G/icov.bin.xz" ] && xz -dc "$G/icov.bin.xz" > /tmp/icov.bin
NCU="$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -n1)"

note "tests"
{
  (cd "$B/tests/solve" && timeout 150 ./tst_band_cuda 2>&1 | grep -E '^\[ *(OK|FAILED|PASSED|SKIPPED) |Failure|Expected|Which is|rel_maxdiff' | head -40)
  (cd "$B/tests/extract" && timeout 150 ./tst_extract_cuda 2>&1 | grep -E '^\[ *(OK|FAILED|PASSED|SKIPPED) |Failure|Expected|Which is|max \|' | head -40)
} > "$out/tests.log" 2>&1
note "bench_extract"
{
  timeout 100 "$B/perf/bench_extract" --repeat 3 --solver band
  timeout 100 "$B/perf/bench_extract" --repeat 3 --solver dense
  timeout 100 "$B/perf/bench_extract" --repeat 1 --solver band --kernels
} > "$out/bench_extract.log" 2>&1
note "bench_band"
timeout 100 "$B/perf/bench_band" --icov /tmp/icov.bin --reps 5 > "$out/bench_band.log" 2>&1

note "CLI end to end"
cli="$KSPECTER_CLI" e=/tmp/e2e; mkdir -p $e
wall() { awk -v a="$1" -v b="$(date +%s.%N)" 'BEGIN {printf "%.3f", b - a}'; }
{
  timeout 60 "$cli" simulate --psf "$psf" -o $e/preproc.fits --seed 1 > /dev/null
  for k in 1 2; do
    s=$(date +%s.%N)
    timeout 60 "$cli" extract -i $e/preproc.fits -p "$psf" -o $e/frame$k.fits --backend cuda --log-level debug
    echo "extract cuda run $k wall $(wall $s) s"
  done
  s=$(date +%s.%N)
  OMP_NUM_THREADS=16 OMP_PROC_BIND=spread timeout 90 "$cli" extract -i $e/preproc.fits -p "$psf" -o $e/frame-omp.fits --backend openmp
  echo "extract openmp (16 threads) wall $(wall $s) s"
  echo "== compare cuda run 1 vs run 2 (bitwise)"; timeout 60 "$cli" compare --max-pull 0 $e/frame1.fits $e/frame2.fits
  echo "== compare cuda vs openmp"; timeout 60 "$cli" compare $e/frame1.fits $e/frame-omp.fits
} > "$out/e2e.log" 2>&1

if [ -n "$NCU" ] && [ "$(left)" -gt 200 ]; then
  note "ncu extract"
  timeout 170 "$NCU" --clock-control none --set full -f -o /tmp/ncu2_extract \
    "$B/perf/bench_extract" --nbundles 5 --warmup 0 --repeat 1 > "$out/ncu_extract.log" 2>&1
  note "ncu extract rc $?"
fi
if [ -n "$NCU" ] && [ "$(left)" -gt 90 ]; then
  note "ncu band"
  timeout 80 "$NCU" --clock-control none --set full -k regex:band -c 3 -f \
    -o /tmp/ncu2_band "$B/perf/bench_band" --icov /tmp/icov.bin --nmat 1175 --reps 1 \
    > "$out/ncu_band.log" 2>&1
  note "ncu band rc $?"
fi
for r in extract band; do
  [ -f /tmp/ncu2_$r.ncu-rep ] || continue
  "$NCU" -i /tmp/ncu2_$r.ncu-rep --page raw --csv > /tmp/ncu2_${r}_raw.csv 2>/dev/null
  "$NCU" -i /tmp/ncu2_$r.ncu-rep --page details --csv > /tmp/ncu2_${r}_details.csv 2>/dev/null
done
[ -f /tmp/ncu2_band.ncu-rep ] && "$NCU" -i /tmp/ncu2_band.ncu-rep --page source --csv --print-source sass > /tmp/ncu2_band_source.csv 2>/dev/null
(cd /tmp && tar czf "$out/ncu.tar.gz" $(ls ncu2_*.csv ncu2_*.ncu-rep 2>/dev/null)) 2>/dev/null
note "done"

echo "==== summary"
cat "$out/tests.log" | grep -E 'PASSED|FAILED|Failure' | head -12
grep -E '^== Cuda|^kspecter::extract|extract_frame wall|peak device' "$out/bench_extract.log" | head -24
sed -n '/^kernel (per run/,/^sum/p' "$out/bench_extract.log" | head -24
grep -E '^check|^dense|^band|^inverse_sqrt|^factorisation' "$out/bench_band.log"
grep -E 'wall|extracted|pull|AGREE|DIFFER|max \||== compare|stitch|upload|read ' "$out/e2e.log" | head -30
tail -n 2 "$out/ncu_extract.log" "$out/ncu_band.log" 2>/dev/null
ls -la "$out"
