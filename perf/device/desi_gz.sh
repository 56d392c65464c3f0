#!/usr/bin/env bash
# DESI's gzipped files at the engine's speed (issue 35), on a GPU machine: one full r frame
# (500 spectra x 2326 wavelengths, the real r0 PSF) file to file through the CLI, plain and
# gzipped both ways; the read, write and gzip benchmarks; and a 30-frame b/r/z exposure of
# .fits.gz in and out as one `extract --batch`, on one GPU (pinned to 16 cores, a GPU's share
# of a node) and, where the machine has four, on four GPUs with one rank each. Builds nothing:
#   bash perf/gpu_run.sh exec perf/device/desi_gz.sh          (device tool, carry [".gpu"])
# after `perf/gpu_run.sh stage` here. Logs under $OUT; a summary last. KSPECTER_GZ_SKIP_BENCH=1
# leaves out the benchmarks (read, write, gzip).
set -uo pipefail
B="$KSPECTER_BDIR" cli="$KSPECTER_CLI" mpiexec="${KSPECTER_MPIEXEC:-mpiexec}"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
out="$OUT" w=/tmp/desi_gz
psf="${KSPECTER_TEST_DATA:-}/psf-r0-00067784.fits"
[ -f "$psf" ] || { echo "desi_gz: no r0 PSF at $psf"; exit 1; }
rm -rf "$w"; mkdir -p "$w"
ncpu=$(nproc); ngpu=$(nvidia-smi -L 2>/dev/null | wc -l)
pin=(); [ "$ncpu" -gt 16 ] && pin=(taskset -c 0-15)   # one GPU's share of a node
export OMP_PROC_BIND=false
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.3f", b - a }'; }
sum=()
note() { echo "desi_gz: $*"; sum+=("$*"); }
{ nvidia-smi --query-gpu=name,memory.total --format=csv,noheader; echo "cpus $ncpu, gpus $ngpu"; } | tee "$out/machine.txt"

# KSPECTER_GZ_ONLY_EXPOSURE=1: only the exposure's batches (e.g. with KSPECTER_GZ_EXTRACT_ARGS
# "--log-level debug" for each frame's read, wait, stages and write).
if [ "${KSPECTER_GZ_ONLY_EXPOSURE:-0}" != 1 ]; then
# ---- one frame: simulate it gzipped and plain (the .gz write's cost is the difference)
for ext in fits fits.gz; do
  t=$(now)
  "${pin[@]}" "$cli" simulate -p "$psf" -o "$w/preproc-r0-00000001.$ext" --seed 1 --log-level quiet
  note "simulate full r frame -> .$ext: $(since "$t") s"
done
ls -l "$w"/preproc-r0-00000001.* | tee -a "$out/sizes.txt"

# ---- the benchmarks: read (plain, gz), write a frame (plain, gz), gzip by library and level
[ "${KSPECTER_GZ_SKIP_BENCH:-0}" = 1 ] || {
  "${pin[@]}" "$B/perf/bench_read_preproc" "$w/preproc-r0-00000001.fits" "$w/preproc-r0-00000001.fits.gz" --repeat 5
  "${pin[@]}" "$B/perf/bench_write_frame" --reps 5 --dir "$w"
  "${pin[@]}" "$B/perf/bench_write_frame" --reps 5 --dir "$w" --gz
  "${pin[@]}" "$B/perf/bench_gzip" "$w/preproc-r0-00000001.fits.gz" --repeat 3 --threads 1,4,16
} 2>&1 | tee "$out/benchmarks.log"

# ---- the CLI, file to file, process start included: a warm-up, then 3 runs of each
run_cli() {  # in out
  "${pin[@]}" "$cli" extract -i "$1" -p "$psf" -o "$2" -w 5760,7620,0.8 --backend cuda --log-level quiet
}
run_cli "$w/preproc-r0-00000001.fits" "$w/warm.fits" > /dev/null 2>&1
for pair in "fits fits" "fits.gz fits" "fits.gz fits.gz"; do
  set -- $pair
  ts=()
  for k in 1 2 3; do
    t=$(now)
    run_cli "$w/preproc-r0-00000001.$1" "$w/frame-$1-to-$2.$2" 2>> "$out/cli.err"
    ts+=("$(since "$t")")
  done
  note "CLI .$1 -> .$2: ${ts[*]} s"
done
# where a run's time goes: the start-up alone, then one gz -> gz run logged at debug level
t=$(now); "${pin[@]}" "$cli" info > /dev/null 2>&1; note "kspecter info (process, CUDA and Kokkos start, exit): $(since "$t") s"
t=$(now); "${pin[@]}" "$cli" extract -i "$w/preproc-r0-00000001.fits.gz" -p "$psf" -o "$w/debug.fits.gz" -w 5760,7620,0.8 \
  --backend cuda --log-level debug > "$out/cli-debug.log" 2>&1
