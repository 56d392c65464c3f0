#!/usr/bin/env bash
# kspecter on a GPU machine: build here, carry the result, run every test and benchmark there.
#
#   perf/gpu_run.sh prepare [--no-build] [--jobs N]   # here: CUDA Kokkos + kspecter, then stage
#   perf/gpu_run.sh stage                             # here: stage an existing build only
#   perf/gpu_run.sh run                               # there, from the repository root
#   perf/gpu_run.sh scaling [scaling.sh args]         # there: the strong-scaling exposure
#   perf/gpu_run.sh sanitize                          # there: compute-sanitizer on CUDA tests
#   perf/gpu_run.sh exec SCRIPT [ARGS]                # there: a script in the staged setting
#
# prepare: cmake/bootstrap-deps.sh --backend cuda, configure + build $KSPECTER_GPU_BUILD
#   (default build-cuda: nvcc_wrapper, static kspecter, Release), then stage. The Kokkos is the
#   patched 3.4.01, or the source tree $KSPECTER_GPU_KOKKOS_SRC (e.g. Kokkos 4.6.01:
#   KSPECTER_GPU_KOKKOS_SRC=<kokkos-4.6.01> KSPECTER_GPU_BUILD=build-cuda-k4 ... prepare);
#   perf/device/kokkos4_cuda.sh builds both on the GPU machine instead. KSPECTER_GPU_TARGETS
#   (say "kspecter_cli bench_extract") builds those targets only (a full CUDA build takes about
#   40 minutes on 2 cores).
# stage: copies into .gpu/ (ignored by git, carried by the device tool) what the device needs
#   and nothing else: the stripped executables, the CTest files, GoogleTest's discovery
#   script, the shared libraries a device image may lack, and the shared test data.
# run: prints the GPU (nvidia-smi) and `kspecter info`, runs CTest over the whole CUDA build
#   (serial, openmp, cuda, host and MPI tests; the consumer-project tests need a compiler
#   and the Kokkos install and are left to the CPU machine), then every bench_* executable,
#   writes logs under $OUT (or ./gpu-out) and prints a short summary last. Exit status 1 when
#   a test failed or could not run.
#
# Environment (run): KSPECTER_CTEST_ARGS (extra ctest arguments, e.g. "-R spots"),
#   KSPECTER_CTEST_JOBS (default 8), KSPECTER_SKIP_BENCH=1, KSPECTER_BENCH_ARGS (extra
#   arguments for every benchmark), KSPECTER_BENCH_TIMEOUT (s per benchmark, default 240),
#   KSPECTER_GPU_DEADLINE_S (whole run, default 540: the device tool stops a command at 600).
# Device call (the device tool's `run`, carry [".gpu"]):
#   bash perf/gpu_run.sh run
set -uo pipefail

mode="${1:-}"; shift || true
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)"
build_name="${KSPECTER_GPU_BUILD:-build-cuda}"
stage_name=".gpu"

die() { echo "gpu_run: $*" >&2; exit 2; }

# ============================================================================== here
do_build() {
  local jobs="${KSPECTER_BUILD_JOBS:-$(nproc)}" build=1
  while [ $# -gt 0 ]; do
    case "$1" in
      --no-build) build=0; shift ;;
      --jobs) jobs="$2"; shift 2 ;;
      *) die "prepare: unknown argument '$1'" ;;
    esac
  done
  set -e
  local bdir="$here/$build_name"
  if [ "$build" = 1 ]; then
    local t0=$SECONDS prefix
    prefix="$(bash "$here/cmake/bootstrap-deps.sh" --backend cuda \
      ${KSPECTER_GPU_KOKKOS_SRC:+--kokkos-src "$KSPECTER_GPU_KOKKOS_SRC"} |
      sed -n 's/^KOKKOS_PREFIX=//p' | tail -n1)"
    [ -n "$prefix" ] || die "bootstrap-deps.sh printed no KOKKOS_PREFIX"
    echo "gpu_run: Kokkos (CUDA) in $prefix ($((SECONDS - t0)) s)"
    t0=$SECONDS
    # Static kspecter so that the device needs no kspecter or Kokkos libraries; --as-needed
    # keeps libraries nobody calls (libmpi_cxx) out of the executables' needs.
    cmake -S "$here" -B "$bdir" -G Ninja -DCMAKE_BUILD_TYPE=Release \
      -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_CXX_COMPILER="$prefix/bin/nvcc_wrapper" \
      -DBUILD_SHARED_LIBS=OFF "-DCMAKE_EXE_LINKER_FLAGS=-Wl,--as-needed" ${KSPECTER_GPU_CMAKE_ARGS:-} >/dev/null
    cmake --build "$bdir" -j "$jobs" ${KSPECTER_GPU_TARGETS:+--target $KSPECTER_GPU_TARGETS}
    echo "gpu_run: kspecter CUDA build took $((SECONDS - t0)) s"
  fi
  set +e
  do_stage
}

