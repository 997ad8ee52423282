#!/usr/bin/env bash
# The README's test command: bootstrap, build, run every test (ctest).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/bootstrap.sh
bash scripts/build.sh
ctest --test-dir build --output-on-failure --timeout 3000 -j "$(nproc)" "$@"
