#!/usr/bin/env bash
# The stitched and profiled zoos that several CLI suites share, made once per
# ctest run (FIXTURES_SETUP, tests/cli/CMakeLists.txt) and copied by each suite
# into its own work directory (lib.sh: use_fixture).
#   fixture.sh BIN SRC NAME OUT
#     digits     testdata/digits:    OUT/st (zoo-stitch)
#     multitask  testdata/multitask: OUT/st, and OUT/prof (zoo-profile --repeat 5
#                --warmup 1 --latency-validation 4)
# OUT is replaced whole: built beside it, then renamed into place.
set -euo pipefail
BIN="$1"; SRC="$2"; NAME="$3"; OUT="$4"
case "$NAME" in
  digits) profile_options=() ;;
  multitask) profile_options=(--repeat 5 --warmup 1 --latency-validation 4) ;;
  *) echo "fixture.sh: unknown fixture '$NAME' (known: digits, multitask)" >&2; exit 2 ;;
esac
mkdir -p "$(dirname "$OUT")"
tmp="$(mktemp -d "$OUT.XXXXXX")"
trap 'rm -rf "$tmp"' EXIT
"$BIN/zoo-stitch" "$SRC/testdata/$NAME/zoo.json" -o "$tmp/st" >/dev/null
if [ ${#profile_options[@]} -gt 0 ]; then
  "$BIN/zoo-profile" "$tmp/st" -o "$tmp/prof" "${profile_options[@]}" >/dev/null
fi
rm -rf "$OUT"
mv "$tmp" "$OUT"
trap - EXIT
