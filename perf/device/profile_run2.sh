#!/usr/bin/env bash
# Device call 2 of issue 14 (the band path integrated): the "after" numbers of final_run.sh,
# then ncu --set full on one batch of bench_extract (band solver, 5 bundles, 1175 patches).
# Staged as final_run.sh says, with both scripts in the stage; command
#   mv .gpu-perf .gpu && bash perf/gpu_run.sh exec .gpu/profile_run2.sh
# Logs under $OUT (ncu's raw and details pages as CSV in ncu.tar.gz, for perf/ncu_table.py).
set -uo pipefail
B="$KSPECTER_BDIR"
G="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
out="$OUT"
t0=$SECONDS
bash "$G/final_run.sh"
NCU="$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -n1)"
if [ -n "$NCU" ]; then
  echo "[$((SECONDS - t0)) s] ncu extract (band)"
  timeout 200 "$NCU" --clock-control none --set full -f -o /tmp/ncu2_extract \
    "$B/perf/bench_extract" --nbundles 5 --warmup 0 --repeat 1 --solver band \
    > "$out/ncu_extract.log" 2>&1
  echo "[$((SECONDS - t0)) s] ncu rc $?"
  if [ -f /tmp/ncu2_extract.ncu-rep ]; then
    "$NCU" -i /tmp/ncu2_extract.ncu-rep --page raw --csv > /tmp/ncu2_extract_raw.csv 2>/dev/null
    "$NCU" -i /tmp/ncu2_extract.ncu-rep --page details --csv > /tmp/ncu2_extract_details.csv 2>/dev/null
    (cd /tmp && tar czf "$out/ncu.tar.gz" ncu2_extract*) 2>/dev/null
    python3 "$G/ncu_table.py" /tmp/ncu2_extract_raw.csv 2>&1 | tail -n 25
  fi
fi
echo "[$((SECONDS - t0)) s] all done"
