#!/usr/bin/env bash
# The architecture check must fail where the code breaks docs/architecture.md, and only there:
# a scratch tree with the real doc, files that break each kind of rule and files that follow
# them. Usage: check_catches_violations.sh SOURCE_ROOT
set -euo pipefail
src="$(cd "${1:?usage: $0 SOURCE_ROOT}" && pwd)"
check="$src/cmake/check-architecture.sh"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

put() {  # put PATH LINE... : a source file of the scratch tree
  local path="$tmp/$1"
  shift
  mkdir -p "$(dirname "$path")"
  printf '%s\n' "$@" >"$path"
}

mkdir -p "$tmp/docs"
cp "$src/docs/architecture.md" "$tmp/docs/"

# Files that follow the doc (the arrows extract -> solve and parallel -> io, a room's own
# private header, an impl/ header used in its own room, standard and free headers).
put include/kspecter/solve/batched.hpp '#include <kspecter/solve/impl/dense/cholesky.hpp>' \
  '#include <Kokkos_Core.hpp>' '#include <vector>'
put include/kspecter/solve/impl/dense/cholesky.hpp '#include <kspecter/core/error.hpp>'
put include/kspecter/core/error.hpp '#include <stdexcept>'
put src/extract/kernels.hpp '#include <kspecter/core/error.hpp>'
put src/extract/ok.cpp '#include "kernels.hpp"' '#include <kspecter/solve/batched.hpp>' \
  '  #  include <kspecter/psf/spots.hpp>' '#include "generated_by_the_build.hpp"' \
  'void f() { Kokkos::parallel_for("kspecter::extract::x", 1, g); }'
put src/parallel/job.cpp '#include <kspecter/io/frame_file.hpp>' '#include <mpi.h>' \
  '// parallel/ never calls parallel_for itself' 'void h() { Kokkos::deep_copy(a, b); }'
put src/io/reader.cpp '#include <fitsio.h>' '#include <hdf5.h>' '#include "../io/reader.hpp"'
put src/io/reader.hpp '#include <string>'

out="$(bash "$check" "$tmp" 2>&1)" || fail "a tree that follows the doc was refused: $out"

# Each line below breaks one rule; the check must name each, and nothing else.
put include/kspecter/solve/bad_arrow.hpp '#include <kspecter/psf/spots.hpp>'
put src/extract/bad_io.cpp '#include <kspecter/io/frame_file.hpp>'
put src/cli/bad_private.cpp '#include "../extract/kernels.hpp"'
put src/sim/bad_impl.cpp '#include <kspecter/solve/impl/dense/cholesky.hpp>'
put src/psf/bad_mpi.cpp '#include <mpi.h>'
put src/io/bad_kokkos.cpp '#include <Kokkos_Core.hpp>'
put src/parallel/bad_kernel.cpp 'void k() { Kokkos::parallel_reduce("x", 10, f, s); }'
put src/nowhere/bad_room.cpp '#include <vector>'
put src/core/bad_unknown.cpp '#include <kspecter/nowhere/x.hpp>'

set +e
out="$(bash "$check" "$tmp" 2>&1)"
rc=$?
set -e
[ "$rc" = 1 ] || fail "exit status $rc for a tree with violations (want 1): $out"
expect() {
  grep -qF -- "$1" <<<"$out" || fail "the report does not mention: $1
--- report:
$out"
}
expect 'include/kspecter/solve/bad_arrow.hpp:1: <kspecter/psf/spots.hpp>: the arrow solve -> psf'
expect 'src/extract/bad_io.cpp:1: <kspecter/io/frame_file.hpp>: the arrow extract -> io'
expect 'src/cli/bad_private.cpp:1: "../extract/kernels.hpp" is private to room '"'extract'"
expect 'src/sim/bad_impl.cpp:1: <kspecter/solve/impl/dense/cholesky.hpp> is private to room '"'solve'"
expect 'src/psf/bad_mpi.cpp:1: <mpi.h> belongs to room(s) parallel python only'
expect 'src/io/bad_kokkos.cpp:1: <Kokkos_Core.hpp> belongs to room(s)'
expect "src/parallel/bad_kernel.cpp:1: room 'parallel' launches no kernel"
expect "src/nowhere/bad_room.cpp: room 'nowhere' is not in docs/architecture.md"
expect "src/core/bad_unknown.cpp:1: <kspecter/nowhere/x.hpp>: room 'nowhere' is not in"
expect 'check-architecture: 9 problem(s)'
for good in ok.cpp job.cpp reader.cpp batched.hpp; do
  grep -qF "/$good" <<<"$out" && fail "a file that follows the doc was reported ($good): $out"
done

# A doc without its arrows table is an error of its own (2), not a pass.
sed -i '/check-architecture: arrows/,/check-architecture: end/d' "$tmp/docs/architecture.md"
set +e
out="$(bash "$check" "$tmp" 2>&1)"
rc=$?
set -e
[ "$rc" = 2 ] || fail "exit status $rc without an arrows table (want 2): $out"
echo "check_catches_violations: every violation reported, nothing else"
