#!/usr/bin/env bash
# Builds the libFuzzer targets of the PSF and preproc readers with clang (ASan + UBSan), makes
# the seed corpus from small valid files written by kspecter's own writers, and runs each
# target for a bounded number of executions. Exits non-zero on any finding (crash, sanitizer
# report, uncaught exception, leak, timeout, out-of-memory) or when the time guard stops a
# target before it has run them all.
#
#   bash tests/fuzz/run_fuzz.sh                    # 20 000 executions per target (quick check)
#   bash tests/fuzz/run_fuzz.sh --runs 1000000     # the long run
#
# Options: --runs N (executions per target), --max-time S (guard per target, default 3600),
# --target psf|preproc|all, --build DIR (default build-fuzz), --fresh (forget the corpus the
# earlier runs grew), --skip-without-libfuzzer (exit 77, ctest's "skipped", instead of 1 when
# the compiler cannot build libFuzzer targets).
# Environment: CXX (default clang++), Kokkos_ROOT (where Kokkos_Macros.hpp is, default
# ~/.cache/kspecter-deps/kokkos-3.4.01-openmp), KSPECTER_FUZZ_TMPDIR (where each input is
# written, default /dev/shm).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
here="$root/tests/fuzz"
runs=20000 max_time=3600 targets="psf preproc" build="$root/build-fuzz" fresh=0 skip_without=0
while [ $# -gt 0 ]; do
  case "$1" in
    --runs) runs="$2"; shift 2 ;;
    --max-time) max_time="$2"; shift 2 ;;
    --target) [ "$2" = all ] && targets="psf preproc" || targets="$2"; shift 2 ;;
    --build) build="$2"; shift 2 ;;
    --fresh) fresh=1; shift ;;
    --skip-without-libfuzzer) skip_without=1; shift ;;
    *) sed -n '2,17p' "${BASH_SOURCE[0]}" >&2; exit 2 ;;
  esac
done
for t in $targets; do
  case "$t" in psf|preproc) ;; *) echo "run_fuzz: unknown target '$t'" >&2; exit 2 ;; esac
done

# 1. Build (incremental; at most 2 jobs: the machine is shared). Exit 77 (ctest's "skipped")
# with --skip-without-libfuzzer when the compiler cannot link a libFuzzer target.
cxx="${CXX:-clang++}"
probe="$(mktemp -d)"
echo 'extern "C" int LLVMFuzzerTestOneInput(const char*, unsigned long) { return 0; }' >"$probe/p.cpp"
if ! "$cxx" -fsanitize=fuzzer,address,undefined "$probe/p.cpp" -o "$probe/p" 2>/dev/null; then
  rm -rf "$probe"
  echo "run_fuzz: $cxx cannot link a libFuzzer target (clang with compiler-rt is needed)" >&2
  [ "$skip_without" = 1 ] && exit 77
  exit 1
fi
rm -rf "$probe"
if [ ! -f "$build/build.ninja" ]; then
  cmake -S "$here" -B "$build" -G Ninja -DCMAKE_CXX_COMPILER="$cxx" -DCMAKE_BUILD_TYPE=None \
    ${Kokkos_ROOT:+-DKokkos_ROOT="$Kokkos_ROOT"} >/dev/null
fi
cmake --build "$build" -j 2 >/dev/null

# 2. Seeds, rewritten every time from the current writers.
rm -rf "$build/seeds"
"$build/make_fuzz_seeds" "$build/seeds"

# 3. Fuzz. Huge allocations return null as they do outside ASan (CFITSIO checks its own);
# libFuzzer's -malloc_limit_mb (= -rss_limit_mb) still reports any single one over 2 GiB.
export ASAN_OPTIONS="allocator_may_return_null=1:detect_leaks=1${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}"
status=0
for t in $targets; do
  corpus="$build/corpus/$t"
  [ "$fresh" = 1 ] && rm -rf "$corpus"
  mkdir -p "$corpus" "$build/artifacts"
  log="$build/fuzz-$t.log"
  start=$(date +%s)
  rc=0
  # Inputs that once failed (tests/fuzz/regressions/<target>) run first, every time; the seed
  # is fixed (KSPECTER_FUZZ_SEED to vary it) so that a run on a fresh build is reproducible.
  "$build/fuzz_${t}_reader" -runs="$runs" -max_total_time="$max_time" -timeout=10 \
    -seed="${KSPECTER_FUZZ_SEED:-1}" \
    -rss_limit_mb=2048 -max_len=65536 -dict="$here/fits.dict" -print_final_stats=1 \
    -artifact_prefix="$build/artifacts/$t-" "$corpus" "$build/seeds/$t" \
    "$here/regressions/$t" >"$log" 2>&1 || rc=$?
  secs=$(( $(date +%s) - start ))
  done_runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  done_runs=${done_runs:-0}
  rate=$(( done_runs / (secs > 0 ? secs : 1) ))
  if [ "$rc" != 0 ]; then
    echo "fuzz $t: FINDING after $done_runs executions in $secs s (exit $rc); log: $log"
    grep -E '^(==[0-9]+==ERROR|SUMMARY|kspecter fuzz:|.*runtime error:|.*Test unit written)' "$log" | head -8
    status=1
  elif [ "$done_runs" -lt "$runs" ]; then
    echo "fuzz $t: the $max_time s guard stopped it after $done_runs of $runs executions ($rate/s)"
    status=1
  else
    echo "fuzz $t: $done_runs executions in $secs s ($rate/s): no crash, leak or hang" \
         "(corpus $(ls "$corpus" | wc -l) inputs)"
  fi
done
exit $status
