#!/usr/bin/env bash
# Checks the code against the rooms and arrows of docs/architecture.md: every #include of every
# C++ file under include/kspecter/<room>/, src/<room>/ and python/ must follow an arrow of the
# doc's "arrows" table, third-party headers must stay in the rooms of its "headers" table, no
# room may reach into another's private headers (src/<room>/, include/kspecter/<room>/impl/ or
# detail/), and the rooms of its "no kernels" list launch no Kokkos kernel. The tables are
# read from the doc itself (between `<!-- check-architecture: ... -->` markers), so the doc
# is the rule: change the arrow there, and the check follows.
#
# Usage: cmake/check-architecture.sh [ROOT]   (ROOT: the source tree, default this checkout)
# Exit status: 0 all files follow the doc, 1 violations (listed as file:line: problem),
# 2 the doc or its tables cannot be read.
set -euo pipefail
root="${1:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}"
root="$(cd "$root" && pwd)"
doc="$root/docs/architecture.md"
[ -f "$doc" ] || { echo "check-architecture: $doc not found" >&2; exit 2; }

# The rows of one marked table (or list) as "first-cell-word word word ...": the backticked words of each
# cell, so that `| \`extract\` | \`solve\`, \`psf\`, \`core\` |` reads "extract solve psf core".
table() {
  awk -v name="$1" '
    $0 ~ "<!-- check-architecture: " name " -->" { on = 1; next }
    on && /<!-- check-architecture: end -->/ { exit }
    on && /^(\||- )/ {
      line = $0; out = ""
      while (match(line, /`[^`]+`/)) {
        out = out (out == "" ? "" : " ") substr(line, RSTART + 1, RLENGTH - 2)
        line = substr(line, RSTART + RLENGTH)
      }
      if (out != "") print out
    }' "$doc"
}

declare -A allowed=()  # room -> " target target ... " (the arrows out of it)
while read -r room targets; do
  allowed[$room]=" ${targets:-} "
done < <(table arrows)
[ ${#allowed[@]} -gt 0 ] || { echo "check-architecture: no arrows table in $doc" >&2; exit 2; }

declare -a header_pattern=() header_rooms=()  # third-party header (prefix when it ends in / _ *)
while read -r pattern rooms; do
  header_pattern+=("$pattern")
  header_rooms+=(" ${rooms:-} ")
done < <(table headers)

no_kernels=" $(table no-kernels | tr '\n' ' ') "

# The room of a path under ROOT into $ROOM ("" when the path is in none). No subshells: the
# check runs once per include.
room_of() {
  ROOM=""
  case "$1" in
    include/kspecter/*/*) ROOM="${1#include/kspecter/}" ;;
    src/*/*) ROOM="${1#src/}" ;;
    python/*) ROOM=python; return 0 ;;
    *) return 0 ;;
  esac
  ROOM="${ROOM%%/*}"
}

# Whether a path under ROOT is private to its room: a source-folder header or an impl/ or
# detail/ header of the public tree.
is_private() {
  case "$1" in
    src/*) return 0 ;;
    include/kspecter/*/impl/* | include/kspecter/*/detail/*) return 0 ;;
    *) return 1 ;;
  esac
}

# "a/b/../c/./d" -> "a/c/d", into $NORM.
normalize() {
  local -a parts=() out=()
  local p
  IFS=/ read -r -a parts <<<"$1"
  for p in "${parts[@]}"; do
    case "$p" in
      "" | .) ;;
      ..) [ ${#out[@]} -gt 0 ] && unset 'out[${#out[@]}-1]' ;;
      *) out+=("$p") ;;
    esac
  done
  local IFS=/
  NORM="${out[*]}"
}

problems=()
complain() { problems+=("$1: $2"); }

# Checks one include of a file in `room` whose target is the path `target` under ROOT.
check_room_include() {  # where room target spelled
  local where="$1" room="$2" target="$3" spelled="$4"
  room_of "$target"
  local to="$ROOM"
  [ -n "$to" ] || return 0
  if [ -z "${allowed[$to]+x}" ]; then
    complain "$where" "$spelled: room '$to' is not in docs/architecture.md"
    return 0
  fi
  [ "$to" = "$room" ] && return 0
  if is_private "$target"; then
    complain "$where" "$spelled is private to room '$to' (rooms use each other's public headers only)"
  elif [[ "${allowed[$room]}" != *" $to "* ]]; then
    complain "$where" "$spelled: the arrow $room -> $to is not in docs/architecture.md"
  fi
}

check_external() {  # where room header
  local where="$1" room="$2" header="$3" i p
  for i in "${!header_pattern[@]}"; do
    p="${header_pattern[$i]}"
    case "$p" in
      */ | *_) [[ "$header" == "$p"* ]] || continue ;;
      *\*) [[ "$header" == "${p%\*}"* ]] || continue ;;
      *) [ "$header" = "$p" ] || continue ;;
    esac
    if [[ "${header_rooms[$i]}" != *" $room "* ]]; then
      complain "$where" "<$header> belongs to room(s)${header_rooms[$i]% } only (docs/architecture.md)"
    fi
    return 0
  done
}

cd "$root"
files=()
while IFS= read -r -d '' file; do files+=("${file#./}"); done < <(
  find ./include/kspecter ./src ./python \
    \( -type d \( -name 'build*' -o -name '_build' -o -name '__pycache__' \
                  -o -name '*.egg-info' \) -prune \) -o \
    -type f \( -name '*.hpp' -o -name '*.h' -o -name '*.cpp' -o -name '*.cc' \
               -o -name '*.cu' -o -name '*.inl' \) -print0 2>/dev/null | sort -z)
[ ${#files[@]} -gt 0 ] || { echo "check-architecture: no source files under $root" >&2; exit 2; }

declare -A room_of_file=()
checked=()  # the files in a room of the doc, in path order
for rel in "${files[@]}"; do
  room_of "$rel"
  if [ -z "$ROOM" ]; then
    complain "$rel" "outside every room (files live in include/kspecter/<room>/, src/<room>/, python/)"
  elif [ -z "${allowed[$ROOM]+x}" ]; then
    complain "$rel" "room '$ROOM' is not in docs/architecture.md (add it, with its arrows)"
  else
    room_of_file[$rel]="$ROOM"
    checked+=("$rel")
  fi
done
[ ${#checked[@]} -gt 0 ] || checked=(/dev/null)

# Kernel launches in the rooms that make none.
while IFS=: read -r rel line _; do
  room="${room_of_file[$rel]:-}"
  [[ -n "$room" && "$no_kernels" == *" $room "* ]] || continue
  complain "$rel:$line" "room '$room' launches no kernel (docs/architecture.md)"
done < <(grep -HnE '(^|[^[:alnum:]_])parallel_(for|reduce|scan)[[:space:]]*\(' "${checked[@]}" || true)

# Every include of every file.
include_re='^[[:space:]]*#[[:space:]]*include[[:space:]]*([<"])([^>"]+)[>"]'
nincludes=0
while IFS=: read -r rel line text; do
  [[ "$text" =~ $include_re ]] || continue
  nincludes=$((nincludes + 1))
  room="${room_of_file[$rel]}"
  quote="${BASH_REMATCH[1]}" name="${BASH_REMATCH[2]}" where="$rel:$line"
  if [ "$quote" = '"' ]; then
    # A quoted include: the file beside this one, or a public header spelled with quotes.
    normalize "${rel%/*}/$name"
    if [ -f "$NORM" ]; then
      check_room_include "$where" "$room" "$NORM" "\"$name\""
      continue
    fi
    # Not beside the file: a header the build generates (checked nowhere), unless it is
    # spelled like a public header.
    [[ "$name" == kspecter/* ]] || continue
  fi
  if [[ "$name" == kspecter/*/* ]]; then
    check_room_include "$where" "$room" "include/$name" "<$name>"
  else
    check_external "$where" "$room" "$name"
  fi
done < <(grep -HnE '^[[:space:]]*#[[:space:]]*include[[:space:]]*[<"]' "${checked[@]}" || true)

if [ ${#problems[@]} -gt 0 ]; then
  echo "check-architecture: ${#problems[@]} problem(s) against docs/architecture.md:" >&2
  printf '  %s\n' "${problems[@]}" >&2
  exit 1
fi
echo "check-architecture: ${#files[@]} files, $nincludes includes in ${#allowed[@]} rooms follow docs/architecture.md"
