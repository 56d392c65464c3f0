#!/usr/bin/env bash
# Strong scaling of `kspecter extract --batch` over MPI ranks on one exposure.
#
#   perf/scaling.sh --kspecter build/src/cli/kspecter --out perf-out [options]
#
# Makes an exposure of 3 x S frames (S spectrographs x b, r, z arms; S = 10 is DESI's 30):
#   b: synthetic PSF 3560-5950 A, grid 3600,5800,0.8  (2751 bins)
#   r: the real DESI PSF given by --psf-r (synthetic 5560-7800 A without it), grid 5760,7620,0.8 (2326)
#   z: synthetic PSF 7420-9880 A, grid 7520,9824,0.8  (2881 bins)
# each simulated by `kspecter simulate` with its own seed (synthetic PSFs also differ per
# spectrograph), then extracts the whole exposure as one `--batch` job at every rank count of
# --ranks, and checks that every rank count writes the frames of one rank bit for bit.
#
# Writes DIR/scaling.csv (one row per rank count: time, speedup and efficiency against the
# smallest rank count) and DIR/scaling-<label>.log; perf/plot_scaling.py turns CSVs into a PNG.
# The exposure itself (about 6.5 GB at 500 fibers) goes to a scratch folder, removed at the end.
#
# Options:
#   --kspecter EXE       the kspecter executable (required)
#   --out DIR            where the CSV and log go (required)
#   --ranks "1 2 4"      rank counts (default "1 2 4")
#   --backend NAME       auto, cuda, openmp, serial (default auto)
#   --label NAME         machine label in the CSV (default: the GPU name, else "cpu")
#   --spectrographs S    spectrographs (default 10 -> 30 frames)
#   --nspec N            spectra per frame (default: all 500)
#   --psf-r FILE         the real r PSF (default: a synthetic one)
#   --mpiexec EXE        MPI launcher (default: mpiexec on PATH)
#   --mpi-args "..."     extra launcher arguments (default "--oversubscribe")
#   --threads-per-rank T OpenMP threads of each rank (default: kspecter's, the rank's cores)
#   --repeat R           runs per rank count, the fastest kept (default 1)
#   --sim-jobs J         simulations at once (default 4)
#   --scratch DIR        where the exposure is made (default: mktemp -d under $TMPDIR or /tmp)
#   --gz                 preprocs and frames as DESI keeps them, .fits.gz (label gets "+gz")
#   --cpus LIST          run every job under `taskset -c LIST` (e.g. 0-15: a 1-GPU node's cores)
#   --reuse              with --scratch: keep an exposure an earlier run made there
#   --extract-args "..." more arguments for every `extract --batch` (e.g. "--log-level debug")
#
# steady_s_per_frame: the time between the log's 5th and last "frame k/N written" lines over
# the frames between them (the pipeline full; rank 0 logs every frame of the job).
set -euo pipefail

exe="" out="" ranks="1 2 4" backend=auto label="" nsp=10 nspec="" psf_r="" mpiexec="" mpi_args="--oversubscribe"
repeat=1 sim_jobs=4 scratch="" threads="" ext=fits cpus="" reuse=0 extra=""
while [ $# -gt 0 ]; do
  case "$1" in
    --kspecter) exe="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    --ranks) ranks="$2"; shift 2 ;;
    --backend) backend="$2"; shift 2 ;;
    --label) label="$2"; shift 2 ;;
    --spectrographs) nsp="$2"; shift 2 ;;
    --nspec) nspec="$2"; shift 2 ;;
    --psf-r) psf_r="$2"; shift 2 ;;
    --mpiexec) mpiexec="$2"; shift 2 ;;
    --mpi-args) mpi_args="$2"; shift 2 ;;
    --repeat) repeat="$2"; shift 2 ;;
    --threads-per-rank) threads="$2"; shift 2 ;;
    --sim-jobs) sim_jobs="$2"; shift 2 ;;
    --scratch) scratch="$2"; shift 2 ;;
    --gz) ext=fits.gz; shift ;;
    --cpus) cpus="$2"; shift 2 ;;
    --reuse) reuse=1; shift ;;
    --extract-args) extra="$2"; shift 2 ;;
    -h|--help) sed -n '2,45p' "$0"; exit 0 ;;
    *) echo "scaling: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