note "CLI .fits.gz -> .fits.gz at debug level: $(since "$t") s (cli-debug.log)"
t=$(now); "${pin[@]}" "$cli" extract -i "$w/preproc-r0-00000001.fits.gz" -p "$psf" -o "$w/nt.fits.gz" -w 5760,7620,0.8 \
  --backend cuda --log-level quiet --no-truth > /dev/null 2>&1
note "CLI .fits.gz -> .fits.gz --no-truth: $(since "$t") s"
"$cli" compare --max-pull 0 "$w/frame-fits-to-fits.fits" "$w/frame-fits.gz-to-fits.gz.fits.gz" > "$out/compare.txt" 2>&1 &&
  note "frame from .gz to .gz vs plain to plain: $(tail -n1 "$out/compare.txt")" ||
  note "frame from .gz to .gz DIFFERS from plain (see compare.txt)"
ls -l "$w"/frame-* | tee -a "$out/sizes.txt"
# desispec's writer: astropy through Python's gzip at level 9, where astropy is installed here
python3 - "$w/frame-fits-to-fits.fits" "$w/frame-desispec-level9.fits.gz" > "$out/level9.txt" 2>&1 <<'EOF' &&
import gzip, shutil, sys, time
t = time.time()
with open(sys.argv[1], "rb") as src, gzip.open(sys.argv[2], "wb", compresslevel=9) as dst:
    shutil.copyfileobj(src, dst)
print(f"python gzip level 9 (desispec's writer): {time.time() - t:.2f} s")
EOF
  note "$(cat "$out/level9.txt"), $(stat -c %s "$w/frame-desispec-level9.fits.gz") bytes vs kspecter's $(stat -c %s "$w/frame-fits.gz-to-fits.gz.fits.gz")"

fi
# KSPECTER_GZ_ALT_CLI=EXE: desi_proc's case (gz -> gz) with that build and with this one,
# interleaved, 5 rounds; KSPECTER_GZ_THIRD_ENV="VAR=value" adds this build under that setting
# as a third arm. Then one run of each arm at debug level (cli-debug-ARM.log, the process's
# launch and end as epoch seconds first and last).
if [ -n "${KSPECTER_GZ_ALT_CLI:-}" ]; then
  arms=(alt this); [ -n "${KSPECTER_GZ_THIRD_ENV:-}" ] && arms+=(third)
  arm_run() {  # arm output [args]
    local arm="$1" o="$2"; shift 2
    local exe="$cli" envs=()
    [ "$arm" = alt ] && exe="$KSPECTER_GZ_ALT_CLI"
    [ "$arm" = third ] && envs=("$KSPECTER_GZ_THIRD_ENV")
    env "${envs[@]}" "${pin[@]}" "$exe" extract -i "$w/preproc-r0-00000001.fits.gz" -p "$psf" -o "$o" \
      -w 5760,7620,0.8 --backend cuda "$@"
  }
  declare -A ab=()
  for round in 1 2 3 4 5; do
    for arm in "${arms[@]}"; do
      t=$(now); arm_run "$arm" "$w/ab-$arm.fits.gz" --log-level quiet > /dev/null 2>> "$out/cli.err"
      ab[$arm]+=" $(since "$t")"
    done
  done
  for arm in "${arms[@]}"; do note "CLI .fits.gz -> .fits.gz, arm $arm:${ab[$arm]} s"; done
  # The process alone: loaded and gone (--version), and with CUDA and Kokkos up and down (info).
  for what in --version info; do
    ts=(); for k in 1 2 3 4 5; do t=$(now); "${pin[@]}" "$cli" $what > /dev/null 2>&1; ts+=("$(since "$t")"); done
    note "kspecter $what: ${ts[*]} s"
  done
  for arm in "${arms[@]}"; do
    { echo "launch $(now)"; arm_run "$arm" "$w/dbg-$arm.fits.gz" --log-level debug 2>&1; echo "end $(now)"; } \
      > "$out/cli-debug-$arm.log"
  done
  "$cli" compare --max-pull 0 "$w/ab-alt.fits.gz" "$w/ab-this.fits.gz" > "$out/compare-ab.txt" 2>&1 &&
    note "frame of this build vs the alt build's: $(tail -n1 "$out/compare-ab.txt")" ||
    note "frame of this build DIFFERS from the alt build's (compare-ab.txt)"
  "${pin[@]}" "$B/perf/bench_read_preproc" "$w/preproc-r0-00000001.fits" "$w/preproc-r0-00000001.fits.gz" --repeat 5 \
    2>&1 | tee "$out/bench-read.log"