do_stage() {
  set -e
  local bdir="$here/$build_name" dst="$here/$stage_name"
  [ -f "$bdir/CMakeCache.txt" ] || die "no build in $bdir: run 'perf/gpu_run.sh prepare' first"
  grep -q '^Kokkos_DIR:.*cuda' "$bdir/CMakeCache.txt" || echo "gpu_run: warning: $bdir does not look like a CUDA build" >&2
  local tmp="$bdir/.gpu-stage"
  rm -rf "$tmp"; mkdir -p "$tmp/build" "$tmp/lib" "$tmp/cmake" "$tmp/data"

  # CTest files (every folder) and the executables (no object files, no consumer project).
  (cd "$bdir" && find . -path ./CMakeFiles -prune -o -path './tests/consumer' -prune -o -path ./.gpu-stage -prune -o \
      \( -name CTestTestfile.cmake -o -name '*_include.cmake' -o -name '*_environment.cmake' \) -print) | while read -r f; do
    mkdir -p "$tmp/build/$(dirname "$f")"; cp "$bdir/$f" "$tmp/build/$f"
  done
  local exes
  exes="$(cd "$bdir" && find . -path '*/CMakeFiles' -prune -o -path './tests/consumer' -prune -o -path ./.gpu-stage -prune -o \
            -type f -perm -u+x ! -name '*.so*' ! -name '*.a' ! -name '*.sh' ! -name '*.cmake' -print)"
  for f in $exes; do
    file -b "$bdir/$f" | grep -q ELF || continue
    mkdir -p "$tmp/build/$(dirname "$f")"
    strip -o "$tmp/build/$f" "$bdir/$f"
  done
  # Names without brackets (gtest_discover_tests writes "exe[1]_include.cmake").
  (cd "$tmp/build" && for f in $(find . -name '*\[1\]_include.cmake'); do mv "$f" "${f//\[1\]/_1}"; done)
  find "$tmp/build" -name '*.cmake' -print0 | xargs -0 sed -i -e 's/\[1\]_include/_1_include/g' -e 's/\[1\]_tests/_1_tests/g'

  # GoogleTest's discovery script from this CMake (the device's CMake may live elsewhere),
  # and a longer discovery timeout: listing the tests starts CUDA.
  local gta
  gta="$(grep -rhoE '"[^"]*/GoogleTestAddTests\.cmake"' "$tmp/build" | head -n1 | tr -d '"' || true)"
  if [ -n "$gta" ]; then
    cp "$gta" "$tmp/cmake/"
    find "$tmp/build" -name '*_include.cmake' -print0 | xargs -0 sed -i \
      -e "s|\"$gta\"|\"$here/$stage_name/cmake/GoogleTestAddTests.cmake\"|" \
      -e 's/TEST_DISCOVERY_TIMEOUT \[==\[[0-9]*\]==\]/TEST_DISCOVERY_TIMEOUT [==[120]==]/'
  fi

  # Shared libraries: what the executables need beyond glibc, the GCC runtime, the CUDA
  # driver and MPI (those must come from the device: the driver matches its kernel module,
  # and Open MPI's libraries match its launcher and plugins). At run time only the ones the
  # device cannot resolve itself are used.
  local skip='^(linux-vdso|ld-linux|libc\.|libm\.|libdl\.|libpthread\.|librt\.|libresolv\.|libutil\.|libgcc_s\.|libstdc\+\+\.|libgomp\.|libatomic\.|libcuda\.|libnvidia-)'
  local mpi_closure="" libmpi
  libmpi="$(ldd $(for f in $exes; do echo "$bdir/$f"; done) 2>/dev/null | awk '/libmpi\.so/ && !m {print $3; m = 1}')"
  [ -n "$libmpi" ] && mpi_closure="$(ldd "$libmpi" | awk '/=>/ {print $1}' | tr '\n' ' ') $(basename "$libmpi")"
  for f in $exes; do ldd "$bdir/$f" 2>/dev/null; done | awk '/=> \// {print $1, $3}' | sort -u | \
  while read -r name path; do
    [[ "$name" =~ $skip ]] && continue
    [[ "$name" =~ ^libmpi ]] && continue
    case " $mpi_closure " in *" $name "*) continue ;; esac
    cp -L "$path" "$tmp/lib/$name"
  done

  # Shared test data (the default ../shared/data does not travel).
  local data="${KSPECTER_TEST_DATA:-$here/../shared/data}"
  if [ -d "$data" ]; then cp -L "$data"/* "$tmp/data/" 2>/dev/null || true; fi

  local mpiexec
  mpiexec="$(sed -n 's/^MPIEXEC_EXECUTABLE:FILEPATH=//p' "$bdir/CMakeCache.txt")"
  {
    echo "KSPECTER_SRC_DIR=$here"
    echo "KSPECTER_BUILD_DIR=$bdir"
    echo "KSPECTER_BUILD_NAME=$build_name"
    echo "KSPECTER_MPIEXEC=$mpiexec"
    echo "KSPECTER_STAGED_AT='$(date -u '+%Y-%m-%d %H:%M:%S UTC')'"
    echo "KSPECTER_BUILT_AT='$(date -u -r "$(ls -t $(for f in $exes; do echo "$bdir/$f"; done) | head -n1)" '+%Y-%m-%d %H:%M:%S UTC')'"
    echo "KSPECTER_GIT='$(git -C "$here" describe --always --dirty 2>/dev/null || echo unknown)'"
  } > "$tmp/manifest.env"

  # Executables and libraries travel as one xz tarball (about a sixth of their size).
  local n_exe n_lib
  n_exe=$(find "$tmp/build" -type f -perm -u+x | wc -l); n_lib=$(ls "$tmp/lib" | wc -l)
  (cd "$tmp" && tar cf - build lib | xz -T0 -6 > payload.tar.xz && rm -rf build lib)
  rm -rf "$dst"; mv "$tmp" "$dst"
  echo "gpu_run: staged $n_exe executables, $n_lib libraries, $(ls "$dst/data" | wc -l) data files" \
       "in $dst: $(du -sh "$dst" | cut -f1) (the device tool carries at most 64 MiB with the tree)"
  local kib; kib=$(du -sk "$dst" | cut -f1)
  [ "$kib" -lt 57344 ] || echo "gpu_run: warning: $dst is $((kib / 1024)) MiB; the tree + carry must stay under 64 MiB" >&2
}

# ============================================================================== there
do_run() {
  local t0; t0=$(date +%s)
  local deadline=$(( t0 + ${KSPECTER_GPU_DEADLINE_S:-540} ))
  left() { echo $(( deadline - $(date +%s) )); }
  local root="$here" stage="$here/$stage_name"
  [ -f "$stage/manifest.env" ] || die "no $stage_name/manifest.env: run 'perf/gpu_run.sh prepare' here and carry $stage_name"
  if [ -f "$stage/payload.tar.xz" ] && [ ! -d "$stage/build" ]; then
    if command -v xz >/dev/null 2>&1; then
      tar xJf "$stage/payload.tar.xz" -C "$stage"
    else
      python3 -c 'import sys, tarfile; tarfile.open(sys.argv[1]).extractall(sys.argv[2])' "$stage/payload.tar.xz" "$stage"
    fi || die "cannot unpack $stage/payload.tar.xz"
  fi
  # shellcheck disable=SC1091
  source "$stage/manifest.env"
  local out="${OUT:-$root/gpu-out}"; mkdir -p "$out"
  local tmp; tmp="$(mktemp -d)"
  local sys="$out/system.txt" summary="$out/summary.txt"
  : > "$summary"

  # ---- paths: the build recorded absolute paths (CTest files, the CLI path baked into tests)
  local bdir_rel="${KSPECTER_BUILD_DIR#"$KSPECTER_SRC_DIR"/}"
  if [ -d "$root/$bdir_rel" ] && [ ! -L "$root/$bdir_rel" ]; then
    die "$root/$bdir_rel is a real folder here; the staged build goes there as a link to $stage_name/build"
  fi
  ln -sfn "$stage_name/build" "$root/$bdir_rel"
  local paths="symlink"
  if [ "$root" != "$KSPECTER_SRC_DIR" ]; then
    if [ ! -e "$KSPECTER_SRC_DIR" ] || [ -L "$KSPECTER_SRC_DIR" ]; then
      mkdir -p "$(dirname "$KSPECTER_SRC_DIR")" && ln -sfn "$root" "$KSPECTER_SRC_DIR" || paths="rewrite"
    else
      paths="rewrite"
    fi
  fi
  if [ "$paths" = rewrite ]; then
    # $KSPECTER_SRC_DIR is taken on this machine: point the CTest files here instead
    # (paths compiled into test executables, e.g. the CLI's, then stay wrong).
    find "$stage/build" -name '*.cmake' -print0 | xargs -0 sed -i \
      -e "s|$KSPECTER_BUILD_DIR|$root/$bdir_rel|g" -e "s|$KSPECTER_SRC_DIR|$root|g"
  fi
  local bdir="$root/$bdir_rel"

  export KSPECTER_TEST_DATA="$stage/data"
  # Benchmarks look for <source>/../shared/data (compiled in); through the link above that is
  # the repository's parent folder. Point both spellings at the carried data when absent.
  local d
  for d in "$(dirname "$KSPECTER_SRC_DIR")/shared" "$(dirname "$root")/shared"; do
    [ -e "$d/data" ] || { mkdir -p "$d" && ln -sfn "$stage/data" "$d/data"; } 2>/dev/null || true
  done
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
  export KOKKOS_DISABLE_WARNINGS=1

  # ---- libraries: the device's own first; carried copies only for what it cannot resolve
  mkdir -p "$stage/lib-use"
  local exes; exes="$(find "$stage/build" -type f -perm -u+x)"
  local i missing
  for i in 1 2 3 4; do
    missing="$(for e in $exes; do LD_LIBRARY_PATH="$stage/lib-use${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" ldd "$e" 2>/dev/null; done \
               | awk '/not found/ {print $1}' | sort -u)"
    local added=0
    for m in $missing; do
      if [ -f "$stage/lib/$m" ] && [ ! -e "$stage/lib-use/$m" ]; then ln -s "../lib/$m" "$stage/lib-use/$m"; added=1; fi
    done
    [ "$added" = 1 ] || break
  done
  export LD_LIBRARY_PATH="$stage/lib-use${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  local unresolved
  unresolved="$(for e in $exes; do ldd "$e" 2>/dev/null; done | awk '/not found/ {print $1}' | sort -u | tr '\n' ' ')"

  # ---- MPI launcher: the one recorded at build time, else this machine's
  local mpiexec="$KSPECTER_MPIEXEC"
  if [ -n "$mpiexec" ] && [ ! -x "$mpiexec" ]; then
    local dev_mpiexec; dev_mpiexec="$(command -v mpiexec || command -v mpirun || true)"
    if [ -n "$dev_mpiexec" ]; then
      find "$stage/build" -name CTestTestfile.cmake -print0 | xargs -0 sed -i "s|\"$mpiexec\"|\"$dev_mpiexec\"|g"
      mpiexec="$dev_mpiexec"
    fi
  fi

  # ---- the machine
  {
    echo "== date";            date -u
    echo "== staged";          echo "$KSPECTER_STAGED_AT, git $KSPECTER_GIT, paths by $paths"
    echo "== nvidia-smi";      nvidia-smi 2>&1
    echo "== gpu";             nvidia-smi --query-gpu=name,memory.total,driver_version,compute_cap --format=csv 2>&1
    echo "== os";              (. /etc/os-release 2>/dev/null; echo "$PRETTY_NAME"); uname -r; nproc
    echo "== compilers";       (gcc --version 2>&1 | head -n1); (nvcc --version 2>&1 | tail -n2 | head -n1)
    echo "== mpi";             echo "launcher: ${mpiexec:-none}"; ("${mpiexec:-mpiexec}" --version 2>&1 | head -n2)
    echo "== libraries";       echo "carried and used: $(ls "$stage/lib-use" | tr '\n' ' ')"; echo "unresolved: ${unresolved:-none}"
  } > "$sys" 2>&1
  local gpu; gpu="$(nvidia-smi --query-gpu=name,memory.total,compute_cap --format=csv,noheader 2>/dev/null | head -n1)"

  local cli="$bdir/src/cli/kspecter" info_rc=1
  {
    echo "== kspecter info"
    if [ -x "$cli" ]; then timeout 120 "$cli" info; info_rc=$?; echo "(exit $info_rc)"; else echo "no $cli"; fi
    if [ -x "$cli" ] && [ -n "$mpiexec" ] && [ -x "$mpiexec" ]; then
      echo "== $mpiexec -n 2 kspecter info"; timeout 120 "$mpiexec" -n 2 --oversubscribe "$cli" info; echo "(exit $?)"
    fi
  } > "$tmp/info.txt" 2>&1
  cat "$tmp/info.txt" >> "$sys"
  echo "---- kspecter info"; sed -n '/== kspecter info/,/(exit/p' "$tmp/info.txt"

  if [ "$mode" != run ]; then
    local rc
    case "$mode" in
      scaling) device_scaling "$@"; rc=$? ;;
      sanitize) device_sanitize "$@"; rc=$? ;;
      exec)
        # A diagnosis script in the staged setting: it finds the build, the CLI, the launcher
        # and the output folder in the environment.
        [ $# -ge 1 ] || die "exec: name a script"
        KSPECTER_BDIR="$bdir" KSPECTER_CLI="$cli" KSPECTER_MPIEXEC="$mpiexec" OUT="$out" bash "$@"
        rc=$? ;;
    esac
    rm -rf "$tmp"
    return $rc
  fi

  # ---- tests
  local ctest_rc=0 ctest_log="$out/ctest.log"
  local junit=(); ctest --help 2>/dev/null | grep -q -- '--output-junit' && junit=(--output-junit "$out/ctest-junit.xml")
  local budget=$(( $(left) - 120 )); [ "$budget" -gt 60 ] || budget=60
  echo "---- ctest (budget ${budget} s)"
  local discovery_failed="" attempt
  # An executable that cannot list its tests stops the whole of CTest: turn such ones into
  # one failing test each (its output then shows why) and run CTest again.
  neutralize() {  # $1 = executable
    local inc; inc="$(dirname "$1")/$(basename "$1")_1_include.cmake"
    [ -f "$inc" ] || return 1
    printf 'add_test(%s_cannot_list_tests "%s" --gtest_list_tests)\nset_tests_properties(%s_cannot_list_tests PROPERTIES LABELS discovery)\n' \
      "$(basename "$1")" "$1" "$(basename "$1")" > "$inc"
    discovery_failed+="$(basename "$1") "
  }
  for attempt in 1 2 3; do
    (cd "$bdir" && timeout --signal=TERM --kill-after=20 "$budget" \
        ctest --output-on-failure --timeout 300 -j "${KSPECTER_CTEST_JOBS:-8}" -E '^consumer_' \
              "${junit[@]}" ${KSPECTER_CTEST_ARGS:-}) > "$ctest_log" 2>&1
    ctest_rc=$?
    local bad; bad="$(sed -n "s/^ *Path: '\(.*\)'\$/\1/p" "$ctest_log" | sort -u)"
    [ -n "$bad" ] && ! grep -q 'tests passed' "$ctest_log" || break
    cp "$ctest_log" "$out/ctest-discovery.log"
    if [ "$attempt" = 1 ]; then
      # Check every executable once, in parallel, rather than one per CTest round.
      local exe_list; exe_list="$(grep -h '^if(EXISTS "' $(find "$stage/build" -name '*_1_include.cmake') | sed 's/^if(EXISTS "\(.*\)")$/\1/')"
      bad="$bad $(printf '%s\n' $exe_list | xargs -P 8 -I{} sh -c 'timeout 120 "{}" --gtest_list_tests >/dev/null 2>&1 || echo "{}"')"
    fi
    local e; for e in $(printf '%s\n' $bad | sort -u); do neutralize "$e"; done
    budget=$(( $(left) - 120 )); [ "$budget" -gt 60 ] || budget=60
  done
  local ctest_line; ctest_line="$(grep -E 'tests passed|No tests were found' "$ctest_log" | tail -n1)"
  [ "$ctest_rc" = 124 ] && ctest_line="ctest stopped at its ${budget} s budget; ${ctest_line}"
  local failed; failed="$(sed -n '/The following tests FAILED/,$p' "$ctest_log" | grep -E '^\s+[0-9]+ - ' | sed 's/^\s*//')"
  tail -n 40 "$ctest_log"

  # per-label counts (labels: serial, openmp, cuda, host, mpi)
  local labels=""
  for l in cuda openmp serial host mpi discovery; do
    local n nf
    n="$(cd "$bdir" && ctest -N -L "^$l\$" -E '^consumer_' ${KSPECTER_CTEST_ARGS:-} 2>/dev/null | sed -n 's/^Total Tests: //p')"
    [ -n "$n" ] && [ "$n" != 0 ] || continue
    nf="$(cd "$bdir" && ctest -N -L "^$l\$" -E '^consumer_' 2>/dev/null | grep -E '^\s+Test\s+#' | awk '{print $3}' \
          | grep -cxF -f <(echo "$failed" | awk '{print $3}') || true)"
    labels+="$l $((n - nf))/$n  "
  done

  # ---- end to end: a full r frame from the real PSF through the command line. Simulate
  # (host), extract on the GPU and on the host cores, compare the two: the frame time, the
  # pulls against the truth and the CPU-vs-GPU agreement.
  local e2e_lines=""
  if [ "${KSPECTER_SKIP_E2E:-0}" != 1 ] && [ -x "$cli" ] && [ -f "$stage/data/psf-r0-00067784.fits" ] && [ "$(left)" -gt 150 ]; then
    local elog="$out/e2e.log" edir="$tmp/e2e" psf="$stage/data/psf-r0-00067784.fits"
    mkdir -p "$edir"
    timed() {  # label command...: runs it, then prints "<label> wall <seconds> s"
      local label="$1" t0; shift; t0=$(date +%s.%N)
      "$@"; local rc=$?
      echo "$label wall $(echo "$(date +%s.%N) $t0" | awk '{printf "%.2f", $1 - $2}') s (exit $rc)"
    }
    {
      echo "== simulate"; timed simulate timeout 120 "$cli" simulate --psf "$psf" -o "$edir/preproc.fits" --seed 1
      echo "== simulate --noiseless"; timeout 120 "$cli" simulate --psf "$psf" -o "$edir/clean.fits" --seed 1 --noiseless -n 25
      for be in cuda openmp; do
        echo "== extract --backend $be"
        timed "extract $be" timeout 200 "$cli" extract -i "$edir/preproc.fits" -p "$psf" -o "$edir/frame-$be.fits" --backend "$be" --log-level debug
      done
      echo "== extract --backend cuda, noiseless bundle"
      timeout 100 "$cli" extract -i "$edir/clean.fits" -p "$psf" -o "$edir/clean-cuda.fits" -n 25 --backend cuda
      echo "== compare cuda openmp"; timeout 60 "$cli" compare "$edir/frame-cuda.fits" "$edir/frame-openmp.fits"
      if [ -n "$mpiexec" ] && [ -x "$mpiexec" ]; then
        for np in 2 4; do  # ranks sharing the one GPU; the frame must be the 1-rank frame
          echo "== mpiexec -n $np extract --backend cuda"
          timed "extract cuda $np ranks" timeout 120 "$mpiexec" -n "$np" --oversubscribe -x OMP_NUM_THREADS=2 \
            "$cli" extract -i "$edir/preproc.fits" -p "$psf" -o "$edir/frame-np$np.fits" --backend cuda --no-truth
          echo "== compare 1 rank, $np ranks"; timeout 60 "$cli" compare --max-pull 0 "$edir/frame-cuda.fits" "$edir/frame-np$np.fits"
        done
      fi
    } > "$elog" 2>&1
    e2e_lines="$(grep -E '^(extracted|pull against|max \|pull|max \|divar|max \|dR|AGREE|DIFFER|simulate wall|extract (cuda|openmp)[ 0-9a-z]* wall|== compare)' "$elog" | sed 's/^/  /')"
    echo "---- end to end"; cat "$elog" | grep -v '^\[kspecter.*kspecter::' | tail -n 40
  fi

  # ---- benchmarks
  local bench_lines=""
  if [ "${KSPECTER_SKIP_BENCH:-0}" != 1 ]; then
    local blog="$out/bench.log" jdir="$tmp/bench-json"; mkdir -p "$jdir"; : > "$blog"
    for b in $(find "$bdir/" -type f -perm -u+x -name 'bench_*' | sort); do
      local name; name="$(basename "$b")"
      local l; l=$(left)
      if [ "$l" -lt 40 ]; then bench_lines+="  $name: skipped (run deadline)"$'\n'; continue; fi
      local tmo=${KSPECTER_BENCH_TIMEOUT:-240}; [ "$tmo" -lt $((l - 20)) ] || tmo=$((l - 20))
      local extra=()
      grep -q benchmark_out_format "$b" && extra=(--benchmark_out="$jdir/$name.json" --benchmark_out_format=json)
      echo "==== $name $(date -u +%T)" >> "$blog"
      local bt0=$SECONDS
      (cd "$(dirname "$b")" && timeout --kill-after=10 "$tmo" "$b" "${extra[@]}" ${KSPECTER_BENCH_ARGS:-}) >> "$blog" 2>&1
      local brc=$?
      echo "==== $name exit $brc after $((SECONDS - bt0)) s" >> "$blog"
      bench_lines+="  $name: exit $brc, $((SECONDS - bt0)) s"$'\n'
    done
    [ -n "$(ls "$jdir")" ] && tar czf "$out/bench-json.tar.gz" -C "$jdir" .
    [ -s "$blog" ] || rm -f "$blog"
    [ -n "$bench_lines" ] && { echo "---- benchmarks"; tail -n 60 "$out/bench.log" 2>/dev/null; }
  fi

  # ---- summary (last)
  {
    echo "================ kspecter GPU run summary"
    echo "gpu:        ${gpu:-none found}"
    echo "staged:     $KSPECTER_STAGED_AT (newest executable ${KSPECTER_BUILT_AT:-?}; tree at staging: git $KSPECTER_GIT)"
    sed -n '1,/^(exit/p' "$tmp/info.txt" | grep -E '^(gpu|backends|kokkos|mpi) ' | sed 's/^/info:       /'
    grep -E '^mpi .*ranks' "$tmp/info.txt" | sed 's/^/info -n 2:  /'
    [ "$info_rc" = 0 ] || echo "info:       kspecter info FAILED (exit $info_rc)"
    echo "libraries:  carried+used: $(ls "$stage/lib-use" | tr '\n' ' ')${unresolved:+; UNRESOLVED: $unresolved}"
    echo "ctest:      ${ctest_line:-no summary line (exit $ctest_rc)}"
    [ -n "$discovery_failed" ] && echo "could not list their tests (each counted as one failed test): $discovery_failed"
    [ -n "$labels" ] && echo "by label:   $labels"
    if [ -n "$failed" ]; then echo "failed:"; echo "$failed" | head -n 30 | sed 's/^/  /'; fi
    [ -n "$e2e_lines" ] && { echo "end to end (real PSF, full frame):"; echo "$e2e_lines"; }
    if [ -n "$bench_lines" ]; then echo "benchmarks:"; printf '%s' "$bench_lines"; else echo "benchmarks: none found"; fi
    echo "not run:    consumer_* (needs a compiler and the Kokkos install; the CPU CI runs it)"
    echo "wall:       $(( $(date +%s) - t0 )) s; logs in $out"
  } >> "$summary"
  echo; cat "$summary"
  rm -rf "$tmp"
  [ "$ctest_rc" = 0 ] && [ "$info_rc" = 0 ]
}