[ -x "$exe" ] || { echo "scaling: --kspecter EXE is required (an executable)" >&2; exit 2; }
[ -n "$out" ] || { echo "scaling: --out DIR is required" >&2; exit 2; }
[ -z "$psf_r" ] || [ -f "$psf_r" ] || { echo "scaling: --psf-r $psf_r: no such file" >&2; exit 2; }
mpiexec="${mpiexec:-$(command -v mpiexec || true)}"
exe="$(cd "$(dirname "$exe")" && pwd)/$(basename "$exe")"
mkdir -p "$out"; out="$(cd "$out" && pwd)"
if [ -z "$label" ]; then
  label="$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -n1 | tr ' ' '-' || true)"
  label="${label:-cpu}"
fi
[ "$ext" = fits ] || label="$label+gz"
pin=(); [ -z "$cpus" ] || pin=(taskset -c "$cpus")
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 KOKKOS_DISABLE_WARNINGS=1
export OMP_PROC_BIND="${OMP_PROC_BIND:-false}"
if [ -z "$scratch" ]; then scratch="$(mktemp -d "${TMPDIR:-/tmp}/kspecter-scaling.XXXXXX")"; own_scratch=1; else mkdir -p "$scratch"; own_scratch=0; fi
cleanup() { [ "$own_scratch" = 1 ] && rm -rf "$scratch"; }
trap cleanup EXIT
log="$out/scaling-$label.log"
: > "$log"
say() { echo "scaling: $*" | tee -a "$log"; }
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.2f", b - a }'; }

# ---------------------------------------------------------------- the exposure
nflag=(); [ -n "$nspec" ] && nflag=(-n "$nspec")
t0=$(now)
declare -A range=([b]=3560,5950 [r]=5560,7800 [z]=7420,9880)
declare -A grid=([b]=3600,5800,0.8 [r]=5760,7620,0.8 [z]=7520,9824,0.8)
list="$scratch/exposure.txt"; : > "$list"
jobs="$scratch/simulate.jobs"; : > "$jobs"
for ((s = 0; s < nsp; ++s)); do
  a=0
  for arm in b r z; do
    a=$((a + 1))
    psf="$scratch/psf-$arm$s.fits"
    if [ "$arm" = r ] && [ -n "$psf_r" ]; then
      psf="$psf_r"
    else
      "$exe" make-psf --log-level quiet -o "$psf" -w "${range[$arm]}" --seed $((100 + s)) >> "$log" 2>&1
    fi
    img="$scratch/preproc-$arm$s.$ext"
    echo "$exe simulate --log-level quiet --psf $psf -o $img -w ${grid[$arm]} --seed $((1000 + 3 * s + a)) ${nflag[*]}" >> "$jobs"
    echo "$img $psf FRAMEDIR/frame-$arm$s.$ext ${grid[$arm]}" >> "$list"
  done
done
nframes=$((3 * nsp))
# Several simulations at once, each on a share of the cores (none when --reuse finds them).
made=1
[ "$reuse" = 1 ] && made=0 && while read -r img _; do [ -f "$img" ] || made=1; done < "$list"
cores=$(nproc); per=$(( cores / sim_jobs )); [ "$per" -ge 1 ] || per=1
[ "$made" = 0 ] || OMP_NUM_THREADS=$per xargs -P "$sim_jobs" -I{} sh -c '{}' < "$jobs" >> "$log" 2>&1
say "$([ "$made" = 1 ] && echo made || echo reused) $nframes frames (${nspec:-all} spectra each) in $(since "$t0") s under $scratch ($(du -sh "$scratch" | cut -f1))"