fi
# KSPECTER_GZ_SKIP_EXPOSURE=1: the single frame only.
if [ "${KSPECTER_GZ_SKIP_EXPOSURE:-0}" = 1 ]; then
  echo "==== summary"; printf '%s\n' "${sum[@]}"; exit 0
fi
# ---- the exposure: 30 frames gz in, gz out, on one GPU (16 cores), then on four
common=(--extract-args "${KSPECTER_GZ_EXTRACT_ARGS:-}" --kspecter "$cli" --out "$out" --backend cuda --psf-r "$psf" --gz --sim-jobs 8
        --mpiexec "$mpiexec" --mpi-args "--oversubscribe --bind-to none" --scratch "$w/exposure")
timeout 400 bash "$here/perf/scaling.sh" "${common[@]}" --ranks "1" --cpus 0-15 --label 1gpu 2>&1 | tail -n 6
if [ "$ngpu" -ge 4 ]; then  # KSPECTER_GZ_4GPU_RUNS: how many times (default 1)
  for k in $(seq 1 "${KSPECTER_GZ_4GPU_RUNS:-1}"); do
    label=4gpu; [ "$k" -gt 1 ] && label="4gpu-run$k"
    timeout 300 bash "$here/perf/scaling.sh" "${common[@]}" --ranks "4" --label "$label" --reuse 2>&1 | tail -n 6
  done
fi
# KSPECTER_GZ_ALT_CLI=EXE: the exposure's batches again with another build's kspecter, then
# with this one, interleaved (an A/B of two trees on one machine); KSPECTER_GZ_ALT_ROUNDS rounds
# (default 2), the 1-GPU batches left out with KSPECTER_GZ_ALT_1GPU=0.
if [ -n "${KSPECTER_GZ_ALT_CLI:-}" ]; then
  alt=("${common[@]}"); alt[3]="$KSPECTER_GZ_ALT_CLI"
  for round in $(seq 1 "${KSPECTER_GZ_ALT_ROUNDS:-2}"); do
    if [ "${KSPECTER_GZ_ALT_1GPU:-1}" = 1 ]; then
      timeout 200 bash "$here/perf/scaling.sh" "${alt[@]}" --ranks "1" --cpus 0-15 --label "1gpu-alt$round" --reuse 2>&1 | tail -n 2
      timeout 200 bash "$here/perf/scaling.sh" "${common[@]}" --ranks "1" --cpus 0-15 --label "1gpu-this$round" --reuse 2>&1 | tail -n 2
    fi
    if [ "$ngpu" -ge 4 ]; then
      timeout 200 bash "$here/perf/scaling.sh" "${alt[@]}" --ranks "4" --label "4gpu-alt$round" --reuse 2>&1 | tail -n 2
      timeout 200 bash "$here/perf/scaling.sh" "${common[@]}" --ranks "4" --label "4gpu-this$round" --reuse 2>&1 | tail -n 2
    fi
  done
fi
# The host threads of a GPU rank: OpenMP's spinning workers (libgomp's active wait) against
# the I/O threads, and fewer Kokkos host threads (--threads-per-rank sets OMP_NUM_THREADS).
if [ "${KSPECTER_GZ_VARIANTS:-0}" = 1 ]; then
  OMP_WAIT_POLICY=passive timeout 200 bash "$here/perf/scaling.sh" "${common[@]}" --ranks "1" --cpus 0-15 \
    --label 1gpu-passive --reuse 2>&1 | tail -n 2
  OMP_WAIT_POLICY=passive timeout 200 bash "$here/perf/scaling.sh" "${common[@]}" --ranks "1" --cpus 0-15 \
    --threads-per-rank 4 --label 1gpu-t4 --reuse 2>&1 | tail -n 2
  if [ "$ngpu" -ge 4 ]; then
    OMP_WAIT_POLICY=passive timeout 200 bash "$here/perf/scaling.sh" "${common[@]}" --ranks "4" \
      --label 4gpu-passive --reuse 2>&1 | tail -n 2
    OMP_WAIT_POLICY=passive timeout 200 bash "$here/perf/scaling.sh" "${common[@]}" --ranks "4" \
      --threads-per-rank 4 --label 4gpu-t4 --reuse 2>&1 | tail -n 2
  fi
fi
(cd "$out" && tar czf /tmp/logs.tgz --exclude=logs.tgz *.err *.log 2>/dev/null && mv /tmp/logs.tgz "$out/")
echo "==== summary"
printf '%s\n' "${sum[@]}"
cat "$out/scaling.csv" 2>/dev/null
