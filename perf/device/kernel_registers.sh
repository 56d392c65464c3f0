#!/usr/bin/env bash
# Registers a thread of the CUDA kernels in one translation unit, here (no device): the unit's
# compile command from the CUDA build, rerun with ptxas' report, the kernels whose demangled
# name matches a regex. About 20-30 s a unit; what bounds a team kernel's teams an SM
# (perf/gpu_runs.md, session 19: 129 registers left the rounds 12 teams an SM, 127 left 16).
#
#   bash perf/device/kernel_registers.sh <object> <regex> [build dir, default build-cuda]
#   bash perf/device/kernel_registers.sh \
#     CMakeFiles/kspecter.dir/src/solve/generated/batched_cuda.cpp.o EigRound
set -euo pipefail
[ $# -ge 2 ] || { sed -n '2,9p' "$0"; exit 2; }
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd -P)"
obj="$1" regex="$2" build="${3:-$here/build-cuda}"
cmd="$(ninja -C "$build" -t commands "$obj" | tail -n 1)"
[ -n "$cmd" ] || { echo "kernel_registers: no compile command for $obj in $build" >&2; exit 1; }
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
cmd="${cmd/ -o $obj/ -o $out/unit.o}"
cmd="${cmd/ -MD -MT $obj -MF $obj.d/}"
(cd "$build" && eval "$cmd -Xptxas=-v") > "$out/ptxas.txt" 2>&1 ||
  { tail -n 20 "$out/ptxas.txt" >&2; exit 1; }
c++filt < "$out/ptxas.txt" | python3 -c '
import re, sys
kernel = None
for line in sys.stdin:
    m = re.search(r"Compiling entry function .(.*). for", line)
    if m:
        kernel = m.group(1)
        continue
    m = re.search(r"Used (\d+) registers", line)
    if m and kernel and re.search(sys.argv[1], kernel):
        print(m.group(1).rjust(4), kernel[:160].replace("kspecter::", ""))
' "$regex"