# ---------------------------------------------------------------- the runs
csv="$out/scaling.csv"
[ -s "$csv" ] || echo "label,backend,ranks,frames,spectra_per_frame,job_s,command_s,frames_per_s,speedup,efficiency,busiest_extract_s,steady_s_per_frame" > "$csv"
base_job="" base_ranks="" ref=""
for np in $ranks; do
  best_job="" best_cmd="" best_busy="" best_steady=""
  for ((rep = 1; rep <= repeat; ++rep)); do
    dir="$scratch/np$np"; rm -rf "$dir"; mkdir -p "$dir"
    sed "s|FRAMEDIR|$dir|" "$list" > "$dir.txt"
    launch=()
    if [ "$np" -gt 1 ] || [ -n "$mpiexec" ]; then
      [ -n "$mpiexec" ] || { say "no MPI launcher: $np ranks skipped"; continue 2; }
      launch=("$mpiexec" -n "$np" $mpi_args)
      [ -n "$threads" ] && launch+=(-x "OMP_NUM_THREADS=$threads")
    fi
    t1=$(now)
    ${threads:+env OMP_NUM_THREADS=$threads} "${pin[@]}" "${launch[@]}" "$exe" extract --batch "$dir.txt" --backend "$backend" --no-truth ${nflag[*]} $extra > "$dir.out" 2> "$dir.err" \
      || { cat "$dir.out" "$dir.err" >> "$log"; say "FAILED at $np ranks"; exit 1; }
    cmd_s=$(since "$t1")
    cat "$dir.out" >> "$log"; grep -E 'frame [0-9]+/[0-9]+ written' "$dir.err" | tail -n 3 >> "$log" || true
    cp "$dir.err" "$out/scaling-$label-np$np-run$rep.err"
    line="$(grep -E '^extracted [0-9]+ frames' "$dir.out")"
    job_s="$(echo "$line" | sed -E 's/.* in ([0-9.]+) s on.*/\1/')"
    busy="$(echo "$line" | sed -E 's/.*extracted for ([0-9.]+) s.*/\1/')"
    steady="$(grep -E 'frame [0-9]+/[0-9]+ written' "$dir.err" | sed -E 's/.*frame ([0-9]+)\/[0-9]+ written.*elapsed ([0-9.]+) s.*/\1 \2/' |
      awk 'NR == 5 { k = $1; t = $2 } { n = $1; e = $2 } END { if (n > k && k > 0) printf "%.3f", (e - t) / (n - k); else print "nan" }')"
    say "$np rank(s), run $rep: job $job_s s, command $cmd_s s, busiest rank extracting $busy s, steady state $steady s a frame"
    if [ -z "$best_job" ] || awk -v a="$job_s" -v b="$best_job" 'BEGIN { exit !(a < b) }'; then
      best_job=$job_s best_cmd=$cmd_s best_busy=$busy best_steady=$steady
    fi
  done
  # Every rank count must write the frames of the first one, bit for bit (a few checked).
  if [ -z "$ref" ]; then
    ref="$scratch/reference"; rm -rf "$ref"; mv "$scratch/np$np" "$ref"
  else
    for f in frame-b0 frame-r$((nsp / 2)) frame-z$((nsp - 1)); do
      "$exe" compare --max-pull 0 "$ref/$f.$ext" "$scratch/np$np/$f.$ext" > "$scratch/compare.out" 2>&1 \
        || { cat "$scratch/compare.out" >> "$log"; say "$np ranks: $f differs from the first rank count"; exit 1; }
    done
    say "$np ranks: frames identical to the first rank count's (3 checked)"
  fi
  if [ -z "$base_job" ]; then base_job=$best_job base_ranks=$np; fi
  awk -v l="$label" -v be="$backend" -v np="$np" -v nf="$nframes" -v ns="${nspec:-500}" -v j="$best_job" -v c="$best_cmd" \
      -v b="$best_busy" -v bj="$base_job" -v bn="$base_ranks" -v st="$best_steady" 'BEGIN {
        s = bj / j; printf "%s,%s,%d,%d,%d,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f,%s\n", l, be, np, nf, ns, j, c, nf / j, s, s * bn / np, b, st }' >> "$csv"
  rm -rf "$scratch/np$np"
done
say "results in $csv"
grep -E "^$label,$backend," "$csv" | { command -v column >/dev/null && column -t -s, || cat; } | tee -a "$log"
