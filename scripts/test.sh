#!/usr/bin/env bash
# The README's test command, in two tiers:
#
#   scripts/test.sh           what CI runs: bootstrap, build (build/, Release,
#                             through ccache), then every test in ctest: unit,
#                             CLI, ONNX Runtime equivalence, ONNX conformance,
#                             and a replay of every fuzz harness's committed
#                             corpus and crash reproducers (fuzz-replay.*).
#   scripts/test.sh --full    adds the sanitizer build (clang, ASan + UBSan +
#                             libFuzzer coverage, build-fuzz/), fresh fuzzing of
#                             every harness (ctest label "fuzz", 30 s each), the
#                             benches' smoke runs (ctest label "bench-smoke") and
#                             the runtime's tests built for aarch64 and run under
#                             qemu-user (scripts/cross_aarch64.sh, build-aarch64/).
#
# Prints the wall time of each phase (bootstrap, configure, build, fuzz, tests)
# at the end. Extra arguments go to the main ctest run (e.g. -R cli).
set -euo pipefail
cd "$(dirname "$0")/.."

full=0
if [ "${1:-}" = "--full" ]; then full=1; shift; fi

phases=()
phase_start=0
start_phase() { phase_start=$(date +%s); echo "== test.sh: $1"; }
end_phase() { phases+=("$(printf '%-10s %5d s' "$1" $(( $(date +%s) - phase_start )))"); }
print_phases() {
  echo "== test.sh: wall time per phase ($([ $full -eq 1 ] && echo full || echo default) tier)"
  printf '   %s\n' "${phases[@]}"
}
trap print_phases EXIT

start_phase bootstrap
if [ $full -eq 1 ]; then bash scripts/bootstrap.sh --full; else bash scripts/bootstrap.sh; fi
end_phase bootstrap

build_options=()
[ $full -eq 1 ] && build_options=(--benches)
start_phase configure
bash scripts/build.sh --configure-only "${build_options[@]}"
end_phase configure

start_phase build
bash scripts/build.sh "${build_options[@]}"
end_phase build

fuzz_status=0
if [ $full -eq 1 ]; then
  start_phase "fuzz build"
  bash scripts/build_fuzz.sh
  end_phase "fuzz build"
  start_phase fuzz
  ctest --test-dir build-fuzz -L '^fuzz$' --output-on-failure -j "$(nproc)" || fuzz_status=$?
  end_phase fuzz
fi

start_phase tests
test_status=0
ctest --test-dir build --output-on-failure --timeout 3000 -j "$(nproc)" "$@" || test_status=$?
end_phase tests

aarch64_status=0
if [ $full -eq 1 ]; then
  start_phase aarch64
  bash scripts/cross_aarch64.sh || aarch64_status=$?
  end_phase aarch64
fi

if [ "$aarch64_status" -ne 0 ]; then
  echo "test.sh: the aarch64 runtime tests failed (scripts/cross_aarch64.sh; build-aarch64/)"
  exit "$aarch64_status"
fi
if [ "$fuzz_status" -ne 0 ]; then
  echo "test.sh: fresh fuzzing found a crash (ctest --test-dir build-fuzz -L fuzz); the inputs are in build-fuzz/fuzz-artifacts/"
  exit "$fuzz_status"
fi
exit "$test_status"
