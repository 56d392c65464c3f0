#!/usr/bin/env bash
# Checks every tracked C++ file against .clang-format (the house style); exit 1 lists the
# files that differ. `cmake/check-format.sh --fix` formats them in place.
#
# The style is pinned to Debian's clang-format 14 (what CI and the dev machines install):
# other major versions break lines differently, so they are refused rather than trusted.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
fix=0
[ "${1:-}" = --fix ] && fix=1
cf=""
for c in clang-format-14 clang-format; do
  if command -v "$c" >/dev/null 2>&1 && "$c" --version | grep -q 'version 14\.'; then cf="$c"; break; fi
done
[ -n "$cf" ] || { echo "check-format: needs clang-format 14 (Debian: apt-get install clang-format-14)" >&2; exit 2; }
mapfile -t files < <(git ls-files '*.cpp' '*.hpp' '*.h' '*.cu')
if [ "$fix" = 1 ]; then
  "$cf" -i "${files[@]}"
  exit 0
fi
bad=()
for f in "${files[@]}"; do
  "$cf" --dry-run "$f" 2>&1 | grep -q warning && bad+=("$f")
done
if [ ${#bad[@]} -gt 0 ]; then
  echo "check-format: ${#bad[@]} file(s) differ from .clang-format (fix: bash cmake/check-format.sh --fix):" >&2
  printf '  %s\n' "${bad[@]}" >&2
  exit 1
fi
echo "check-format: ${#files[@]} files follow .clang-format"
