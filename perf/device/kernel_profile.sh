#!/usr/bin/env bash
# Issue 14, one device call: where the kernels named by $KSPECTER_NCU_KERNELS (a regex on the
# mangled name, default assemble_icov) stall. This tree built on the device with -lineinfo, then
# ncu --set full on one batch of bench_extract (5 bundles, the full r frame's shape), with the
# warp states, the occupancy and the source lines where the samples fall; and bench_extract's
# per-kernel times on the full frame.
#
# Device call (carry [".gpu-python", ".gpu-specter"], timeout_s 600):
#   KSPECTER_NCU_KERNELS=assemble_icov bash perf/device/kernel_profile.sh
# KSPECTER_NCU_ARGS replaces bench_extract's arguments (say, the warm extractor's repeat:
# "--budget 64 --reuse 1 --model 1 --device-outputs 1 --warmup 1 --repeat 1 --solver band").
# KSPECTER_NCU_COUNT: kernels profiled (default 4).
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
kernels="${KSPECTER_NCU_KERNELS:-assemble_icov}"
note "build (-lineinfo)"
KSPECTER_DEVICE_CMAKE_ARGS="-DCMAKE_CXX_FLAGS=-lineinfo" device_build after "$here" bench_extract
b="$here/build-device-after/perf"
NCU="$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -n1)"
if [ -n "$NCU" ]; then
  note "ncu ($kernels)"
  timeout 240 "$NCU" --clock-control none --set full --import-source yes --kernel-name-base mangled \
    -k "regex:$kernels" -c "${KSPECTER_NCU_COUNT:-4}" -f -o /tmp/ncu_k "$b/bench_extract" --psf "$psf" \
    ${KSPECTER_NCU_ARGS:---nbundles 5 --warmup 0 --repeat 1 --solver band} > "$out/ncu.log" 2>&1
  "$NCU" -i /tmp/ncu_k.ncu-rep --page raw --csv > /tmp/ncu_k_raw.csv 2>/dev/null &&
    python3 "$here/perf/ncu_table.py" /tmp/ncu_k_raw.csv 2>&1 | tail -n 8
  "$NCU" -i /tmp/ncu_k.ncu-rep --page details --section WarpStateStats --section Occupancy \
    --section SchedulerStats --section LaunchStats --section MemoryWorkloadAnalysis \
    --section SourceCounters --section InstructionStats > "$out/ncu_details.txt" 2>&1
  grep -E "Warp Cycles Per Issued|Issued Warp Per|Achieved Active Warps|Stall|L1/TEX Hit|L2 Hit|Executed Ipc|Branch|Uncoalesced|Theoretical Occ" \
    "$out/ncu_details.txt" | head -n 40
  sed -n '/Source Counters/,/^ *$/p' "$out/ncu_details.txt" | head -n 60
  "$NCU" -i /tmp/ncu_k.ncu-rep --page source --csv --print-source sass > "$out/ncu_source.csv" 2>/dev/null
  "$NCU" -i /tmp/ncu_k.ncu-rep --page source --csv --print-source cuda,sass \
    > "$out/ncu_source_cuda_sass.csv" 2>/dev/null || true
  python3 - "$out/ncu_source.csv" <<'PY' || true
import csv, sys
rows = list(csv.reader(open(sys.argv[1], errors="replace")))
hdr = next((i for i, r in enumerate(rows) if any("Warp Stall Sampling (All" in c for c in r)), None)
if hdr is not None:
    h = rows[hdr]
    k = next(i for i, c in enumerate(h) if "Warp Stall Sampling (All" in c)
    body = [r for r in rows[hdr + 1:] if len(r) > k and r[k].replace(".", "").isdigit()]
    tot = sum(float(r[k]) for r in body) or 1
    print("top source lines by warp stall samples:")
    for r in sorted(body, key=lambda r: -float(r[k]))[:25]:
        print(f"{100 * float(r[k]) / tot:5.1f}%  {r[0][:6]} {r[1].strip()[:110]}")
PY
  python3 - "$out/ncu_source_cuda_sass.csv" <<'PY' || true
# The CUDA source lines by warp instructions executed: where the issue slots go.
import csv, sys
rows = list(csv.reader(open(sys.argv[1], errors="replace")))
agg, f, h = {}, "", None
for r in rows:
    if r and r[0] in ("File Path", "File Name"):
        f = r[1].split("/")[-1]
    elif r and r[0] == "Line No":
        h = r
        ie, st = h.index("Instructions Executed"), h.index("Warp Stall Sampling (All Samples)")
    elif h and r and r[0].isdigit():
        try:
            agg[(f, r[0], r[1].strip()[:90])] = (float(r[ie]), float(r[st]))
        except ValueError:
            pass
ti = sum(v[0] for v in agg.values()) or 1
ts = sum(v[1] for v in agg.values()) or 1
print(f"top source lines by warp instructions executed (of {ti:.3g}), with their stall samples:")
for k, v in sorted(agg.items(), key=lambda kv: -kv[1][0])[:30]:
    print(f"{100 * v[0] / ti:5.1f}% inst {100 * v[1] / ts:5.1f}% stall  {k[0][:24]}:{k[1]} {k[2]}")
PY
fi
note "bench_extract --kernels"
timeout 100 "$b/bench_extract" --psf "$psf" --repeat 1 --solver band --kernels 2>&1 |
  grep -E "^kspecter::|extract_frame|peak" | head -n 30 | tee "$out/bench_extract.log"
pack_logs
note "done"