# The exposure of perf/scaling.sh extracted at 1, 2, 4 ... GPUs (one rank per GPU, ranks
# unbound so that each rank's I/O thread has cores of its own). Arguments go to scaling.sh.
device_scaling() {
  local ngpu; ngpu="$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')"
  local ranks="${KSPECTER_SCALING_RANKS:-}"
  if [ -z "$ranks" ]; then for n in 1 2 4 8; do [ "$n" -le "$ngpu" ] && ranks+="$n "; done; fi
  echo "---- scaling on $ngpu GPU(s), ranks: $ranks"
  bash "$root/perf/scaling.sh" --kspecter "$cli" --out "$out" --ranks "$ranks" --backend cuda \
    --psf-r "$stage/data/psf-r0-00067784.fits" --mpiexec "$mpiexec" \
    --mpi-args "--oversubscribe --bind-to none" --sim-jobs 8 "$@"
}

# compute-sanitizer (memcheck, racecheck, initcheck) over every CUDA test executable and a
# CLI extraction of a small synthetic frame; a tool's findings fail it (--error-exitcode).
# KSPECTER_SANITIZE_TOOLS, KSPECTER_SANITIZE_EXES (a regex of executables) and
# KSPECTER_SANITIZE_FILTER (a gtest filter) narrow it; KSPECTER_SANITIZE_SPLIT=1 one test a process.
device_sanitize() {
  local cs; cs="$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -n1)"
  [ -n "$cs" ] || { echo "no compute-sanitizer on this machine"; return 1; }
  local slog="$out/sanitize" exes all=0
  mkdir -p "$slog"
  exes="$(find "$bdir/tests" -type f -perm -u+x -name '*_cuda' | grep -E "${KSPECTER_SANITIZE_EXES:-.}" | sort)"
  "$cs" --version | tail -n1
  # A small frame for the CLI: 30 fibers of the synthetic PSF on a narrow CCD, 150 bins.
  timeout 120 "$cli" make-psf --log-level quiet -o "$tmp/san-psf.fits" --nfiber 30 --ccd 300,4128 &&
    timeout 120 "$cli" simulate --log-level quiet --psf "$tmp/san-psf.fits" -o "$tmp/san.fits" --seed 3 -w 6000,6120,0.8 || true
  # Jobs: (tool, executable, gtest filter). KSPECTER_SANITIZE_SPLIT=1 runs every test of an
  # executable as its own process, so that a slow tool (racecheck, initcheck) spreads over
  # the cores. At most KSPECTER_SANITIZE_JOBS (default: the cores) run at once.
  local jobs=() tool e t
  for tool in ${KSPECTER_SANITIZE_TOOLS:-memcheck racecheck initcheck}; do
    for e in $exes; do
      if [ "${KSPECTER_SANITIZE_SPLIT:-0}" = 1 ]; then
        for t in $("$e" --gtest_list_tests --gtest_filter="${KSPECTER_SANITIZE_FILTER:-*}" 2>/dev/null | \
                   awk '/^[^ ]/ {suite = $1} /^  / {print suite $1}'); do
          jobs+=("$tool|$e|$t")
        done
      else
        jobs+=("$tool|$e|${KSPECTER_SANITIZE_FILTER:-*}")
      fi
    done
    [ -f "$tmp/san.fits" ] && jobs+=("$tool|kspecter_extract|")
  done
  local max="${KSPECTER_SANITIZE_JOBS:-$(nproc)}" running=0 j
  run_job() {  # tool|exe|filter -> one log and one summary line
    local tool="${1%%|*}" rest="${1#*|}"; local e="${rest%%|*}" filter="${rest#*|}"
    local extra=(); [ "$tool" = memcheck ] && extra=(--leak-check full)
    local name; name="$(basename "$e")${filter:+.${filter//[^A-Za-z0-9_.]/_}}"
    local log="$slog/$tool-$name.log" rc verdict
    local sanitized=(timeout --kill-after=10 "${KSPECTER_SANITIZE_TIMEOUT:-420}" "$cs" --tool "$tool"
                     "${extra[@]}" --error-exitcode 99 --print-limit 20)
    if [ "$e" = kspecter_extract ]; then
      "${sanitized[@]}" "$cli" extract -i "$tmp/san.fits" -p "$tmp/san-psf.fits" -o "$tmp/san-$tool.h5" \
        -w 6000,6120,0.8 --bundlesize 10 --nsubbundles 2 --backend cuda --no-truth > "$log" 2>&1
    else
      ( cd "$(dirname "$e")" && "${sanitized[@]}" "$e" --gtest_filter="$filter" ) > "$log" 2>&1
    fi
    rc=$?
    local summary_line; summary_line="$(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|LEAK SUMMARY' "$log" | tail -n1)"
    local tests_line; tests_line="$(grep -E '^\[  (PASSED|FAILED)  \]' "$log" | head -n1)"
    case $rc in 0) verdict=clean ;; 99) verdict=FINDINGS ;; 124|137) verdict=TIMEOUT ;; *) verdict="exit $rc" ;; esac
    printf '%-10s %-60s %-9s %s %s\n' "$tool" "$name" "$verdict" "${summary_line:-}" "${tests_line:-}" | tee -a "$slog/results.txt"
    # A finding's first report, on the console at once (a run cut short still shows it).
    [ "$rc" = 99 ] && grep -E -m1 -A14 '^========= (Error|Warning|Race|Invalid|Uninit|Host API)' "$log" | head -n 16
  }
  : > "$slog/results.txt"
  for j in "${jobs[@]}"; do
    if [ "$running" -ge "$max" ]; then wait -n; running=$((running - 1)); fi
    run_job "$j" & running=$((running + 1))
  done
  wait
  sort "$slog/results.txt" | tee -a "$out/summary.txt"
  grep -qvE ' clean ' "$slog/results.txt" && all=1  # each finding's first report came as it ran
  # One archive: the device tool returns a limited number of files.
  tar czf "$out/sanitize-logs.tar.gz" -C "$slog" . && rm -rf "$slog"
  return $all
}

case "$mode" in
  prepare) do_build "$@" ;;
  stage)   do_stage ;;
  run|scaling|sanitize|exec) do_run "$@" ;;
  *) sed -n '2,29p' "$0"; exit 2 ;;
esac
