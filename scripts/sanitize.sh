#!/usr/bin/env bash
# The sanitizer suite: builds zooplan with AddressSanitizer + UndefinedBehaviorSanitizer
# (-DZP_SANITIZE=ON, -O1 with line tables, assertions on) and runs every test under them:
#   scripts/sanitize.sh            GCC, into build-san/
#   scripts/sanitize.sh --clang    clang++, into build-san-clang/
# Extra arguments go to ctest (e.g. -R cli). Any ASan report or UBSan finding
# fails its test. Prints how long configure+build and the tests took.
set -euo pipefail
cd "$(dirname "$0")/.."
dir=build-san
compiler=()
if [ "${1:-}" = "--clang" ]; then
  dir=build-san-clang
  compiler=(-DCMAKE_CXX_COMPILER=clang++)
  shift
fi
bash scripts/bootstrap.sh >/dev/null
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
generator=()
command -v ninja >/dev/null && generator=(-G Ninja)
t0=$(date +%s)
cmake -S . -B "$dir" "${generator[@]}" -DZP_SANITIZE=ON -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_FLAGS_RELEASE="-O1 -g1" \
  "${compiler[@]}" "${launcher[@]}" >/dev/null
cmake --build "$dir" --parallel "$(nproc)"
t1=$(date +%s)
# Reports go to stderr with a stack; leaks are checked at exit (the default).
export ASAN_OPTIONS="${ASAN_OPTIONS:-strict_string_checks=1:detect_stack_use_after_return=1:check_initialization_order=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1}"
status=0
ctest --test-dir "$dir" --output-on-failure --timeout 3000 -j "$(nproc)" "$@" || status=$?
t2=$(date +%s)
echo "sanitize.sh: $dir: configure+build $((t1 - t0)) s, tests $((t2 - t1)) s, ctest exit $status"
exit "$status"
