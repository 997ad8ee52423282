#!/usr/bin/env bash
# Plants violations in a private copy of the source tree and expects each
# check to catch it:
#   - a backward #include (libplan/util including a driver) fails check_layers.py,
#     naming the file and line;
#   - a function of 160 lines fails longest_functions.sh, naming it;
#   - a stage in ZOOPLAN_STAGES without its folder fails the CMake configure;
#   - a stage without its tests/<folder>, and a test folder no stage mirrors,
#     fail check_test_layout.py, naming them;
#   - a stage folder the layout page (docs/layout.md) does not name fails it too.
# The unmodified copy passes both scripts first, so a failure is the plant's.
#   planted_violations.sh SOURCE_DIR PYTHON
set -uo pipefail
src="$1"
py="${2:-python3}"
work="$(mktemp -d "${TMPDIR:-/tmp}/zp_planted.XXXXXX")"
trap 'rm -rf "$work"' EXIT
failures=0
pass() { echo "ok: $*"; }
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

copy="$work/tree"
mkdir -p "$copy"
(cd "$src" && cp -r CMakeLists.txt README.md docs libplan passes drivers tools schemas scripts "$copy/")
# The test layout only: every test folder with its CMakeLists.txt.
(cd "$src" && find tests -type d -name node_modules -prune -o -type d -print) | while read -r d; do
  mkdir -p "$copy/$d"
  [ -f "$src/$d/CMakeLists.txt" ] && cp "$src/$d/CMakeLists.txt" "$copy/$d/"
done

"$py" "$copy/scripts/check_layers.py" "$copy" >"$work/clean.txt" 2>&1 && pass "the unmodified copy follows the stage order" \
  || fail "the unmodified copy fails the include check: $(cat "$work/clean.txt")"
bash "$copy/scripts/longest_functions.sh" "$copy" >"$work/clean_len.txt" 2>&1 && pass "the unmodified copy has no function over the limit" \
  || fail "the unmodified copy fails the length check: $(tail -3 "$work/clean_len.txt")"

# A backward include: the first util source includes a driver header.
victim="libplan/util/csv.cpp"
sed -i '1a #include "drivers/run/run_model.h"' "$copy/$victim"
if "$py" "$copy/scripts/check_layers.py" "$copy" >"$work/planted.txt" 2>&1; then
  fail "a backward include in $victim passed the check"
elif grep -q "^$victim:2: includes drivers/run/run_model.h (stage drivers/run, after libplan/util)" "$work/planted.txt"; then
  pass "a backward include fails the check, naming $victim:2"
else
  fail "the check failed without naming the planted include: $(cat "$work/planted.txt")"
fi
sed -i '2d' "$copy/$victim"

# A function of 160 lines in a pass.
{
  echo "namespace zp { int plantedLongFunction(int x) {"
  for i in $(seq 1 158); do echo "  x += $i;"; done
  echo "  return x; } }"
} >"$copy/passes/select/planted_long.cpp"
if bash "$copy/scripts/longest_functions.sh" "$copy" >"$work/long.txt" 2>&1; then
  fail "a 160-line function passed the length check"
elif grep -q "^160 passes/select/planted_long.cpp:1 plantedLongFunction" "$work/long.txt"; then
  pass "a 160-line function fails the length check, named"
else
  fail "the length check failed without naming the planted function: $(tail -5 "$work/long.txt")"
fi
rm "$copy/passes/select/planted_long.cpp"

# The tests of a stage folder moved away, and a test folder named after no stage.
"$py" "$copy/scripts/check_test_layout.py" "$copy" >"$work/layout_clean.txt" 2>&1 && pass "the unmodified copy's tests mirror the stages" \
  || fail "the unmodified copy fails the test layout check: $(cat "$work/layout_clean.txt")"
mv "$copy/tests/preload" "$copy/tests/preloading"
if "$py" "$copy/scripts/check_test_layout.py" "$copy" >"$work/layout.txt" 2>&1; then
  fail "a stage without its test folder passed the layout check"
elif grep -q "^passes/preload: no tests/preload/CMakeLists.txt" "$work/layout.txt" &&
     grep -q "^tests/preloading: no stage folder of ZOOPLAN_STAGES mirrors it" "$work/layout.txt"; then
  pass "a stage without its test folder and a stray test folder fail the layout check, named"
else
  fail "the layout check failed without naming both: $(cat "$work/layout.txt")"
fi

mv "$copy/tests/preloading" "$copy/tests/preload"

# The layout page loses a stage folder.
# Every mention: the layout names a folder wherever it lists it (passes/, bench/).
sed -i 's#coldstart/#cold/#g' "$copy/docs/layout.md"
grep -q "cold/ (cold problem" "$copy/docs/layout.md" || fail "could not plant the layout change (layout text changed?)"
if "$py" "$copy/scripts/check_test_layout.py" "$copy" >"$work/readme.txt" 2>&1; then
  fail "a stage missing from the layout page passed the layout check"
elif grep -q "^passes/coldstart: docs/layout.md does not name coldstart/" "$work/readme.txt"; then
  pass "a stage missing from the layout page fails the layout check, named"
else
  fail "the layout check failed without naming the stage: $(cat "$work/readme.txt")"
fi

# A stage named in CMake whose folder does not exist: a configure error.
sed -i 's#  tools)#  passes/no_such_stage\n  tools)#' "$copy/CMakeLists.txt"
grep -q "passes/no_such_stage" "$copy/CMakeLists.txt" || fail "could not plant the stage (ZOOPLAN_STAGES changed shape?)"
if cmake -S "$copy" -B "$work/build" -G Ninja >"$work/configure.txt" 2>&1; then
  fail "a stage without its folder configured"
elif tr -s ' \n' ' ' <"$work/configure.txt" | grep -q "ZOOPLAN_STAGES names passes/no_such_stage, which has no passes/no_such_stage/CMakeLists.txt"; then
  pass "a stage without its folder is a configure error, naming it"
else
  fail "configure failed for another reason: $(grep -m3 -i error "$work/configure.txt")"
fi

[ "$failures" -eq 0 ] && echo "all planted violations caught" || echo "$failures check(s) failed"
exit $((failures > 0))
