#!/usr/bin/env bash
# The README's test command: bootstrap, build, run every test (ctest). When
# clang++ is installed (scripts/bootstrap.sh installs it), also builds the fuzz
# harnesses (build-fuzz/) and runs each for a short while (ctest label "fuzz",
# ZP_FUZZ_SECONDS, 30 s each); without clang that step is skipped with a
# notice. The main suite runs last, so its summary ends the output.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/bootstrap.sh
bash scripts/build.sh
fuzz_status=0
if command -v clang++ >/dev/null; then
  t0=$(date +%s)
  { bash scripts/build_fuzz.sh && ctest --test-dir build-fuzz -L '^fuzz$' --output-on-failure -j "$(nproc)"; } || fuzz_status=$?
  echo "test.sh: fuzz harnesses built and run in $(( $(date +%s) - t0 )) s"
else
  echo "test.sh: clang++ not found: skipping the fuzz tests (scripts/bootstrap.sh installs clang)"
fi
ctest --test-dir build --output-on-failure --timeout 3000 -j "$(nproc)" "$@"
if [ "$fuzz_status" -ne 0 ]; then
  echo "test.sh: the fuzz tests failed (ctest --test-dir build-fuzz -L fuzz); crash inputs are in build-fuzz/fuzz-artifacts/"
  exit "$fuzz_status"
fi
