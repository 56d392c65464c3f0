#!/usr/bin/env bash
# Lays out DESI's Python pipeline beside kspecter, outside the repo, for the tests and tools that
# run desispec's own code (tests/python/desispec/, perf/device/desispec_gpu.sh): desispec,
# desiutil, desitarget, desimodel, specter and gpu_specter at the commits below, cloned from
# their public repositories (or from local clones or snapshots of them), and the Debian packages
# they import. Nothing of theirs enters kspecter's tree.
#
#   bash perf/desi_env.sh                       # clones into ~/.cache/kspecter-desi
#   bash perf/desi_env.sh --into DIR --from SRC --apt
#   source ~/.cache/kspecter-desi/env.sh        # PYTHONPATH, KSPECTER_DESISPEC
#
# --from SRC: where the repositories are: a URL prefix (default https://github.com/desihub/,
# each repository is SRC<name>), or a folder holding <name>/ or desihub+<name>/repo (git
# directories or clones). A snapshot that lacks some large blobs (test data) still lays out:
# the files whose blobs are missing are left out, and named.
# --apt: also install the Debian packages (needs root): python3-numpy, -astropy, -fitsio,
# -yaml, -scipy, -healpy, -numba (specter imports numba), -mpi4py.
set -euo pipefail
into="$HOME/.cache/kspecter-desi" from="https://github.com/desihub/" apt=0
while [ $# -gt 0 ]; do
  case "$1" in
    --into) into="$2"; shift 2 ;;
    --from) from="$2"; shift 2 ;;
    --apt) apt=1; shift ;;
    *) sed -n '2,18p' "${BASH_SOURCE[0]}" >&2; exit 2 ;;
  esac
done

# The commits kspecter's desispec tests were last run against (perf/gpu_runs.md, issue notes).
pins="desispec efd9676fc8e6b2e771d69ec862bd0edc936d0804
desiutil 21de6be6fe8e42ef118faf70de5588b400993aa2
desitarget a9ee318ff29c60b0e2d36437929569f6f4dccf83
desimodel c93d46d069e30f9dbea0c8325e71d85027aaebf0
specter b8490d38738a6a6ac65cbec0b75faf6c7155d008
gpu_specter 116b964f36c5c742b23973fb4fc10137cc6b688f"

if [ "$apt" = 1 ]; then
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q python3-numpy python3-astropy \
    python3-fitsio python3-yaml python3-scipy python3-healpy python3-numba python3-mpi4py
fi

source_of() {  # the clone source of repository $1
  if [ -d "$from/$1" ]; then echo "$from/$1"
  elif [ -d "$from/desihub+$1/repo" ]; then echo "$from/desihub+$1/repo"
  elif [ -d "$from" ]; then echo "desi_env: $from holds neither $1/ nor desihub+$1/repo" >&2; return 1
  else echo "$from$1"; fi
}

checkout() {  # repository dir $1 at commit $2, leaving out files whose blobs are missing
  local dir="$1" commit="$2" missing
  if git -C "$dir" checkout -q --force "$commit" 2>/dev/null; then return; fi
  missing="$(git -C "$dir" ls-tree -r "$commit" | while read -r _ _ obj path; do
    git -C "$dir" cat-file -e "$obj" 2>/dev/null || echo "$path"; done)"
  git -C "$dir" ls-tree -r --name-only "$commit" | grep -vxF -f <(printf '%s\n' "$missing") |
    tr '\n' '\0' | xargs -0 git -C "$dir" checkout -q "$commit" --
  echo "desi_env: $(basename "$dir"): left out $(printf '%s\n' "$missing" | grep -c .) files" \
    "whose blobs the source lacks (test data)" >&2
}

mkdir -p "$into"
while read -r name commit; do
  src="$(source_of "$name")"
  if [ ! -d "$into/$name/.git" ]; then
    git clone -q --no-checkout "$src" "$into/$name"
  elif ! git -C "$into/$name" cat-file -e "$commit^{commit}" 2>/dev/null; then
    git -C "$into/$name" fetch -q "$src"
  fi
  checkout "$into/$name" "$commit"
  echo "desi_env: $name at $(git -C "$into/$name" describe --tags --always "$commit")"
done <<<"$pins"

path=""
for name in desispec desiutil desitarget desimodel specter gpu_specter; do
  path="$path${path:+:}$into/$name/py"
done
cat >"$into/env.sh" <<EOF
# Written by kspecter's perf/desi_env.sh: DESI's pipeline for kspecter's desispec tests.
export PYTHONPATH="$path\${PYTHONPATH:+:\$PYTHONPATH}"
export KSPECTER_DESISPEC="$into/desispec"
export DESI_LOGLEVEL="\${DESI_LOGLEVEL:-WARNING}"
EOF
echo "desi_env: source $into/env.sh"
