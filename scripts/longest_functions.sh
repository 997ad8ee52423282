#!/usr/bin/env bash
# Lists the longest functions (lines from signature to closing brace, lambdas
# inside counted with their function) in libplan/, passes/ and drivers/, and
# fails when one is longer than the limit.
#   scripts/longest_functions.sh [--max LINES] [--top N] [SOURCE_ROOT]
# Needs universal-ctags (scripts/bootstrap.sh installs it).
set -euo pipefail
max=150
top=15
while [ $# -gt 0 ]; do
  case "$1" in
    --max) max="$2"; shift 2 ;;
    --top) top="$2"; shift 2 ;;
    *) break ;;
  esac
done
root="${1:-$(cd "$(dirname "$0")/.." && pwd)}"
cd "$root"
if ! ctags --version 2>/dev/null | grep -q "Universal Ctags"; then
  echo "longest_functions: universal-ctags is not installed (scripts/bootstrap.sh installs it)" >&2
  exit 2
fi
list="$(ctags -R --languages=C++ --langmap=C++:+.h --kinds-C++=f --fields=+ne -o - libplan passes drivers |
  awk -F'\t' '{
      line = ""; end = "";
      for (i = 4; i <= NF; i++) {
        if ($i ~ /^line:/) line = substr($i, 6);
        if ($i ~ /^end:/) end = substr($i, 5);
      }
      if (line != "" && end != "") printf "%d %s:%d %s\n", end - line + 1, $2, line, $1;
    }' | sort -k1,1nr -k2,2)"
if [ -z "$list" ]; then
  echo "longest_functions: ctags found no functions under libplan/ passes/ drivers/" >&2
  exit 2
fi
echo "longest functions (lines, file:line, name); limit $max:"
sed -n "1,${top}p" <<<"$list"
over="$(awk -v max="$max" '$1 > max' <<<"$list")"
if [ -n "$over" ]; then
  echo "over $max lines:"
  printf '%s\n' "$over"
  exit 1
fi
echo "none over $max lines"
