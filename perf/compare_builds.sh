#!/usr/bin/env bash
# Whether two builds of the CLI write the same frames, bit for bit (perf/same_frames.py: every
# HDU's data and header, less the build's own version cards): for a change that must not
# change the output. Runs, with each build, on a simulated 50-fiber frame (with defects, .gz)
# and a clean one (plain):
#   - one frame, gz -> gz, with its model image;
#   - a --batch of three frames (gz -> plain, plain -> gz, the first again);
#   - the batch on 3 MPI ranks with bundles of 25, and one frame shared by 2 ranks;
#   - where each build has perf/bench_extract beside its CLI, the digest of 2 bundles of the
#     real-PSF frame with the dense and the band solver.
#
#   perf/compare_builds.sh BEFORE/kspecter AFTER/kspecter [WORKDIR]
#
# Exit status 0 when every output is the same, 1 otherwise.
set -euo pipefail
[ $# -ge 2 ] || { sed -n '2,12p' "$0"; exit 2; }
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
before="$(realpath "$1")" after="$(realpath "$2")"
work="${3:-$(mktemp -d)}"
mkdir -p "$work" && cd "$work"
python="${KSPECTER_PYTHON:-/usr/bin/python3}"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
grid=5760,6400,0.8
"$after" make-psf -o psf.fits >/dev/null 2>&1
"$after" simulate -p psf.fits -o a.fits.gz -n 50 --defects --seed 3 -w $grid >/dev/null 2>&1
"$after" simulate -p psf.fits -o b.fits -n 50 --seed 4 -w $grid >/dev/null 2>&1
outputs=(fa.fits.gz ma.fits ba.fits bb.fits.gz bc.fits mpi/ba.fits mpi/bb.fits.gz mpi/bc.fits
         mpi/g.fits)
for who in before after; do
  cli="${!who}"
  rm -rf "$who" && mkdir -p "$who/mpi"
  "$cli" extract -i a.fits.gz -p psf.fits -o $who/fa.fits.gz -m $who/ma.fits -w $grid -n 50 \
    >/dev/null 2>&1
  for d in $who $who/mpi; do
    printf 'a.fits.gz psf.fits %s/ba.fits\nb.fits psf.fits %s/bb.fits.gz\na.fits.gz psf.fits %s/bc.fits\n' \
      "$d" "$d" "$d" > "$d/list"
  done
  "$cli" extract --batch $who/list -w $grid -n 50 >/dev/null 2>&1
  OMP_NUM_THREADS=1 mpirun -np 3 "$cli" extract --batch $who/mpi/list -w $grid -n 50 \
    --bundlesize 25 >/dev/null 2>&1
  OMP_NUM_THREADS=1 mpirun -np 2 "$cli" extract -i b.fits -p psf.fits -o $who/mpi/g.fits -w $grid \
    -n 50 --bundlesize 10 >/dev/null 2>&1
done
pairs=()
for f in "${outputs[@]}"; do pairs+=("before/$f" "after/$f"); done
status=0
"$python" "$here/same_frames.py" "${pairs[@]}" || status=1

bench_before="$(dirname "$before")/../../perf/bench_extract"
bench_after="$(dirname "$after")/../../perf/bench_extract"
if [ -x "$bench_before" ] && [ -x "$bench_after" ]; then
  for solver in dense band; do
    digest() { "$1" --nbundles 2 --solver $solver --repeat 1 --stage-times 0 | grep "frame digest"; }
    a="$(digest "$bench_before")" b="$(digest "$bench_after")"
    if [ -n "$a" ] && [ "$a" = "$b" ]; then
      echo "SAME  bench_extract --solver $solver: ${a##* }"
    else
      echo "DIFFER  bench_extract --solver $solver: ${a##* } against ${b##* }"
      status=1
    fi
  done
fi
exit $status
